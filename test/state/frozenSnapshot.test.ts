// A frozen snapshot (LockStore.frozenSnapshot, TaskRecords.ts frozenTasks): the lockfile
// as `snapshot` gives it, but each held line decoded only when its record is read, so
// the passes of a run's end over 200,000 records hold one at a time. It must read as the
// snapshot does (keys in the same order, equal records, `in`, absent ids), change with no
// later put, refuse writes, decode nothing to list its keys, and keep no record it gave.

import { setFlagsFromString } from "node:v8";
import { types } from "node:util";
import { runInNewContext } from "node:vm";
import { Effect } from "effect";
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { LockFile, LockTask } from "../../src/state/LockFile.js";
import { LockStore } from "../../src/state/LockStore.js";
import { sameJson } from "../../src/state/sameJson.js";
import { encodeTaskLine } from "../../src/state/TaskLine.js";
import { frozenTasks, type HeldRecord, TaskRecords } from "../../src/state/TaskRecords.js";
import { randomTask, rng } from "./randomTask.js";

const randomTasks = (count: number, seed: number): Map<string, LockTask> => {
  const r = rng(seed);
  const tasks = new Map<string, LockTask>();
  for (let n = 0; n < count; n++) {
    const { id, task } = randomTask(r, "spring", n);
    tasks.set(id, task);
  }
  return tasks;
};

/** Both snapshots of a memory store holding `tasks`, flushed (downloaded records held as lines). */
const snapshots = async (
  tasks: ReadonlyMap<string, LockTask>,
  more?: (put: (id: string, t: LockTask) => Effect.Effect<void>) => Effect.Effect<void>,
  frozenFrom = 0,
) =>
  Effect.runPromise(
    Effect.gen(function* () {
      const store = yield* LockStore;
      for (const [id, t] of tasks) yield* store.put(id, t);
      yield* store.flush;
      const lines = ((yield* store.view) as TaskRecords).linesHeld();
      const frozen = yield* store.frozenSnapshot;
      const plain = yield* store.snapshot;
      if (more) yield* more(store.put);
      return { frozen, plain, lines, after: yield* store.snapshot };
    }).pipe(Effect.scoped, Effect.provide(LockStore.memory("spring", undefined, { frozenFrom }))),
  );

test("a frozen snapshot reads as the snapshot: the same keys in the same order, equal records, `in` and absent ids as a plain object", async () => {
  const tasks = randomTasks(1_500, 3);
  // Ids a plain object lists first (array indices), and one that only looks like one.
  for (const id of ["12", "3", "007", "4294967295"]) tasks.set(id, { ...[...tasks.values()][0]!, state: "downloaded" });
  const { frozen, plain, lines } = await snapshots(tasks);
  assert.ok(lines > 100, `downloaded records held as lines (${lines})`);
  assert.equal(Object.keys(frozen.tasks), Object.keys(plain.tasks));
  const listed: string[] = [];
  for (const id in frozen.tasks) listed.push(id);
  assert.equal(listed, Object.keys(plain.tasks), "for...in");
  for (const id of Object.keys(plain.tasks)) {
    assert.ok(sameJson(frozen.tasks[id]!, plain.tasks[id]!), id);
    assert.ok(id in frozen.tasks);
  }
  assert.ok(sameJson(frozen, plain), "the whole lockfile, as JSON");
  assert.equal(Object.entries(frozen.tasks).length, tasks.size);
  assert.is(frozen.tasks["spring-stills-none"], undefined);
  assert.not.ok("spring-stills-none" in frozen.tasks);
  assert.is(typeof frozen.tasks.hasOwnProperty, "function", "an object's prototype, as a plain object's");
  assert.is(frozen.name, plain.name);
  assert.is(frozen.lockfile_version, plain.lockfile_version);
});

