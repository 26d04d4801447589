// A task to create (`+`) whose request a record of another job has (a renamed job, reuse
// off): the plan's note names that record and the rename (diffPlan's sameRequestNotes,
// changeReason.ts). The record stays `-`, the task stays `+`: a note, nothing decided.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { diffPlan } from "../../src/plan/diffPlan.js";
import { loadManifest } from "../../src/manifest/loadManifest.js";
import type { LoadedManifest } from "../../src/manifest/LoadedManifest.js";
import type { LockFile, LockTask } from "../../src/state/LockFile.js";
import { tempManifest } from "../manifest/tempManifest.js";

const manifest = (job: string, prompt = "a {{ c }} mug") => `version: 1
name: p
jobs:
  ${job}:
    kind: image
    matrix: { c: [red, green] }
    prompt: "${prompt}"
`;

const load = async (yaml: string): Promise<LoadedManifest> => {
  const m = tempManifest(yaml);
  try {
    return await loadManifest(m.file);
  } finally {
    m.cleanup();
  }
};

/** The lockfile a run of `m` leaves: every task downloaded. */
const ranLock = (m: LoadedManifest): LockFile => ({
  lockfile_version: 3,
  name: "p",
  tasks: Object.fromEntries(
    m.tasks.map((t): [string, LockTask] => [
      t.id,
      { job: t.job, kind: t.kind, vars: t.vars, dir: t.dir, request_hash: t.requestHash, take: t.take, attempt: 1, state: "downloaded", updated_at: 1, outputs: [], billing: [] },
    ]),
  ),
});

test("a renamed job: each + names the record with its request and that the job's id changed; the old ones stay -", async () => {
  const before = await load(manifest("pics"));
  const lock = ranLock(before);
  const now = await load(manifest("stills"));
  const plan = diffPlan(now, lock);
  const made = plan.entries.filter((e) => e.mark === "+");
  assert.is(made.length, 2);
  for (const e of made) {
    const old = before.tasks.find((t) => t.vars["c"] === e.vars["c"])!;
    assert.is(e.note, `same request as ${old.id}: the job's id changed: pics → stills`);
  }
  assert.is(plan.entries.filter((e) => e.mark === "-").length, 2);
  assert.is(plan.total["+"], 2);
});

test("another request under the renamed job, or no record left over: no note", async () => {
  const lock = ranLock(await load(manifest("pics")));
  const other = diffPlan(await load(manifest("stills", "a {{ c }} cup")), lock);
  assert.ok(other.entries.filter((e) => e.mark === "+").every((e) => e.note === undefined));
  const fresh = diffPlan(await load(manifest("stills")), undefined);
  assert.ok(fresh.entries.every((e) => e.note === undefined));
});

test.run();
