import { mkdtemp, readFile, rm, writeFile, readdir, mkdir, stat, utimes } from "node:fs/promises";
import { tmpdir, hostname } from "node:os";
import { dirname, join } from "node:path";
import { Effect, Exit } from "effect";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { LockStore } from "../../src/state/LockStore.js";
import { readLockFile } from "../../src/state/readLockFile.js";
import { LockfileBusy, LockfileInvalid, LockfileWriteError } from "../../src/state/LockfileError.js";
import { runLockPathOf } from "../../src/state/RunLock.js";
import { sha256Hex } from "../../src/state/readLockFile.js";
import { task, taskId } from "./lockTask.js";

const dirs: string[] = [];
const tempDir = async () => {
  const dir = await mkdtemp(join(tmpdir(), "omnibatch-lockstore-"));
  dirs.push(dir);
  return dir;
};
test.after(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

const run = <A, E>(effect: Effect.Effect<A, E>) => Effect.runPromise(effect);
const failureOf = async <A, E>(effect: Effect.Effect<A, E>): Promise<E> => {
  const exit = await Effect.runPromiseExit(effect);
  if (Exit.isSuccess(exit)) throw new Error("expected a failure");
  const failure = exit.cause._tag === "Fail" ? exit.cause.error : undefined;
  if (failure === undefined) throw new Error(`expected a typed failure, got ${String(exit.cause)}`);
  return failure;
};

/** The files a closed store leaves, without its run trace (`.lastrun`, test/state/RunTrace.test.ts checks it). */
const lockFiles = async (dir: string) => (await readdir(dir)).filter((f) => !f.endsWith(".lastrun")).sort();

test("put then flush is durable: a reader sees the task before the store closes", async () => {
  const path = join(await tempDir(), "m.lock.json");
  await run(
    LockStore.use(path, "spring", (store) =>
      Effect.gen(function* () {
        yield* store.put(taskId(1), task(1));
        yield* store.flush;
        const seen = yield* Effect.promise(() => readLockFile(path));
        assert.equal(seen?.tasks[taskId(1)], task(1));
        assert.is(seen?.name, "spring");
      }),
    ),
  );
  const after = await readLockFile(path);
  assert.equal(after?.tasks[taskId(1)], task(1));
  assert.equal(await lockFiles(join(path, "..")), ["m.lock.json"]);
});

test("a reopened store holds every task and update applies on top", async () => {
  const path = join(await tempDir(), "m.lock.json");
  await run(LockStore.use(path, "spring", (store) => Effect.forEach([1, 2, 3], (n) => store.put(taskId(n), task(n)))));
  const updated = await run(
    LockStore.use(path, "spring", (store) =>
      Effect.gen(function* () {
        assert.equal(yield* store.get(taskId(2)), task(2));
        const next = yield* store.update(taskId(2), (t) => ({ ...t, state: "submitting" }));
        const missing = yield* store.update("nope", (t) => t);
        assert.is(missing, undefined);
        return next;
      }),
    ),
  );
  assert.is(updated?.state, "submitting");
  const file = await readLockFile(path);
  assert.equal(Object.keys(file!.tasks).sort(), [1, 2, 3].map(taskId).sort());
  assert.is(file!.tasks[taskId(2)]!.state, "submitting");
});

test("many puts then one flush cost one journal write and one fsync", async () => {
  const path = join(await tempDir(), "m.lock.json");
  await run(
    LockStore.use(
      path,
      "spring",
      (store) =>
        Effect.gen(function* () {
          for (let n = 0; n < 50; n++) yield* store.put(taskId(n), task(n));
          yield* store.flush; // the first write creates the file
          const before = yield* store.stats;
          for (let n = 0; n < 100; n++) yield* store.put(taskId(n), task(n, { state: "submitting" }));
          yield* store.flush;
          const after = yield* store.stats;
          assert.is(after.writes - before.writes, 1, JSON.stringify([before, after]));
          assert.is(after.fsyncs - before.fsyncs, 2); // new journal: its data + its folder entry
          for (let n = 0; n < 100; n++) yield* store.put(taskId(n), task(n, { state: "submitted" }));
          yield* store.flush;
          const third = yield* store.stats;
          assert.is(third.writes - after.writes, 1);
          assert.is(third.fsyncs - after.fsyncs, 1);
        }),
      { coalesceMs: 60_000, minCompactBytes: 10_000_000 },
    ),
  );
});

test("a run that puts only unchanged tasks writes nothing and leaves the file untouched", async () => {
  const path = join(await tempDir(), "m.lock.json");
  await run(LockStore.use(path, "spring", (store) => Effect.forEach([1, 2, 3], (n) => store.put(taskId(n), task(n)))));
  const before = await readFile(path, "utf8");
  const { mtimeMs } = await stat(path);
  const stats = await run(
    LockStore.use(path, "spring", (store) =>
      Effect.gen(function* () {
        // Same data in new objects, keys in another order, as an engine rebuilding them would.
        for (const n of [3, 2, 1]) yield* store.put(taskId(n), Object.fromEntries(Object.entries(task(n)).reverse()) as ReturnType<typeof task>);
        yield* store.flush;
        return yield* store.stats;
      }),
    ),
  );
  assert.equal(stats, { bytesWritten: 0, writes: 0, fsyncs: 0, compactions: 0 });
  assert.is(await readFile(path, "utf8"), before);
  assert.is((await stat(path)).mtimeMs, mtimeMs);
});

test("puts become durable within the coalescing window without an explicit flush", async () => {
  const path = join(await tempDir(), "m.lock.json");
  await run(
    LockStore.use(
      path,
      "spring",
      (store) =>
        Effect.gen(function* () {
          yield* store.put(taskId(7), task(7));
          // Bounded wait (a busy machine may delay the 20 ms window), never an explicit flush.
          // The file is visible from the rename on, while the store counts the write only
          // after the folder's fsync that follows: wait for both, or a loaded machine
          // shows the file with the count still 0.
          let seen: Awaited<ReturnType<typeof readLockFile>> = undefined;
          for (let i = 0; i < 100; i++) {
            yield* Effect.sleep("30 millis");
            seen = yield* Effect.promise(() => readLockFile(path));
            if (seen?.tasks[taskId(7)] && (yield* store.stats).writes >= 1) break;
          }
          assert.equal(seen?.tasks[taskId(7)], task(7));
          assert.is((yield* store.stats).writes, 1, JSON.stringify(yield* store.stats));
        }),
      { coalesceMs: 20 },
    ),
  );
});

test("the journal is replayed on load, later records winning", async () => {
  const dir = await tempDir();
  const path = join(dir, "m.lock.json");
  const fileText = `${JSON.stringify({ lockfile_version: 1, name: "spring", tasks: { [taskId(1)]: task(1) } })}\n`;
  await writeFile(path, fileText);
  const journal = [
    JSON.stringify({ journal: 1, name: "spring", base: sha256Hex(fileText) }),
    JSON.stringify({ id: taskId(1), task: task(1, { state: "submitting" }) }),
    JSON.stringify({ id: taskId(2), task: task(2) }),
    JSON.stringify({ id: taskId(1), task: task(1, { state: "submitted", task_id: "t-1" }) }),
  ].join("\n");
  await writeFile(`${path}.journal`, `${journal}\n`);
  const file = await readLockFile(path);
  assert.is(file!.tasks[taskId(1)]!.state, "submitted");
  assert.is(file!.tasks[taskId(1)]!.task_id, "t-1");
  assert.equal(file!.tasks[taskId(2)], task(2));
});

test("a torn last journal line (killed mid-append) is ignored, and the store folds the journal in at open", async () => {
  const dir = await tempDir();
  const path = join(dir, "m.lock.json");
  const fileText = `${JSON.stringify({ lockfile_version: 1, name: "spring", tasks: {} })}\n`;
  await writeFile(path, fileText);
  const good = `${JSON.stringify({ journal: 1, name: "spring", base: sha256Hex(fileText) })}\n${JSON.stringify({ id: taskId(1), task: task(1) })}\n`;
  const torn = JSON.stringify({ id: taskId(2), task: task(2) }).slice(0, 40);
  await writeFile(`${path}.journal`, good + torn);
  const file = await readLockFile(path);
  assert.equal(Object.keys(file!.tasks), [taskId(1)]);
  await run(
    LockStore.use(path, "spring", (store) =>
      Effect.gen(function* () {
        assert.equal(yield* store.get(taskId(1)), task(1));
        const files = yield* Effect.promise(() => readdir(dir));
        assert.ok(!files.includes("m.lock.json.journal"), "journal folded into the file at open");
        yield* store.put(taskId(3), task(3));
        yield* store.flush;
      }),
    ),
  );
  assert.equal(Object.keys((await readLockFile(path))!.tasks).sort(), [taskId(1), taskId(3)].sort());
});

test("a journal left beside a newer file (killed before removing it) is not replayed over it", async () => {
  const dir = await tempDir();
  const path = join(dir, "m.lock.json");
  const older = `${JSON.stringify({ lockfile_version: 1, name: "spring", tasks: {} })}\n`;
  const journal = [
    JSON.stringify({ journal: 1, name: "spring", base: sha256Hex(older) }),
    JSON.stringify({ id: taskId(1), task: task(1, { state: "submitting" }) }),
  ].join("\n");
  // The full write that followed already holds the task's newer state.
  const newer = `${JSON.stringify({ lockfile_version: 1, name: "spring", tasks: { [taskId(1)]: task(1, { state: "processing" }) } })}\n`;
  await writeFile(path, newer);
  await writeFile(`${path}.journal`, `${journal}\n`);
  assert.is((await readLockFile(path))!.tasks[taskId(1)]!.state, "processing");
  await run(LockStore.use(path, "spring", (store) => Effect.map(store.get(taskId(1)), (t) => assert.is(t?.state, "processing"))));
  assert.equal(await lockFiles(dir), ["m.lock.json"]);
});

test("a journal line that is not a task record is reported with the journal's path", async () => {
  const dir = await tempDir();
  const path = join(dir, "m.lock.json");
  const fileText = `${JSON.stringify({ lockfile_version: 1, name: "spring", tasks: {} })}\n`;
  await writeFile(path, fileText);
  const journal = `${JSON.stringify({ journal: 1, name: "spring", base: sha256Hex(fileText) })}\n{"oops":1}\n${JSON.stringify({ id: "x", task: task(1) })}\n`;
  await writeFile(`${path}.journal`, journal);
  const error = (await readLockFile(path).catch((e: unknown) => e)) as LockfileInvalid;
  assert.instance(error, LockfileInvalid);
  assert.match(error.message, /m\.lock\.json\.journal is damaged: journal line 2 is not a task record/);
  assert.is(await readFile(`${path}.journal`, "utf8"), journal);
});

test("a damaged lockfile is reported with its path and position, and kept byte-identical", async () => {
  const dir = await tempDir();
  const path = join(dir, "m.lock.json");
  const damaged = '{\n  "lockfile_version": 1,\n  "name": "spring",\n  "tasks": {\n    "a": { "job": \n';
  await writeFile(path, damaged);
  const error = await readLockFile(path).then(
    () => undefined,
    (e: unknown) => e,
  );
  assert.instance(error, LockfileInvalid);
  const message = (error as LockfileInvalid).message;
  assert.ok(message.includes(path), message);
  assert.match(message, /not valid JSON/);
  assert.match(message, /kept untouched/);
  assert.match(message, /external_task_id/);
  const fromStore = await failureOf(LockStore.use(path, "spring", (store) => store.put("x", task(1))));
  assert.instance(fromStore, LockfileInvalid);
  assert.is(await readFile(path, "utf8"), damaged);
  assert.equal(await lockFiles(dir), ["m.lock.json"], "no journal, temp file or lock left behind");
});

test("a lockfile that does not match the schema is reported with the field and reason", async () => {
  const dir = await tempDir();
  const path = join(dir, "m.lock.json");
  const text = `${JSON.stringify({ lockfile_version: 1, name: "spring", tasks: { [taskId(1)]: task(1, { state: "exploded" as never }) } }, null, 2)}\n`;
  await writeFile(path, text);
  const error = (await readLockFile(path).catch((e: unknown) => e)) as LockfileInvalid;
  assert.instance(error, LockfileInvalid);
  assert.ok(error.message.includes(`/tasks/${taskId(1)}/state: must be one of "planned"`), error.message);
  assert.is(await readFile(path, "utf8"), text);
  const versionError = (await (async () => {
    await writeFile(path, `{"lockfile_version": 4, "name": "x", "tasks": {}}`);
    return readLockFile(path).catch((e: unknown) => e);
  })()) as LockfileInvalid;
  assert.match(versionError.message, /line 1: written by a newer omnibatch \(lockfile_version 4; this one reads 1 to 3\): upgrade omnibatch/);
  const mixedError = (await (async () => {
    await writeFile(path, `{"lockfile_version": 2, "name": "x", "tasks": {}}`);
    return readLockFile(path).catch((e: unknown) => e);
  })()) as LockfileInvalid;
  assert.match(mixedError.message, /line 1 is not a lockfile header: \(top level\): unknown property 'tasks'/);
});

test("identical content gives identical bytes whatever the insertion order", async () => {
  const a = join(await tempDir(), "m.lock.json");
  const b = join(await tempDir(), "m.lock.json");
  const ns = [5, 1, 4, 2, 3, 10, 0];
  await run(LockStore.use(a, "spring", (store) => Effect.forEach(ns, (n) => store.put(taskId(n), task(n)))));
  await run(
    LockStore.use(b, "spring", (store) =>
      Effect.forEach([...ns].reverse(), (n) => {
        const t = task(n);
        // Same data, keys inserted in reverse order.
        const reversed = Object.fromEntries(Object.entries(t).reverse()) as typeof t;
        return store.put(taskId(n), reversed);
      }),
    ),
  );
  const textA = await readFile(a, "utf8");
  assert.is(textA, await readFile(b, "utf8"));
  assert.ok(textA.endsWith("}\n"));
  const first = [...ns].map(taskId).sort()[0]!;
  assert.ok(textA.startsWith(`{"lockfile_version":3,"name":"spring"}\n\n{"id":"${first}",`), textA.slice(0, 200));
});

test("a second store on the same lockfile fails with LockfileBusy naming the holder", async () => {
  const path = join(await tempDir(), "m.lock.json");
  await run(
    LockStore.use(path, "spring", () =>
      Effect.gen(function* () {
        const error = yield* Effect.flip(LockStore.use(path, "spring", () => Effect.void));
        assert.instance(error, LockfileBusy);
        const busy = error as LockfileBusy;
        assert.is(busy.holder?.pid, process.pid);
        assert.is(busy.holder?.host, hostname());
        assert.ok(busy.message.includes(`pid ${process.pid} on ${hostname()}`), busy.message);
        assert.match(busy.message, /running since \d{4}-\d\d-\d\dT/);
      }),
    ),
  );
  // Released at close: a third store opens.
  await run(LockStore.use(path, "spring", () => Effect.void));
});

test("a lock left by a killed run (dead pid on this host) is taken over", async () => {
  const path = join(await tempDir(), "m.lock.json");
  const lockDir = runLockPathOf(path);
  await mkdir(lockDir);
  // A pid that cannot be alive: beyond the kernel's pid range.
  await writeFile(join(lockDir, "owner.json"), JSON.stringify({ pid: 2 ** 30, host: hostname(), started: 1, token: "old" }));
  await run(LockStore.use(path, "spring", (store) => store.put(taskId(1), task(1))));
  assert.ok((await readLockFile(path))!.tasks[taskId(1)]);
});

test("an empty lock folder (a run killed before its owner was written, by an older version) does not block the next run, and a lock never appears without its owner", async () => {
  const path = join(await tempDir(), "m.lock.json");
  const lockDir = runLockPathOf(path);
  await mkdir(lockDir);
  await run(
    LockStore.use(path, "spring", (store) =>
      Effect.gen(function* () {
        yield* store.put(taskId(1), task(1));
        const owner = JSON.parse(yield* Effect.promise(() => readFile(join(lockDir, "owner.json"), "utf8")));
        assert.is(owner.pid, process.pid);
      }),
    ),
  );
  assert.ok((await readLockFile(path))!.tasks[taskId(1)]);
  // Nothing is left beside the lockfile but the file itself.
  assert.equal(await lockFiles(dirname(path)), ["m.lock.json"]);
});

test("a lock from another host is taken over only once its heartbeat is stale", async () => {
  const path = join(await tempDir(), "m.lock.json");
  const lockDir = runLockPathOf(path);
  await mkdir(lockDir);
  await writeFile(join(lockDir, "owner.json"), JSON.stringify({ pid: 1234, host: "ci-runner-7", started: 1, token: "remote" }));
  const busy = await failureOf(LockStore.use(path, "spring", () => Effect.void));
  assert.instance(busy, LockfileBusy);
  assert.match((busy as LockfileBusy).message, /pid 1234 on ci-runner-7/);
  // Past the 30 s stale limit and its 2 s margin (a coarse mtime, another host's clock).
  const old = new Date(Date.now() - 33_000);
  await utimes(lockDir, old, old);
  await run(LockStore.use(path, "spring", (store) => store.put(taskId(1), task(1))));
  assert.ok((await readLockFile(path))!.tasks[taskId(1)]);
});

test("the holder's heartbeat keeps its lock fresh past the stale limit", async () => {
  const path = join(await tempDir(), "m.lock.json");
  await run(
    LockStore.use(
      path,
      "spring",
      () =>
        Effect.gen(function* () {
          const opened = (yield* Effect.promise(() => stat(runLockPathOf(path)))).mtimeMs;
          yield* Effect.sleep("1300 millis");
          assert.ok((yield* Effect.promise(() => stat(runLockPathOf(path)))).mtimeMs > opened, "heartbeat moved the mtime");
          // Older than the 1 s stale limit, but the heartbeat (every 50 ms) keeps it fresh.
          const error = yield* Effect.flip(LockStore.use(path, "spring", () => Effect.void, { staleMs: 1000 }));
          assert.instance(error, LockfileBusy);
        }),
      { staleMs: 1000, heartbeatMs: 50 },
    ),
  );
});

test("a run whose lock was taken over stops writing instead of overwriting the other run", async () => {
  const path = join(await tempDir(), "m.lock.json");
  const error = await failureOf(
    LockStore.use(
      path,
      "spring",
      (store) =>
        Effect.gen(function* () {
          yield* store.put(taskId(1), task(1));
          yield* store.flush;
          // Another run took the lock over (as if this one had stalled past the stale limit).
          yield* Effect.promise(() =>
            writeFile(join(runLockPathOf(path), "owner.json"), JSON.stringify({ pid: 1, host: "other", started: 2, token: "theirs" })),
          );
          yield* Effect.sleep("500 millis"); // many heartbeats (every 20 ms), even on a busy machine
          yield* store.put(taskId(2), task(2));
          yield* store.flush;
        }),
      { heartbeatMs: 20, coalesceMs: 60_000 },
    ),
  );
  assert.instance(error, LockfileWriteError);
  assert.match((error as LockfileWriteError).message, /taken over by another run/);
  const file = await readLockFile(path);
  assert.ok(file!.tasks[taskId(1)]);
  assert.is(file!.tasks[taskId(2)], undefined);
  // The other run's lock is left in place.
  assert.match(await readFile(join(runLockPathOf(path), "owner.json"), "utf8"), /theirs/);
});

test("a flush checks the lock itself, without waiting for a heartbeat: the owner file naming another run stops it at once", async () => {
  const path = join(await tempDir(), "m.lock.json");
  const error = await failureOf(
    LockStore.use(
      path,
      "spring",
      (store) =>
        Effect.gen(function* () {
          yield* store.put(taskId(1), task(1));
          yield* store.flush;
          yield* Effect.promise(() =>
            writeFile(join(runLockPathOf(path), "owner.json"), JSON.stringify({ pid: 1, host: "other", started: 2, token: "theirs" })),
          );
          // No heartbeat runs in between (every 10 minutes): the flush itself must notice.
          yield* store.put(taskId(2), task(2));
          yield* store.flush;
        }),
      { heartbeatMs: 600_000, coalesceMs: 60_000 },
    ),
  );
  assert.instance(error, LockfileWriteError);
  assert.match((error as LockfileWriteError).message, /taken over by another run/);
  assert.is((await readLockFile(path))!.tasks[taskId(2)], undefined);
});

/** Blocks the event loop (and so the heartbeat) for `ms`, as a long synchronous stretch or a frozen process does. */
const blockFor = (ms: number) =>
  Effect.sync(() => {
    const until = Date.now() + ms;
    while (Date.now() < until) {
      // blocked
    }
  });

test("a flush after our heartbeat went older than the stale limit, nobody taking over: written, and the lock is fresh again (another run is refused)", async () => {
  const path = join(await tempDir(), "m.lock.json");
  await run(
    LockStore.use(
      path,
      "spring",
      (store) =>
        Effect.gen(function* () {
          yield* store.put(taskId(1), task(1));
          yield* store.flush;
          // No heartbeat for longer than the stale limit (none is due: every 10 minutes).
          yield* blockFor(1_200);
          yield* store.put(taskId(2), task(2));
          yield* store.flush;
          // The flush refreshed the heartbeat on its way: a run starting now finds the lock held.
          const error = yield* Effect.flip(LockStore.use(path, "spring", () => Effect.void, { staleMs: 1_000 }));
          assert.instance(error, LockfileBusy);
        }),
      { staleMs: 1_000, heartbeatMs: 600_000, coalesceMs: 60_000 },
    ),
  );
  assert.ok((await readLockFile(path))!.tasks[taskId(2)]);
});

test("a flush after our heartbeat went older than the stale limit while another run is taking the lock over (its takeover guard exists) is refused", async () => {
  const path = join(await tempDir(), "m.lock.json");
  const error = await failureOf(
    LockStore.use(
      path,
      "spring",
      (store) =>
        Effect.gen(function* () {
          yield* store.put(taskId(1), task(1));
          yield* store.flush;
          yield* blockFor(1_200);
          // Another run found the lock stale and holds the guard: it may replace the owner any moment.
          yield* Effect.promise(() => mkdir(`${runLockPathOf(path)}.takeover`));
          yield* store.put(taskId(2), task(2));
          yield* store.flush;
        }),
      { staleMs: 1_000, heartbeatMs: 600_000, coalesceMs: 60_000 },
    ),
  );
  assert.instance(error, LockfileWriteError);
  assert.match((error as LockfileWriteError).message, /stalled past the lock's stale limit/);
  assert.is((await readLockFile(path))!.tasks[taskId(2)], undefined);
});

test("a late heartbeat of a run that was taken over meanwhile: the heartbeat's own check finds it lost (lockLost), and a flush is refused", async () => {
  const path = join(await tempDir(), "m.lock.json");
  let lostSeen = false;
  const error = await failureOf(
    LockStore.use(
      path,
      "spring",
      (store) =>
        Effect.gen(function* () {
          yield* store.put(taskId(1), task(1));
          yield* store.flush;
          yield* Effect.promise(() =>
            writeFile(join(runLockPathOf(path), "owner.json"), JSON.stringify({ pid: 1, host: "other", started: 2, token: "theirs" })),
          );
          yield* blockFor(600);
          // Heartbeats (every 50 ms) come after the block: the first one finds the other owner.
          lostSeen = (yield* Effect.timeoutOption(store.lockLost, "2 seconds"))._tag === "Some";
          yield* store.put(taskId(2), task(2));
          yield* store.flush;
        }),
      { staleMs: 500, heartbeatMs: 50, coalesceMs: 60_000 },
    ),
  );
  assert.ok(lostSeen, "lockLost completed");
  assert.instance(error, LockfileWriteError);
  assert.match((error as LockfileWriteError).message, /taken over by another run/);
  assert.is((await readLockFile(path))!.tasks[taskId(2)], undefined);
});

test("group commit: worker 1's flush writes worker 2's intent too; after a stall past the stale limit, with another run taking the lock over, worker 2's flush (nothing left to write, its last check before its create) is refused", async () => {
  const path = join(await tempDir(), "m.lock.json");
  const flushes: string[] = [];
  await run(
    LockStore.use(
      path,
      "spring",
      (store) =>
        Effect.gen(function* () {
          yield* store.put(taskId(0), task(0));
          yield* store.flush;
          // Two create workers record their intents; worker 1's flush writes both.
          yield* store.put(taskId(1), task(1));
          yield* store.put(taskId(2), task(2));
          yield* store.flush;
          // Frozen past the stale limit before worker 2 gets the write permit; another run
          // found the lock stale and holds the takeover guard, about to replace the owner.
          yield* blockFor(1_200);
          yield* Effect.promise(() => mkdir(`${runLockPathOf(path)}.takeover`));
          const worker2 = yield* Effect.either(store.flush);
          flushes.push(worker2._tag === "Left" ? worker2.left.message : "Right");
        }),
      { staleMs: 1_000, heartbeatMs: 600_000, coalesceMs: 60_000 },
    ),
  );
  assert.is(flushes.length, 1);
  assert.match(flushes[0]!, /stalled past the lock's stale limit/, "worker 2 would send its create while another run takes the lock over");
});

test("a takeover guard left by a run killed mid-takeover an hour ago, no other run: a flush after a stall past the stale limit is written (only a guard made since this run took its lock stops it)", async () => {
  const path = join(await tempDir(), "m.lock.json");
  const guard = `${runLockPathOf(path)}.takeover`;
  await mkdir(guard);
  const hourAgo = new Date(Date.now() - 3_600_000);
  await utimes(guard, hourAgo, hourAgo);
  await run(
    LockStore.use(
      path,
      "spring",
      (store) =>
        Effect.gen(function* () {
          yield* store.put(taskId(1), task(1));
          yield* store.flush;
          yield* blockFor(1_200);
          yield* store.put(taskId(2), task(2));
          yield* store.flush;
          // Still ours: a run starting now finds the lock held (the flush refreshed it).
          const error = yield* Effect.flip(LockStore.use(path, "spring", () => Effect.void, { staleMs: 1_000 }));
          assert.instance(error, LockfileBusy);
        }),
      { staleMs: 1_000, heartbeatMs: 600_000, coalesceMs: 60_000 },
    ),
  );
  assert.ok((await readLockFile(path))!.tasks[taskId(2)], "the flush after the stall was written");
});

test.run();