test("below `frozenFrom` records held as lines a frozen snapshot is a snapshot (each record decoded once); from it on, records are decoded as read", async () => {
  const tasks = randomTasks(1_000, 13);
  const few = await snapshots(tasks, undefined, 1_000_000);
  assert.ok(few.lines > 100);
  assert.not.ok(types.isProxy(few.frozen.tasks));
  assert.ok(sameJson(few.frozen, few.plain));
  const at = await snapshots(tasks, undefined, few.lines);
  assert.ok(types.isProxy(at.frozen.tasks));
  assert.not.ok(types.isProxy((await snapshots(tasks, undefined, few.lines + 1)).frozen.tasks));
});

test("a frozen snapshot does not change with later puts, and refuses writes", async () => {
  const tasks = randomTasks(300, 5);
  const [id, first] = [...tasks].find(([, t]) => t.state === "downloaded")!;
  const { frozen, after } = await snapshots(tasks, (put) =>
    Effect.gen(function* () {
      yield* put(id, { ...first, updated_at: first.updated_at + 1 });
      yield* put("spring-stills-later", first);
    }),
  );
  assert.is(after.tasks[id]!.updated_at, first.updated_at + 1);
  assert.ok(sameJson(frozen.tasks[id]!, first));
  assert.not.ok("spring-stills-later" in frozen.tasks);
  assert.is(Object.keys(frozen.tasks).length, tasks.size);
  const writable = frozen.tasks as Record<string, LockTask>;
  assert.throws(() => {
    writable[id] = first;
  });
  assert.throws(() => delete writable[id]);
  assert.throws(() => Object.defineProperty(writable, "x", { value: first }));
  assert.ok(sameJson(frozen.tasks[id]!, first));
});

test("listing a frozen snapshot's keys decodes nothing; each read decodes its record once, the same id read again in a row is not decoded again", () => {
  const held = new Map<string, HeldRecord>();
  for (const [id, t] of randomTasks(400, 9)) held.set(id, t.state === "downloaded" ? encodeTaskLine("spring", id, t) : t);
  const records = new TaskRecords("spring");
  let decoded = 0;
  const tasks = frozenTasks(held, (line) => {
    decoded++;
    return records.decodeLine(line);
  });
  const ids = Object.keys(tasks);
  for (const _ in tasks);
  assert.is(ids.length, held.size);
  assert.is(decoded, 0, "Object.keys and for...in decode nothing");
  const asLines = ids.filter((id) => typeof held.get(id) === "string");
  for (const id of asLines) {
    const t = tasks[id]!;
    // A pass reads several fields of one task: one decode for them.
    assert.ok(tasks[id]!.state === t.state && tasks[id]!.outputs === t.outputs);
  }
  assert.is(decoded, asLines.length);
});

// The test needs a forced GC: exposed for this process only.
setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

/**
 * How many of the records a pass over `lock` read are still alive after it, while `lock`
 * is. Counted a turn later: a WeakRef keeps its target alive until the job that made it ends.
 */
const aliveAfterPass = async (lock: LockFile): Promise<{ read: number; alive: number }> => {
  const refs: WeakRef<LockTask>[] = [];
  for (const id in lock.tasks) refs.push(new WeakRef(lock.tasks[id]!));
  await new Promise((r) => setImmediate(r));
  gc();
  gc();
  return { read: refs.length, alive: refs.filter((r) => r.deref() !== undefined).length };
};

test("a pass over a frozen snapshot keeps none of the records it read (a snapshot holds every one while it lives)", async () => {
  const tasks = randomTasks(2_000, 11);
  const { frozen, plain, lines } = await snapshots(tasks);
  const ofPlain = await aliveAfterPass(plain);
  const ofFrozen = await aliveAfterPass(frozen);
  assert.is(ofPlain.read, tasks.size);
  assert.is(ofPlain.alive, tasks.size, "the snapshot holds every record");
  assert.is(ofFrozen.read, tasks.size);
  // Records not held as lines (not downloaded) are the store's own objects, alive with it; and the last one read.
  assert.ok(ofFrozen.alive <= tasks.size - lines + 1, `${ofFrozen.alive} of ${tasks.size} records still alive (${lines} held as lines)`);
  assert.ok(frozen.tasks !== plain.tasks);
});

test.run();
