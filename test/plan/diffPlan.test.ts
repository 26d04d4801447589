// The plan against a lockfile: + = ~ - … with in-flight tasks, retries, counts and the
// estimate per currency.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { diffPlan } from "../../src/plan/diffPlan.js";
import { loadManifest } from "../../src/manifest/loadManifest.js";
import type { LoadedManifest } from "../../src/manifest/LoadedManifest.js";
import type { PlannedTask } from "../../src/manifest/PlannedTask.js";
import type { LockFile, LockTask, TaskState } from "../../src/state/LockFile.js";
import { tempManifest } from "../manifest/tempManifest.js";
import { ownFolders } from "../../src/engine/ownFolders.js";

const manifest = (prompt = "a {{ c }} mug") => `version: 1
name: p
prices: { currency: USD, image: { "1k": 0.25 }, video: { "720p": 0.1 } }
jobs:
  pics:
    kind: image
    matrix: { c: [red, green, blue] }
    prompt: "${prompt}"
    retry_failed: 1
  clips:
    kind: video
    for_each: pics.outputs
    first_frame: "{{ item.url }}"
    prompt: "it turns"
`;

const load = async (yaml: string): Promise<LoadedManifest> => {
  const m = tempManifest(yaml);
  try {
    return await loadManifest(m.file);
  } finally {
    m.cleanup();
  }
};

const lockTask = (t: PlannedTask, state: TaskState, extra: Partial<LockTask> = {}): LockTask => ({
  job: t.job,
  kind: t.kind,
  vars: t.vars,
  dir: t.dir,
  request_hash: t.requestHash,
  take: t.take,
  attempt: t.attempt,
  state,
  updated_at: 1,
  outputs: [],
  billing: [],
  ...extra,
});

const lockOf = (tasks: Record<string, LockTask>): LockFile => ({ lockfile_version: 1, name: "p", tasks });

test("without a lockfile every task is + and downstream jobs wait with the expected count", async () => {
  const m = await load(manifest());
  const plan = diffPlan(m, undefined);
  assert.is(plan.lockfileFound, false);
  assert.equal(plan.jobs.pics, { "+": 3, "=": 0, "~": 0, "-": 0, "…": 0, inFlight: 0 });
  assert.equal(plan.jobs.clips!["…"], 3);
  assert.equal(plan.estimate, { USD: "0.75" });
  assert.equal(plan.waitingEstimate, { USD: "1.5" }, "3 waiting clips of 5 s at 0.1 per second");
});

test("done and in-flight tasks are =, in flight flagged and not re-created", async () => {
  const m = await load(manifest());
  const [a, b] = m.tasks;
  const plan = diffPlan(m, lockOf({ [a!.id]: lockTask(a!, "downloaded"), [b!.id]: lockTask(b!, "processing") }));
  const marks = plan.entries.filter((e) => e.job === "pics").map((e) => [e.mark, e.inFlight === true]);
  assert.equal(marks, [["=", false], ["=", true], ["+", false]]);
  assert.is(plan.total.inFlight, 1);
  assert.equal(plan.estimate, { USD: "0.25" });
});

test("a changed prompt is ~ replacing the old task, which is not also counted as -", async () => {
  const old = await load(manifest());
  const lock = lockOf(Object.fromEntries(old.tasks.map((t) => [t.id, lockTask(t, "downloaded")])));
  const m = await load(manifest("a {{ c }} cup"));
  const plan = diffPlan(m, lock);
  assert.is(plan.jobs.pics!["~"], 3);
  assert.is(plan.jobs.pics!["-"], 0);
  const e = plan.entries[0]!;
  assert.equal(e.replaces, [old.tasks[0]!.id]);
  assert.is(e.task!.id, e.id);
});

test("lockfile tasks no longer in the manifest are -", async () => {
  const old = await load(manifest().replace("[red, green, blue]", "[red, green, blue, black]"));
  const lock = lockOf(Object.fromEntries(old.tasks.map((t) => [t.id, lockTask(t, "downloaded")])));
  const plan = diffPlan(await load(manifest()), lock);
  assert.is(plan.jobs.pics!["-"], 1);
  assert.is(plan.jobs.pics!["="], 3);
  assert.is(plan.entries.find((e) => e.mark === "-")!.id, old.tasks[3]!.id);
});

test("a failed task with retries left is + as the next attempt; with none left it stays =", async () => {
  const m = await load(manifest());
  const [a] = m.tasks;
  const first = diffPlan(m, lockOf({ [a!.id]: lockTask(a!, "failed") }));
  const retry = first.entries[0]!;
  assert.is(retry.mark, "+");
  assert.is(retry.attempt, 2);
  assert.is(retry.id, m.withAttempt(a!, 2).id);
  const second = m.withAttempt(a!, 2);
  const after = diffPlan(m, lockOf({ [a!.id]: lockTask(a!, "failed"), [second.id]: lockTask(second, "failed") }));
  assert.is(after.entries[0]!.mark, "=");
  assert.is(after.entries[0]!.id, second.id);
  assert.match(after.entries[0]!.note!, "no retries left");
  assert.is(after.jobs.pics!["-"], 0, "earlier attempts are not orphans");
});

