// Superseded and orphaned tasks, pure: diffPlan names the task that replaced a `-` task
// (same job and position, suffixed folders included), supersessions() says what the
// lockfile should record once the replacement was created, standings() what reports and
// status count, prunePlan() what prune removes, retryAttempts() the request of a retry,
// and plan's files follow the run's folder rule.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { diffPlan, entryFiles, slotDirs, supersessions } from "../../src/plan/diffPlan.js";
import { loadManifest } from "../../src/manifest/loadManifest.js";
import type { LoadedManifest } from "../../src/manifest/LoadedManifest.js";
import type { PlannedTask } from "../../src/manifest/PlannedTask.js";
import { prunePlan } from "../../src/prune/prunePlan.js";
import { retryAttempts } from "../../src/report/retryAttempts.js";
import { standingOf, standings } from "../../src/report/standing.js";
import type { LockFile, LockTask, TaskState } from "../../src/state/LockFile.js";
import { decodeTaskLine, encodeTaskLine } from "../../src/state/TaskLine.js";
import { tempManifest } from "../manifest/tempManifest.js";

const manifest = (prompt: string, colours = "[red, green, blue]") => `version: 1
name: p
jobs:
  pics:
    kind: image
    matrix: { c: ${colours} }
    name: "{{ c }}"
    prompt: "${prompt} {{ c }} mug"
    retry_failed: 2
`;

const load = async (yaml: string): Promise<LoadedManifest> => {
  const m = tempManifest(yaml);
  try {
    return await loadManifest(m.file);
  } finally {
    m.cleanup();
  }
};

const rec = (t: PlannedTask, state: TaskState, extra: Partial<LockTask> = {}): LockTask => ({
  job: t.job,
  kind: t.kind,
  vars: t.vars,
  dir: t.dir,
  request_hash: t.requestHash,
  take: t.take,
  attempt: t.attempt,
  state,
  updated_at: 1,
  outputs: state === "downloaded" ? [{ type: "image", index: 0, variant: "main", path: `${extra.dir ?? t.dir}/${t.name}-1.png`, size: 10, sha256: "a".repeat(64) }] : [],
  billing: [{ charge_type: "cash", amount: "0.03", currency: "USD" }],
  ...extra,
});
const lockOf = (tasks: Record<string, LockTask>): LockFile => ({ lockfile_version: 2, name: "p", tasks });

test("a changed task, once created, supersedes the old one; a removed value orphans its task", async () => {
  const old = await load(manifest("a"));
  const now = await load(manifest("a shiny", "[red, green]"));
  const tasks: Record<string, LockTask> = Object.fromEntries(old.tasks.map((t) => [t.id, rec(t, "downloaded")]));
  // Before the new tasks exist: `~`, nothing superseded yet.
  const before = diffPlan(now, lockOf(tasks));
  assert.equal(before.entries.map((e) => e.mark), ["~", "~", "-"]);
  assert.equal(supersessions(before, lockOf(tasks)), []);
  assert.equal([...standings(lockOf(tasks), before).of.values()], ["orphaned"], "the old results stay current until replaced");
  // The changed tasks ran (in folders of their own, as the run's rule gives).
  const red = now.tasks[0]!;
  const files = entryFiles(before.entries[0]!)!;
  assert.equal(files, [`pics/red-${red.id.slice(-6)}/red-1.png`], "plan's files: the suffixed folder, the name template");
  for (const t of now.tasks) tasks[t.id] = rec(t, "downloaded", { dir: `${t.dir}-${t.id.slice(-6)}` });
  const lock = lockOf(tasks);
  const after = diffPlan(now, lock);
  const minus = after.entries.filter((e) => e.mark === "-");
  assert.equal(minus.map((e) => [e.id, e.supersededBy]), [
    [old.tasks[0]!.id, now.tasks[0]!.id],
    [old.tasks[1]!.id, now.tasks[1]!.id],
    [old.tasks[2]!.id, undefined],
  ]);
  assert.equal(supersessions(after, lock), [
    [old.tasks[0]!.id, now.tasks[0]!.id],
    [old.tasks[1]!.id, now.tasks[1]!.id],
  ]);
  const s = standings(lock, after);
  assert.equal(old.tasks.map((t) => standingOf(s, t.id)), ["superseded", "superseded", "orphaned"]);
  assert.equal(now.tasks.map((t) => standingOf(s, t.id)), ["current", "current"]);
  // Recorded: the lockfile alone then says so.
  const recorded = lockOf({ ...tasks, [old.tasks[0]!.id]: { ...tasks[old.tasks[0]!.id]!, superseded_by: now.tasks[0]!.id } });
  assert.is(standingOf(standings(recorded), old.tasks[0]!.id), "superseded");
  assert.equal(supersessions(diffPlan(now, recorded), recorded).length, 1, "what is recorded is not recorded again");
});

