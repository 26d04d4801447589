// What a run starts from, read off the plan: per job every task expected (recorded, to
// create, downstream ones waiting), how many are done, in flight, failed for good, to
// create; a resume only when the lockfile recorded something; the words of both lines.

import { test } from "uvu";
import * as assert from "uvu/assert";
import type { PlanEntry, PlanResult } from "../../src/plan/diffPlan.js";
import { describeResume, describeTotals, runTotals } from "../../src/plan/runTotals.js";

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

test.run();