test("records counted without a set (a rerun's own records, attempts found by position) still leave every orphan -, and no attempt", async () => {
  // Own records are counted, later attempts kept in a set: the - pass must run exactly
  // when some record is neither, whatever mix of the two the lockfile holds.
  const old = await load(manifest().replace("[red, green, blue]", "[red, green, blue, black, white]"));
  const m = await load(manifest());
  const [red, green] = m.tasks;
  const redSecond = m.withAttempt(red!, 2);
  const greenSecond = m.withAttempt(green!, 2);
  const base: Record<string, LockTask> = {
    ...Object.fromEntries(m.tasks.map((t) => [t.id, lockTask(t, "downloaded")])),
    [red!.id]: lockTask(red!, "failed"),
    [redSecond.id]: lockTask(redSecond, "downloaded"),
    // An attempt whose first attempt is not recorded (found by position alone).
    [greenSecond.id]: lockTask(greenSecond, "downloaded"),
  };
  delete base[green!.id];
  const none = diffPlan(m, lockOf(base));
  assert.is(none.jobs.pics!["-"], 0, "every record is accounted for");
  assert.is(none.entries.find((e) => e.job === "pics" && e.vars.c === "red")!.id, redSecond.id);
  assert.is(none.entries.find((e) => e.job === "pics" && e.vars.c === "green")!.id, greenSecond.id);
  for (const orphans of [[old.tasks[3]!], [old.tasks[3]!, old.tasks[4]!]]) {
    const lock = lockOf({ ...base, ...Object.fromEntries(orphans.map((t) => [t.id, lockTask(t, "downloaded")])) });
    const plan = diffPlan(m, lock);
    assert.equal(
      plan.entries.filter((e) => e.mark === "-").map((e) => e.id).sort(),
      orphans.map((t) => t.id).sort(),
      `${orphans.length} orphan(s), nothing else -`,
    );
    assert.is(plan.jobs.pics!["="], 3);
  }
});

test("a task abandoned at another service (--switch-service) is + as its next attempt, and the abandoned attempt uses up no retry", async () => {
  const m = await load(manifest());
  const [a] = m.tasks;
  const gone = { service: "https://api-east.example.com", at: 5 };
  const plan = diffPlan(m, lockOf({ [a!.id]: lockTask(a!, "processing", { task_id: "t1", abandoned: gone }) }));
  const e = plan.entries[0]!;
  assert.is(e.mark, "+");
  assert.is(e.id, m.withAttempt(a!, 2).id);
  assert.match(e.note!, "abandoned at https://api-east.example.com");
  assert.is(plan.jobs.pics!["-"], 0, "the abandoned attempt is no orphan");
  // Attempt 2 (made here) failed: retry_failed 1 still allows attempt 3, as if the abandoned one never was.
  const second = m.withAttempt(a!, 2);
  const failed = diffPlan(m, lockOf({ [a!.id]: lockTask(a!, "processing", { abandoned: gone }), [second.id]: lockTask(second, "failed") }));
  assert.is(failed.entries[0]!.mark, "+");
  assert.is(failed.entries[0]!.id, m.withAttempt(a!, 3).id);
  // Downloaded there after the switch: = as that attempt.
  const done = diffPlan(m, lockOf({ [a!.id]: lockTask(a!, "succeeded", { abandoned: gone }), [second.id]: lockTask(second, "downloaded") }));
  assert.is(done.entries[0]!.mark, "=");
  assert.is(done.entries[0]!.id, second.id);
});

test("switched back: an attempt taken up again at its own service stays the task's latest (=), the later one abandoned elsewhere names it and is no +", async () => {
  const m = await load(manifest());
  const [a] = m.tasks;
  const second = m.withAttempt(a!, 2);
  const west = { service: "https://api-west.example.com", at: 6 };
  for (const state of ["processing", "succeeded", "downloaded"] as const) {
    const plan = diffPlan(m, lockOf({ [a!.id]: lockTask(a!, state, { task_id: "t1" }), [second.id]: lockTask(second, "processing", { task_id: "t2", abandoned: west, superseded_by: a!.id }) }));
    const e = plan.entries.find((x) => x.job === "pics" && x.vars.c === a!.vars.c && x.mark !== "-")!;
    assert.is(e.mark, "=", state);
    assert.is(e.id, a!.id, state);
    assert.not.ok(plan.entries.some((x) => x.mark === "+" && (x.id === second.id || x.id === m.withAttempt(a!, 3).id)), `${state}: nothing to create for it`);
  }
});

