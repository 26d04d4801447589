// Which attempt a run follows when it is back at a service where attempts were abandoned
// (issue 27, item 2; src/run/serviceCheck.ts `abandonedHere`), pure: the latest attempt
// abandoned here that still has something to give here is taken up (never made again)
// when the task has no current attempt; every other attempt abandoned here in flight has
// its charge learnt. Plus the refusal naming the tasks paid at the run's service, and the
// plan (diffPlan) and record rules that keep a taken-up attempt the latest.

import { test } from "uvu";
import * as assert from "uvu/assert";
import { abandonedHere, abandonRecord, checkService, EMULATOR_SERVICE, takeUpRecord } from "../../src/run/serviceCheck.js";
import { replacedByEarlier, type LockTask, type TaskState } from "../../src/state/LockFile.js";
import { task } from "../state/lockTask.js";

const A = "https://api-a.example.com";
const B = "https://api-b.example.com";

/** Attempts of one task (same job, folder, take), by id `x<attempt>`. */
const attempt = (n: number, state: TaskState, abandonedAt?: string, more: Partial<LockTask> = {}): [string, LockTask] => [
  `x${n}`,
  task(0, { attempt: n, state, ...(state === "planned" ? {} : { task_id: `t${n}` }), ...(abandonedAt ? { abandoned: { service: abandonedAt, at: 5 } } : {}), ...more }),
];

test("A to B and back to A: the attempt made at A is followed, the one at B names it; nothing is learnt apart", () => {
  for (const state of ["submitting", "submitted", "processing", "succeeded"] as const) {
    const recs = new Map([attempt(1, state, A, { superseded_by: "x2" }), attempt(2, "processing", B)]);
    assert.equal(abandonedHere(recs, A), { takeUp: [{ resume: "x1", replaces: ["x2"] }], learn: [] }, state);
  }
});

test("a task with a current attempt is never taken up again: its attempts abandoned here in flight have their charges learnt", () => {
  for (const current of ["downloaded", "processing", "submitting", "succeeded"] as const) {
    const recs = new Map([attempt(1, "processing", A, { superseded_by: "x2" }), attempt(2, current)]);
    assert.equal(abandonedHere(recs, A), { takeUp: [], learn: ["x1"] }, current);
  }
  // Finished, or never created (only planned or refused): nothing to learn.
  const done = new Map([attempt(1, "succeeded", A), attempt(2, "downloaded"), attempt(3, "planned", A), attempt(4, "rejected", A)]);
  assert.equal(abandonedHere(done, A), { takeUp: [], learn: [] });
});

test("the latest attempt abandoned here is taken up; earlier ones here have their charges learnt; planned or refused later attempts are replaced too", () => {
  const recs = new Map([
    attempt(1, "processing", A),
    attempt(2, "processing", B),
    attempt(3, "submitted", A),
    attempt(4, "processing", B),
    attempt(5, "planned"),
    attempt(6, "rejected"),
  ]);
  assert.equal(abandonedHere(recs, A), { takeUp: [{ resume: "x3", replaces: ["x4", "x5", "x6"] }], learn: ["x1"] });
  // At B: x4 is the latest abandoned there; x2 is learnt.
  assert.equal(abandonedHere(recs, B), { takeUp: [{ resume: "x4", replaces: ["x5", "x6"] }], learn: ["x2"] });
});

test("nothing abandoned here, another service, or the in-process emulator (a new one every run): nothing taken up", () => {
  const recs = new Map([attempt(1, "processing", A), attempt(2, "processing", B)]);
  assert.equal(abandonedHere(recs, "https://api-c.example.com"), { takeUp: [], learn: [] });
  assert.equal(abandonedHere(new Map([attempt(1, "processing", EMULATOR_SERVICE)]), EMULATOR_SERVICE), { takeUp: [], learn: [] });
  assert.equal(abandonedHere(new Map(), A), { takeUp: [], learn: [] });
});

test("other tasks (other folder, job or take) are separate: each is decided on its own", () => {
  const other = (n: number, state: TaskState, at?: string): [string, LockTask] => [`y${n}`, { ...attempt(n, state, at)[1], dir: "job/other" }];
  const recs = new Map([attempt(1, "processing", A), attempt(2, "processing", B), other(1, "processing", A), other(2, "downloaded")]);
  assert.equal(abandonedHere(recs, A), { takeUp: [{ resume: "x1", replaces: ["x2"] }], learn: ["y1"] });
});

test("a taken-up record is current again, nothing else changed; the replaced attempt says so", () => {
  const [, rec] = attempt(1, "succeeded", A, { superseded_by: "x2", billing: [{ charge_type: "cash", amount: "0.024" }] });
  const up = takeUpRecord(rec, 9_000_000_000_000);
  assert.is(up.abandoned, undefined);
  assert.is(up.superseded_by, undefined);
  const { abandoned: _a, superseded_by: _s, updated_at: _u, ...history } = rec;
  const { updated_at: _u2, ...after } = up;
  assert.equal(after, history);
  const [, later] = attempt(2, "processing", B, { superseded_by: "x1" });
  assert.ok(replacedByEarlier(later, "x1"));
  assert.not.ok(replacedByEarlier(later, "x3"));
  assert.not.ok(replacedByEarlier({ ...later, abandoned: undefined }, "x1"), "only an abandoned attempt is replaced by an earlier one");
});

