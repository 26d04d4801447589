// Failures a person can act on (src/report/failureGroups.ts): grouped by reason, named by
// job and matrix values, earlier attempts that were retried left out, and the downstream
// work that will not be made counted through chains of for_each jobs.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { formatFailures, groupFailures } from "../../src/report/failureGroups.js";
import type { LockFile, LockTask } from "../../src/state/LockFile.js";

const task = (job: string, sku: string, style: string, extra: Partial<LockTask>): LockTask => ({
  job,
  kind: "image",
  vars: { product: { sku }, style },
  dir: `${job}/${sku}_${style}`,
  request_hash: "h",
  take: 1,
  attempt: 1,
  state: "downloaded",
  updated_at: 1,
  outputs: [],
  billing: [],
  ...extra,
});

const risk = { code: 1301, message: "content risk\n prompt", at: 1 };
const lock: LockFile = {
  lockfile_version: 1,
  name: "cat",
  tasks: {
    "cat-stills-a": task("stills", "BTL-STL", "studio", { state: "failed", error: risk }),
    "cat-stills-b": task("stills", "BTL-STL", "street", { state: "failed", error: risk }),
    "cat-stills-c": task("stills", "MUG-01", "studio", { state: "failed", error: { message: "timeout", at: 1 } }),
    // Failed once, then a second attempt succeeded: history, not a failure.
    "cat-stills-d1": task("stills", "MUG-01", "street", { state: "failed", error: risk }),
    "cat-stills-d2": task("stills", "MUG-01", "street", { attempt: 2 }),
    "cat-reels-e": task("reels", "MUG-01", "studio", { state: "rejected", error: { code: 1201, message: "bad ratio", at: 1 } }),
  },
};

test("grouped by reason (largest first, then by first task id), each task named by job and matrix values; retried attempts left out", () => {
  const f = groupFailures(lock);
  assert.equal(
    f.groups.map((g) => [g.reason, g.code, g.tasks.map((t) => t.what)]),
    [
      ["content risk prompt", 1301, ["stills product=BTL-STL style=studio", "stills product=BTL-STL style=street"]],
      ["bad ratio", 1201, ["reels product=MUG-01 style=studio"]],
      ["timeout", undefined, ["stills product=MUG-01 style=studio"]],
    ],
  );
});

test("downstream work that will not be made: 2 stills each per failed still, then 1 reel per still; retries and rejections excluded", () => {
  const shape = {
    downstream: [
      { job: "clips", upstream: "stills", perUpstreamTask: 2 },
      { job: "reels", upstream: "clips", perUpstreamTask: 1 },
    ],
    retryFailed: { stills: 0 },
  };
  const f = groupFailures(lock, shape);
  // 3 stills failed for good -> 6 clips -> 6 reels; the rejected reel is sent again, so it is not lost.
  assert.equal(f.notMade, { clips: 6, reels: 6 });
  // With a retry left the next run tries the timeout again, not the content-risk failures
  // (the engine's rule, retryRule.ts): those two stills' downstream work is still not made.
  const retried = groupFailures(lock, { ...shape, retryFailed: { stills: 1 } });
  assert.equal(retried.notMade, { clips: 4, reels: 4 });
  assert.ok(retried.groups[0]!.tasks.every((t) => !t.again), "content risk, no retry_content_risk");
  const all = groupFailures(lock, { ...shape, retryFailed: { stills: 1 }, retryContentRisk: { stills: true } });
  assert.equal(all.notMade, {}, "with retry_content_risk too, the next run tries every one again: nothing is lost yet");
  assert.ok(all.groups[0]!.tasks.every((t) => t.again));
  const text = formatFailures(f).join("\n");
  assert.match(text, "  content risk prompt (code 1301): 2 task(s)\n    stills product=BTL-STL style=studio  cat-stills-a\n");
  assert.match(text, "reels product=MUG-01 style=studio  cat-reels-e  (rejected, nothing was created; the next run sends it again)");
  assert.match(text, "  6 clips task(s) will not be made (their upstream task failed)\n  6 reels task(s) will not be made (their upstream task failed)");
});

test.run();