test("switched back: the later attempt replacing nothing (failed elsewhere) names the one taken up; when that one fails here, its retry takes the number after them all, as the engine's walk does", async () => {
  const m = await load(manifest());
  const [a] = m.tasks;
  const second = m.withAttempt(a!, 2);
  const failedElsewhere = lockTask(second, "failed", { task_id: "t2", superseded_by: a!.id, error: { code: 1500, message: "boom", at: 3 } });
  // Taken up (in flight): = as attempt 1; the failed attempt 2 is no +.
  const taken = diffPlan(m, lockOf({ [a!.id]: lockTask(a!, "processing", { task_id: "t1" }), [second.id]: failedElsewhere }));
  const e = taken.entries.find((x) => x.job === "pics" && x.vars.c === a!.vars.c && x.mark !== "-")!;
  assert.is(e.mark, "=");
  assert.is(e.id, a!.id);
  // Attempt 1 then failed here (retry_failed 1): the retry is attempt 3, never attempt 2's id (recorded already).
  const failed = diffPlan(m, lockOf({ [a!.id]: lockTask(a!, "failed", { task_id: "t1", error: { code: 1500, message: "boom", at: 4 } }), [second.id]: failedElsewhere }));
  const r = failed.entries.find((x) => x.job === "pics" && x.vars.c === a!.vars.c && x.mark === "+")!;
  assert.is(r.id, m.withAttempt(a!, 3).id);
});

test("downstream tasks recorded for current upstream tasks are =; the rest still wait", async () => {
  const m = await load(manifest());
  const up = m.tasks[0]!;
  const done = lockTask(up, "downloaded", {
    outputs: [{ type: "image", index: 0, variant: "main", path: "x.png", size: 1, sha256: "a".repeat(64) }],
  });
  const clip = m.expandDownstream("clips", [{ job: "pics", task: up.id, index: 0, type: "image", url: "https://r.test/x.png", file: "/x.png", sha256: "a".repeat(64), vars: up.vars }])[0]!;
  const plan = diffPlan(m, lockOf({ [up.id]: done, [clip.id]: lockTask(clip, "submitted", { upstream: clip.upstream! }) }));
  assert.is(plan.jobs.clips!["="], 1);
  assert.is(plan.jobs.clips!.inFlight, 1);
  assert.is(plan.jobs.clips!["…"], 2);
});

test("totals add up over jobs", async () => {
  const m = await load(manifest());
  const plan = diffPlan(m, undefined);
  assert.is(plan.total["+"], 3);
  assert.is(plan.total["…"], 3);
});

test("a changed task's folder in the plan is the one the run writes to (one rule: resultFolder), not the old task's", async () => {
  const before = await load(manifest());
  const after = await load(manifest("a {{ c }} cup"));
  const old = before.tasks[0]!;
  const file = { type: "image" as const, index: 0, variant: "main" as const, path: `${old.dir}/0.png`, sha256: "a".repeat(64) };
  const records = { [old.id]: lockTask(old, "downloaded", { outputs: [file] }) };
  const plan = diffPlan(after, lockOf(records));
  const changed = plan.entries.find((e) => e.mark === "~")!;
  assert.ok(changed, "the changed task is ~");
  assert.is.not(changed.dir, old.dir, "not the old task's folder, which keeps its paid files");
  const run = ownFolders(after, new Map(Object.entries(records)));
  assert.is(changed.dir, run.tasks.find((t) => t.id === changed.id)!.dir);
});

test("a still succeeded but not downloaded still makes its downstream tasks; one failed for good makes none", async () => {
  const m = await load(manifest().replace("retry_failed: 1", "retry_failed: 0"));
  const [a, b] = m.tasks;
  const plan = diffPlan(m, lockOf({ [a!.id]: lockTask(a!, "succeeded"), [b!.id]: lockTask(b!, "failed") }));
  // 3 stills of 1 image each: a's clip is still expected, b's is not, c's waits.
  assert.is(plan.jobs.clips!["…"], 2);
});

// A task to create (`+`) whose request a record of another job has (a renamed job, reuse
// off): the note names that record and the rename (sameRequestNotes, changeReason.ts). The
// record stays `-`, the task stays `+`: a note, nothing decided.
const renamed = (job: string, prompt = "a {{ c }} mug") => `version: 1
name: p
jobs:
  ${job}:
    kind: image
    matrix: { c: [red, green] }
    prompt: "${prompt}"
`;

test("a renamed job: each + names the record with its request and that the job's id changed; the old ones stay -", async () => {
  const before = await load(renamed("pics"));
  const lock = lockOf(Object.fromEntries(before.tasks.map((t) => [t.id, lockTask(t, "downloaded")])));
  const plan = diffPlan(await load(renamed("stills")), lock);
  const made = plan.entries.filter((e) => e.mark === "+");
  assert.is(made.length, 2);
  for (const e of made) {
    const old = before.tasks.find((t) => t.vars["c"] === e.vars["c"])!;
    assert.is(e.note, `same request as ${old.id}: the job's id changed: pics → stills`);
  }
  assert.is(plan.entries.filter((e) => e.mark === "-").length, 2);
  // Another request under the renamed job, or no lockfile: no note.
  assert.ok(diffPlan(await load(renamed("stills", "a {{ c }} cup")), lock).entries.every((e) => e.note === undefined));
  assert.ok(diffPlan(await load(renamed("stills")), undefined).entries.every((e) => e.note === undefined));
});

test.run();