test("the refusal to switch names the tasks paid at the run's service (abandoned there before), and says a switch follows them", () => {
  // The lockfile's service is B (x2 in flight there); x1 was abandoned at A and finished there.
  const recs = new Map([attempt(1, "succeeded", A, { superseded_by: "x2" }), attempt(2, "processing")]);
  const refused = checkService({ recorded: B, current: A, records: recs, switchAllowed: false, lockfile: "/p/m.lock.json" });
  assert.is(refused._tag, "Refuse");
  const message = (refused as { message: string }).message;
  assert.match(message, "x1");
  assert.match(message, `created at ${A} before`);
  assert.match(message, "followed and downloaded here, not created again");
  // Nothing abandoned at A: the refusal says nothing of it.
  const plain = checkService({ recorded: B, current: A, records: new Map([attempt(2, "processing")]), switchAllowed: false, lockfile: "/p/m.lock.json" });
  assert.not.match((plain as { message: string }).message, "followed and downloaded here");
  // The switch itself: the attempt at B is abandoned there; then x1 is taken up.
  const switched = checkService({ recorded: B, current: A, records: recs, switchAllowed: true, lockfile: "/p/m.lock.json" });
  assert.equal(switched._tag === "Switch" ? switched.abandon : undefined, ["x2"]);
  const after = new Map(recs);
  after.set("x2", abandonRecord(recs.get("x2")!, B, 6));
  assert.equal(abandonedHere(after, A).takeUp, [{ resume: "x1", replaces: ["x2"] }]);
});

test("a later attempt that failed (or was refused) at another service does not stand for the task: the one paid here is taken up, never made again", () => {
  // The review's repro: x1 finished (paid) at A and abandoned there, x2 made at B failed there.
  for (const state of ["submitting", "submitted", "processing", "succeeded"] as const) {
    const recs = new Map([attempt(1, state, A, { superseded_by: "x2" }), attempt(2, "failed", undefined, { error: { code: 1500, message: "boom", at: 4 } })]);
    assert.equal(abandonedHere(recs, A), { takeUp: [{ resume: "x1", replaces: ["x2"] }], learn: [] }, state);
    // Back at A with B's record as the lockfile's: nothing unfinished at B, so no switch is needed; the run still takes x1 up.
    assert.equal(checkService({ recorded: B, current: A, records: recs, switchAllowed: false, lockfile: "/p/m.lock.json" })._tag, "Record", state);
  }
  // Failed attempts and one abandoned at B, a refused one: all replaced.
  const mixed = new Map([attempt(1, "processing", A), attempt(2, "failed"), attempt(3, "processing", B), attempt(4, "failed"), attempt(5, "rejected")]);
  assert.equal(abandonedHere(mixed, A), { takeUp: [{ resume: "x1", replaces: ["x2", "x3", "x4", "x5"] }], learn: [] });
  // A failed attempt beside a later one that stands (downloaded at B): nothing taken up, x1's charge learnt.
  const done = new Map([attempt(1, "processing", A), attempt(2, "failed"), attempt(3, "downloaded")]);
  assert.equal(abandonedHere(done, A), { takeUp: [], learn: ["x1"] });
});

test("a failed attempt naming the earlier one taken up is replaced by it (engine walk and plan skip it); a standing one never is", () => {
  const [, failed] = attempt(2, "failed", undefined, { superseded_by: "x1" });
  assert.ok(replacedByEarlier(failed, "x1"));
  assert.not.ok(replacedByEarlier(failed, "x3"));
  assert.ok(replacedByEarlier({ ...failed, state: "rejected" }, "x1"));
  for (const state of ["submitting", "submitted", "processing", "succeeded", "downloaded"] as const) {
    assert.not.ok(replacedByEarlier({ ...failed, state }, "x1"), state);
    assert.ok(replacedByEarlier({ ...failed, state, abandoned: { service: B, at: 5 } }, "x1"), state);
  }
});

test("an attempt abandoned here while its create's outcome was unknown (`submitting`) may exist here: its charge is learnt (by its external id) when another attempt stands", () => {
  const recs = new Map([attempt(1, "submitting", A, { task_id: undefined }), attempt(2, "downloaded")]);
  assert.equal(abandonedHere(recs, A), { takeUp: [], learn: ["x1"] });
  // With no attempt standing, it is taken up instead (the run looks it up before any create).
  const alone = new Map([attempt(1, "submitting", A, { task_id: undefined }), attempt(2, "failed")]);
  assert.equal(abandonedHere(alone, A), { takeUp: [{ resume: "x1", replaces: ["x2"] }], learn: [] });
});

test.run();
