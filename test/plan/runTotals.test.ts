// What a run starts from, read off the plan: per job every task expected (recorded, to
// create, downstream ones waiting), how many are done, in flight, failed for good, to
// create; a resume only when the lockfile recorded something; the words of both lines.

import { test } from "uvu";
import * as assert from "uvu/assert";
import type { PlanEntry, PlanResult } from "../../src/plan/diffPlan.js";
import { describeResume, describeTotals, runTotals, startBuckets } from "../../src/plan/runTotals.js";
import { newWalk } from "../../src/plan/attempts.js";
import type { PlannedTask } from "../../src/manifest/PlannedTask.js";

const counts = () => ({ "+": 0, "=": 0, "~": 0, "-": 0, "…": 0, inFlight: 0 });
const plan = (entries: PlanEntry[]): PlanResult => ({
  manifest: "m",
  lockfile: "l",
  lockfileFound: true,
  entries,
  jobs: { stills: counts(), reels: counts() },
  total: counts(),
  estimate: {},
  waitingEstimate: {},
});
const e = (mark: PlanEntry["mark"], job: string, extra: Partial<PlanEntry> = {}): PlanEntry => ({ mark, id: `${job}-${Math.random()}`, job, vars: {}, ...extra });

test("a first run: everything to create, downstream included; no resume", () => {
  const t = runTotals(plan([e("+", "stills"), e("+", "stills"), e("…", "reels", { count: 4 })]));
  assert.is(t.total, 6);
  assert.equal(t.jobs["reels"], { total: 4, done: 0, inFlight: 0, failed: 0, toCreate: 4 });
  assert.is(t.resume, undefined);
  assert.is(describeTotals(t), "6 tasks: 2 stills, 4 reels");
});

test("a rerun: done, in flight at the service, failed for good, to create (retries and waiting downstream); orphans not counted", () => {
  const t = runTotals(
    plan([
      e("=", "stills", { state: "downloaded" }),
      e("=", "stills", { state: "processing", inFlight: true }),
      e("=", "stills", { state: "failed", note: "failed" }),
      e("+", "stills", { state: "failed", attempt: 2 }),
      e("=", "reels", { state: "succeeded" }),
      e("…", "reels", { count: 3 }),
      e("-", "reels", { state: "downloaded" }),
    ]),
  );
  assert.is(t.total, 8);
  assert.equal(t.resume, { done: 1, inFlight: 2, failed: 1, toCreate: 4 });
  assert.is(describeResume(t.resume!), "resuming: 1 done, 2 in flight at the service, 4 to create, 1 failed");
});

test("against a fresh service (an emulated run) tasks in flight are created again: to create, not in flight", () => {
  const t = runTotals(plan([e("=", "stills", { state: "submitted", inFlight: true }), e("=", "stills", { state: "downloaded" })]), true);
  assert.equal(t.resume, { done: 1, inFlight: 0, failed: 0, toCreate: 1 });
});

test("a run of a chosen part counts its work: left-out work is not counted, left-out tasks done or failed stay where they are", () => {
  const renewed = e("+", "stills", { state: "failed", attempt: 2 });
  const notRenewed = e("=", "stills", { state: "failed", note: "failed" });
  const planned = e("+", "stills", { state: "planned" });
  const inFlight = e("=", "stills", { state: "processing", inFlight: true });
  const waiting = e("…", "reels", { count: 3 });
  const all = plan([e("=", "stills", { state: "downloaded" }), renewed, notRenewed, planned, inFlight, waiting]);
  const t = runTotals(all, false, (x) => x === renewed);
  assert.equal(t.resume, { done: 1, inFlight: 0, failed: 1, toCreate: 1 });
  assert.is(t.total, 3);
  assert.equal(t.jobs["reels"], { total: 0, done: 0, inFlight: 0, failed: 0, toCreate: 0 });
  assert.equal(runTotals(all).resume, { done: 1, inFlight: 1, failed: 1, toCreate: 5 }, "without a selection: everything");
});

test("a task made again after its downloaded attempt (--recreate-lost) stays counted done until made; the view's start buckets follow the same rule per position", () => {
  const first = { id: "s-1", job: "stills", attempt: 1, dir: "stills/red", vars: {} } as unknown as PlannedTask;
  const second = { ...first, id: "s-2", attempt: 2 } as PlannedTask;
  const remade = { ...newWalk(first), task: second, why: "recreate" as const, walked: ["s-1"], before: "done" as const };
  const p = plan([
    e("+", "stills", { id: "s-2", dir: "stills/red", state: "downloaded", task: second, walk: remade }),
    e("=", "stills", { dir: "stills/green", state: "processing", inFlight: true }),
    e("=", "stills", { dir: "stills/blue", state: "failed" }),
    e("+", "stills", { dir: "stills/pink", task: first, walk: newWalk(first) }),
    // A planned record after a downloaded attempt (an interrupted --recreate-lost run): to create.
    e("+", "stills", { dir: "stills/grey", state: "planned", walk: { ...remade, record: { state: "planned" } as never } }),
  ]);
  assert.equal(runTotals(p).jobs["stills"], { total: 5, done: 1, inFlight: 1, failed: 1, toCreate: 2 });
  const at = startBuckets(p);
  assert.equal(
    ["red", "green", "blue", "pink", "grey", "none"].map((c) => at("stills", `stills/${c}`)),
    ["done", "inFlight", "failed", undefined, undefined, undefined],
  );
  // A fresh service has none of the tasks in flight: to create, as the totals count it.
  assert.is(startBuckets(p, true)("stills", "stills/green"), undefined);
  assert.is(runTotals(p, true).jobs["stills"]!.toCreate, 3);
});

test.run();
