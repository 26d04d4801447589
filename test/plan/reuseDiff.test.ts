// diffPlan's `reusable` hook (issue 31): a task with no record here whose request was paid
// elsewhere is `=` with its source's note and costs nothing; its downstream tasks are
// expanded from the source's results (so they can be reused too); without the hook, or
// when it answers nothing, the plan is the one it was.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { diffPlan } from "../../src/plan/diffPlan.js";
import { loadManifest } from "../../src/manifest/loadManifest.js";
import type { LoadedManifest } from "../../src/manifest/LoadedManifest.js";
import type { PlannedTask } from "../../src/manifest/PlannedTask.js";
import type { LockTask } from "../../src/state/LockFile.js";
import { formatPlan } from "../../src/plan/formatPlan.js";
import { tempManifest } from "../manifest/tempManifest.js";

const yaml = `version: 1
name: p
prices: { currency: USD, image: { "1k": 0.25 }, video: { "720p": 0.1 } }
jobs:
  pics:
    kind: image
    matrix: { c: [red, green] }
    prompt: "a {{ c }} mug"
  clips:
    kind: video
    for_each: pics.outputs
    first_frame: "{{ item.url }}"
    prompt: "it turns"
`;

const load = async (): Promise<LoadedManifest> => {
  const m = tempManifest(yaml);
  try {
    return await loadManifest(m.file);
  } finally {
    m.cleanup();
  }
};

const paidRecord = (t: PlannedTask, sha: string): LockTask => ({
  job: t.job,
  kind: t.kind,
  vars: t.vars,
  dir: t.dir,
  request_hash: t.requestHash,
  take: t.take,
  attempt: t.attempt,
  state: "downloaded",
  updated_at: 1,
  outputs: [{ type: "image", index: 0, variant: "main", path: `${t.dir}/image-1.png`, size: 1, sha256: sha }],
  billing: [],
});

test("a reused task is = with its note, costs nothing, is counted apart; its downstream tasks are expanded and asked too", async () => {
  const m = await load();
  const red = m.tasks.find((t) => t.vars["c"] === "red")!;
  const asked: string[] = [];
  const plan = diffPlan(m, undefined, {
    reusable: (t) => {
      asked.push(t.job);
      return t.id === red.id ? { reuse: { note: "reused: same request as x.yaml pics c=red", record: paidRecord(t, "a".repeat(64)) } } : undefined;
    },
  });
  const e = plan.entries.find((x) => x.id === red.id)!;
  assert.is(e.mark, "=");
  assert.is(e.reused, true);
  assert.is(e.note, "reused: same request as x.yaml pics c=red");
  assert.is(plan.reused, 1);
  // To pay for: the green still (0.25) and the clip over the reused red still, now planned (5 s at 0.1); the red still nothing.
  assert.is(plan.estimate["USD"], "0.75");
  // The red still's clip exists now (from the source's result) and was asked about.
  assert.ok(plan.entries.some((x) => x.job === "clips" && x.mark === "+"), "the clip over the reused still is planned");
  assert.is(asked.filter((j) => j === "clips").length, 1);
  const text = formatPlan(plan, { manifest: "m.yaml", lockfile: "m.lock.json" });
  assert.match(text, "reused: same request as x.yaml pics c=red");
  assert.match(text, "reused 1:");
});

test("an answer `why` stays + with the reason; no hook or no answer: the plan as before", async () => {
  const m = await load();
  const without = diffPlan(m, undefined);
  const silent = diffPlan(m, undefined, { reusable: () => undefined });
  assert.equal(JSON.stringify(silent), JSON.stringify(without));
  assert.is(without.reused, undefined);
  const why = diffPlan(m, undefined, { reusable: () => ({ why: "not reused (files gone): same request as x.yaml" }) });
  assert.ok(why.entries.filter((e) => e.mark === "+").every((e) => e.note === "not reused (files gone): same request as x.yaml"));
  assert.equal(why.total, without.total);
});

test.run();