test("a second change supersedes the task in the suffixed folder too", async () => {
  const v1 = await load(manifest("a", "[red]"));
  const v2 = await load(manifest("b", "[red]"));
  const v3 = await load(manifest("c", "[red]"));
  const [t1, t2, t3] = [v1.tasks[0]!, v2.tasks[0]!, v3.tasks[0]!];
  const lock = lockOf({
    [t1.id]: rec(t1, "downloaded", { superseded_by: t2.id }),
    [t2.id]: rec(t2, "downloaded", { dir: `${t2.dir}-${t2.id.slice(-6)}` }),
  });
  assert.equal(slotDirs(t2.id, lock.tasks[t2.id]!), [`${t2.dir}-${t2.id.slice(-6)}`, t2.dir]);
  const plan = diffPlan(v3, lock);
  assert.is(plan.entries[0]!.mark, "~");
  assert.equal(plan.entries[0]!.replaces, [t2.id], "the current one is replaced; the older one was already");
  const done = lockOf({ ...lock.tasks, [t3.id]: rec(t3, "downloaded", { dir: `${t3.dir}-${t3.id.slice(-6)}` }) });
  assert.equal(supersessions(diffPlan(v3, done), done), [[t2.id, t3.id]]);
});

test("prune takes superseded and orphaned tasks that have finished, never current ones or a shared file", async () => {
  const old = await load(manifest("a"));
  const now = await load(manifest("a shiny", "[red, green]"));
  const tasks: Record<string, LockTask> = Object.fromEntries(old.tasks.map((t) => [t.id, rec(t, "downloaded")]));
  for (const t of now.tasks) tasks[t.id] = rec(t, "downloaded", { dir: `${t.dir}-${t.id.slice(-6)}` });
  // The orphan is still being made: kept for now.
  tasks[old.tasks[2]!.id] = { ...tasks[old.tasks[2]!.id]!, state: "processing", outputs: [] };
  const lock = lockOf(tasks);
  const plan = prunePlan(lock, standings(lock, diffPlan(now, lock)));
  assert.equal(plan.tasks.map((t) => [t.id, t.standing]), [
    [old.tasks[0]!.id, "superseded"],
    [old.tasks[1]!.id, "superseded"],
  ].sort((a, b) => (a[0]! < b[0]! ? -1 : 1)));
  assert.equal(plan.waiting, [{ id: old.tasks[2]!.id, state: "processing" }]);
  const red = plan.tasks.find((t) => t.id === old.tasks[0]!.id)!;
  assert.equal(red.files, ["pics/red/red-1.png", "pics/red/task.json"]);
  assert.is(plan.files, 4);
  assert.is(plan.bytes, 20);
  // A file a current task also records is never removed.
  const shared = lockOf({ ...tasks, [now.tasks[0]!.id]: { ...tasks[now.tasks[0]!.id]!, outputs: tasks[old.tasks[0]!.id]!.outputs } });
  const again = prunePlan(shared, standings(shared, diffPlan(now, shared)));
  assert.equal(again.tasks.find((t) => t.id === old.tasks[0]!.id)!.files, []);
  // Pruned tasks are out of plan, standings' counts and a later prune; their line keeps its billing.
  const pruned = lockOf({ ...tasks, [old.tasks[0]!.id]: { ...tasks[old.tasks[0]!.id]!, pruned_at: 5 } });
  const p2 = diffPlan(now, pruned);
  assert.not.ok(p2.entries.some((e) => e.id === old.tasks[0]!.id));
  assert.is(standingOf(standings(pruned, p2), old.tasks[0]!.id), "pruned");
  assert.not.ok(prunePlan(pruned, standings(pruned, p2)).tasks.some((t) => t.id === old.tasks[0]!.id));
});

test("superseded_by and pruned_at survive the lockfile line; a line without them reads as current", () => {
  const task: LockTask = {
    job: "pics", kind: "image", vars: { c: "red" }, dir: "pics/red", request_hash: "f".repeat(64), take: 1, attempt: 1,
    state: "downloaded", updated_at: 100, outputs: [], billing: [], superseded_by: "p-pics-bbbbbbbbbbbbbbbbbbbb", pruned_at: 90,
  };
  const id = "p-pics-aaaaaaaaaaaaaaaaaaaa";
  const line = encodeTaskLine("p", id, task);
  assert.match(line, /"superseded_by":"p-pics-bbbbbbbbbbbbbbbbbbbb","pruned_at":90/);
  assert.equal(decodeTaskLine("p", JSON.parse(line)).task, task);
  const { superseded_by: _s, pruned_at: _p, ...plain } = task;
  const old = encodeTaskLine("p", id, plain);
  assert.not.match(old, /superseded_by|pruned_at/);
  const back = decodeTaskLine("p", JSON.parse(old)).task;
  assert.is(back.superseded_by, undefined);
  assert.is(standingOf(standings(lockOf({ [id]: back })), id), "current");
});

test("a retry attempt in the lockfile is given the request it was sent with", async () => {
  const m = await load(manifest("a"));
  const first = m.tasks[0]!;
  const second = m.withAttempt(first, 2);
  const lock = lockOf({
    [first.id]: rec(first, "failed"),
    [second.id]: rec(second, "downloaded"),
    // Claims attempt 2 of the same position with another request: not given one.
    "p-pics-zzzzzzzzzzzzzzzzzzzz": { ...rec(second, "failed"), request_hash: "0".repeat(64) },
  });
  const planned = new Map(m.tasks.map((t) => [t.id, t]));
  const found = retryAttempts(lock, planned, m.withAttempt);
  assert.equal(found.map((t) => t.id), [second.id]);
  assert.is(found[0]!.attempt, 2);
  assert.equal(found[0]!.request, second.request);
});

test.run();
