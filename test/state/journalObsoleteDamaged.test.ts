// Guarantee: a journal is checked against the lockfile beside it before its content is
// judged. A damaged journal (its header repeated, as an older build's two writes at once
// left it) that names an older lockfile, and holds nothing that lockfile lacks, is
// skipped: it no longer blocks every run. One that holds a change the lockfile lacks is
// still refused and kept as it is, for a person to look at.
//
// Review finding (src/state/LockJournal.ts, readLockFile.ts, fixed there): the repeated
// header was refused before the obsolescence check, so a run killed between its full
// write (holding every line of the journal) and removing the journal left a lockfile no
// run would open (exit 2) until a person deleted the journal. Real files.

import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Effect } from "effect";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { LockfileInvalid } from "../../src/state/LockfileError.js";
import { encodeJournalHeader, encodeJournalRecord, journalPathOf, recordCovered } from "../../src/state/LockJournal.js";
import { LockStore } from "../../src/state/LockStore.js";
import { readLockFile } from "../../src/state/readLockFile.js";
import { task, taskId } from "./lockTask.js";
import { rng } from "./randomTask.js";

const dirs: string[] = [];
test.after(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

const NAME = "spring-campaign";
const T0 = 1_790_000_000_000;

/** A lockfile written by a run (tasks 1 and 2 at their latest states), and beside it a journal with its header twice naming an older file. */
const setup = async (journalRecords: string[]) => {
  const dir = await mkdtemp(join(tmpdir(), "omnibatch-journal-obsolete-"));
  dirs.push(dir);
  const path = join(dir, "m.lock.json");
  await Effect.runPromise(
    LockStore.use(path, NAME, (store) =>
      Effect.all([
        store.put(taskId(1), task(1, { state: "submitted", task_id: "t-1", updated_at: T0 + 30 })),
        store.put(taskId(2), task(2, { state: "submitting", updated_at: T0 + 20 })),
      ]),
    ),
  );
  const header = encodeJournalHeader(NAME, "0f".repeat(32));
  const journal = header + journalRecords[0]! + header + journalRecords.slice(1).join("");
  await writeFile(journalPathOf(path), journal);
  return { path, journal };
};

const record = (n: number, overrides: Parameters<typeof task>[1]) => encodeJournalRecord(NAME, taskId(n), task(n, overrides));

test("a damaged journal naming an older lockfile, every record of it in the lockfile (same or later): skipped; the lockfile reads, and a run opens it and removes the journal", async () => {
  const { path } = await setup([
    record(2, { state: "submitting", updated_at: T0 + 20 }),
    record(1, { state: "submitting", updated_at: T0 + 10 }),
    record(2, { state: "planned", updated_at: T0 + 5 }),
  ]);
  const read = await readLockFile(path);
  assert.is(read!.tasks[taskId(1)]!.state, "submitted");
  assert.is(read!.tasks[taskId(2)]!.state, "submitting");
  await Effect.runPromise(LockStore.use(path, NAME, (store) => store.put(taskId(3), task(3, { updated_at: T0 + 40 }))));
  const after = await readLockFile(path);
  assert.equal(Object.keys(after!.tasks).sort(), [taskId(1), taskId(2), taskId(3)].sort());
  assert.is(await readFile(journalPathOf(path), "utf8").catch(() => "gone"), "gone", "the obsolete journal was folded away");
});

for (const [what, records] of [
  ["a later state of a task than the lockfile's", [record(2, { state: "submitting", updated_at: T0 + 20 }), record(1, { state: "succeeded", task_id: "t-1", updated_at: T0 + 50 })]],
  ["a task the lockfile lacks", [record(2, { state: "submitting", updated_at: T0 + 20 }), record(5, { state: "submitting", updated_at: T0 + 15 })]],
  ["a line that is not a task record", [record(2, { state: "submitting", updated_at: T0 + 20 }), '{"id":"x"}\n']],
] as const) {
  test(`a damaged journal naming an older lockfile but holding ${what}: refused (exit 2) saying so, and kept as it was`, async () => {
    const { path, journal } = await setup([...records]);
    const error = await readLockFile(path).then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.instance(error, LockfileInvalid);
    assert.match((error as Error).message, /repeats the header/);
    assert.match((error as Error).message, /names an older lockfile than the one beside it, but line 4 (\(task .*\) holds a change the lockfile lacks|does not match)/);
    const opened = await Effect.runPromise(Effect.flip(LockStore.use(path, NAME, () => Effect.void)));
    assert.instance(opened, LockfileInvalid);
    assert.is(await readFile(journalPathOf(path), "utf8"), journal, "the journal is kept byte for byte");
  });
}

test("recordCovered: the file holds the record, or a state at least as late; properties over random pairs", () => {
  assert.ok(recordCovered(task(1, { updated_at: 5 }), task(1, { updated_at: 5 })));
  assert.ok(recordCovered(task(1, { state: "submitted", updated_at: 6 }), task(1, { updated_at: 5 })));
  assert.not.ok(recordCovered(task(1, { updated_at: 5 }), task(1, { state: "submitted", updated_at: 6 })));
  assert.not.ok(recordCovered(undefined, task(1)));
  const r = rng(7);
  for (let i = 0; i < 5_000; i++) {
    const a = task(1, { updated_at: Math.floor(r() * 10), state: r() < 0.5 ? "planned" : "submitted" });
    const b = task(1, { updated_at: Math.floor(r() * 10), state: r() < 0.5 ? "planned" : "submitted" });
    // Never covered when the file's state is older than the record: that change would be dropped.
    if (a.updated_at < b.updated_at && a.state !== b.state) assert.not.ok(recordCovered(a, b));
    // Always covered by itself.
    assert.ok(recordCovered(b, b));
    assert.is(recordCovered(a, b), a.updated_at >= b.updated_at || (a.state === b.state && a.updated_at === b.updated_at));
  }
});

test.run();
