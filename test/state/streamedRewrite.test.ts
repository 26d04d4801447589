// The lockfile's full rewrite is streamed (encodeLockFileChunks into writeFileAtomicChunks):
// the chunks give exactly the one-string encoder's bytes, a store's rewrite writes them,
// the run lock is checked between the streamed write and the rename (a run taken over
// meanwhile leaves the file as it was), and puts made while a rewrite streams wait for
// the next write. Kills during a streamed rewrite: LockStore.kill.test.ts.

import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Effect, Exit } from "effect";
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { LockTask } from "../../src/state/LockFile.js";
import { LockfileWriteError } from "../../src/state/LockfileError.js";
import { encodeLockFile, encodeLockFileChunks } from "../../src/state/LockfileText.js";
import { LockStore } from "../../src/state/LockStore.js";
import { readLockFile, sha256Hex } from "../../src/state/readLockFile.js";
import { runLockPathOf } from "../../src/state/RunLock.js";
import { writeFileAtomicChunks } from "../../src/state/writeFileAtomic.js";
import { task, taskId } from "./lockTask.js";
import { randomTask, rng } from "./randomTask.js";

const dirs: string[] = [];
const tempDir = async () => {
  const dir = await mkdtemp(join(tmpdir(), "omnibatch-streamed-"));
  dirs.push(dir);
  return dir;
};
test.after(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

const randomTasks = (count: number, seed: number): Map<string, LockTask> => {
  const r = rng(seed);
  const tasks = new Map<string, LockTask>();
  for (let n = 0; n < count; n++) {
    const { id, task: t } = randomTask(r, "spring", n);
    tasks.set(id, t);
  }
  return tasks;
};

test("the chunks joined are the one-string encoder's text, byte for byte, for every chunk size; each chunk is bounded", () => {
  const tasks = randomTasks(2_000, 11);
  const whole = encodeLockFile("spring", tasks, "https://api.example.com/v1");
  for (const size of [1, 100, 4096, 65_536, 1 << 20]) {
    const chunks = [...encodeLockFileChunks("spring", tasks, "https://api.example.com/v1", size)];
    assert.is(chunks.join(""), whole, `chunk size ${size}`);
    const longestLine = Math.max(...whole.split("\n").map((l) => l.length + 2));
    for (const c of chunks) assert.ok(c.length < size + longestLine, `chunk size ${size}: a chunk of ${c.length} characters`);
    if (size < whole.length) assert.ok(chunks.length > 1, `chunk size ${size}: more than one chunk`);
  }
  // No tasks: the header alone; a plain object of tasks as well as a Map.
  assert.is([...encodeLockFileChunks("spring", new Map(), undefined, 10)].join(""), encodeLockFile("spring", new Map()));
  assert.is([...encodeLockFileChunks("spring", Object.fromEntries(tasks), undefined, 777)].join(""), encodeLockFile("spring", tasks));
});

test("the chunks are the records of the call: a later change to the map is not in them", () => {
  const tasks = randomTasks(500, 3);
  const before = encodeLockFile("spring", tasks);
  const chunks = encodeLockFileChunks("spring", tasks, undefined, 256);
  const it = chunks[Symbol.iterator]();
  const first = it.next().value as string;
  for (const id of tasks.keys()) tasks.set(id, task(1, { state: "failed" }));
  tasks.set("zzz-new", task(2));
  let rest = "";
  for (let r = it.next(); !r.done; r = it.next()) rest += r.value;
  assert.is(first + rest, before);
});

test("writeFileAtomicChunks: the file is the chunks' bytes with their sha256; refused at the rename, the old file stays and no temp file is left", async () => {
  const dir = await tempDir();
  const path = join(dir, "f.txt");
  await writeFile(path, "old\n");
  // Parts that fill the 1 MB buffer, one larger than it, multi-byte characters across its ends.
  const chunks = ["é".repeat(1000), "b\n", "", "ü😀\n", "y".repeat(700_000), "😀".repeat(100_000), "z".repeat(350_000), "é".repeat(600_000), "end\n"];
  const refused = await writeFileAtomicChunks(path, chunks, async () => false);
  assert.is(refused, undefined);
  assert.is(await readFile(path, "utf8"), "old\n");
  assert.equal(await readdir(dir), ["f.txt"]);
  const written = await writeFileAtomicChunks(path, chunks);
  const bytes = await readFile(path);
  assert.is(bytes.toString("utf8"), chunks.join(""));
  assert.equal(written, { bytes: bytes.byteLength, sha256: sha256Hex(bytes) });
  assert.equal(await readdir(dir), ["f.txt"]);
});

test("a store's full rewrite in many chunks writes exactly the encoder's bytes for its records", async () => {
  const path = join(await tempDir(), "m.lock.json");
  const tasks = randomTasks(3_000, 5);
  const stats = await Effect.runPromise(
    LockStore.use(
      path,
      "spring",
      (store) =>
        Effect.gen(function* () {
          yield* store.setService("https://api.example.com/v1");
          for (const [id, t] of tasks) yield* store.put(id, t);
          yield* store.compact;
          return yield* store.stats;
        }),
      { chunkBytes: 4096, coalesceMs: 60_000, trace: false },
    ),
  );
  const text = await readFile(path, "utf8");
  assert.ok(text.length > 50 * 4096, "the file spans many chunks");
  assert.is(text, encodeLockFile("spring", tasks, "https://api.example.com/v1"));
  assert.is(stats.compactions, 1);
  assert.is(stats.bytesWritten, Buffer.byteLength(text));
  // The file the store recorded (its sha256) is the one written: a journal on top of it is replayed.
  await Effect.runPromise(
    LockStore.use(path, "spring", (store) => Effect.zipRight(store.put(taskId(1), task(1)), store.flush), { chunkBytes: 4096, coalesceMs: 60_000, trace: false, minCompactBytes: 1 }),
  );
  const again = await readLockFile(path);
  assert.is(Object.keys(again!.tasks).length, tasks.size + 1);
});

/** Resolves once a temp file of the lockfile's rewrite exists in `dir` (bounded: 20 s). */
const tempFileAppears = async (dir: string): Promise<void> => {
  const until = Date.now() + 20_000;
  while (Date.now() < until) {
    if ((await readdir(dir)).some((f) => f.endsWith(".tmp"))) return;
    await new Promise((resolve) => setImmediate(resolve));
  }
  throw new Error("no rewrite began within 20 s");
};

test("the run lock taken over while a rewrite streams: the file is left as it was (the check before the rename), the write fails as lock lost, no temp file is left", async () => {
  const dir = await tempDir();
  const path = join(dir, "m.lock.json");
  const tasks = randomTasks(5_000, 9);
  await Effect.runPromise(
    LockStore.use(path, "spring", (store) => Effect.forEach([...tasks], ([id, t]) => store.put(id, t), { discard: true }), { trace: false }),
  );
  const before = await readFile(path);
  const exit = await Effect.runPromiseExit(
    LockStore.use(
      path,
      "spring",
      (store) =>
        Effect.gen(function* () {
          for (const id of tasks.keys()) yield* store.update(id, (t) => ({ ...t, updated_at: t.updated_at + 1 }));
          // Tiny chunks: the rewrite takes thousands of writes; the takeover lands among them.
          const takeover = Effect.promise(async () => {
            await tempFileAppears(dir);
            await writeFile(join(runLockPathOf(path), "owner.json"), JSON.stringify({ pid: 1, host: "other", started: 2, token: "theirs" }));
          });
          const [, compacted] = yield* Effect.all([takeover, Effect.exit(store.compact)], { concurrency: 2 });
          return compacted;
        }),
      { chunkBytes: 64, coalesceMs: 60_000, heartbeatMs: 600_000, trace: false },
    ),
  );
  assert.ok(Exit.isSuccess(exit));
  const compacted = (exit as Exit.Success<Exit.Exit<void, LockfileWriteError>, never>).value;
  assert.ok(Exit.isFailure(compacted), "the rewrite was refused");
  const error = compacted._tag === "Failure" && compacted.cause._tag === "Fail" ? compacted.cause.error : undefined;
  assert.instance(error, LockfileWriteError);
  assert.is((error as LockfileWriteError).lockLost, true);
  assert.ok((await readFile(path)).equals(before), "the lockfile is byte-identical to before");
  assert.equal((await readdir(dir)).filter((f) => f.endsWith(".tmp")), []);
});

test("puts made while a rewrite streams are not lost: the file holds the records of the rewrite's start, the next flush the puts", async () => {
  const dir = await tempDir();
  const path = join(dir, "m.lock.json");
  const tasks = randomTasks(5_000, 13);
  const late = taskId(424_242);
  const ids = [...tasks.keys()].sort();
  const first = ids[0]!;
  const lastId = ids[ids.length - 1]!;
  let fileAfterCompact = "";
  await Effect.runPromise(
    LockStore.use(
      path,
      "spring",
      (store) =>
        Effect.gen(function* () {
          for (const [id, t] of tasks) yield* store.put(id, t);
          const during = Effect.gen(function* () {
            yield* Effect.promise(() => tempFileAppears(dir));
            yield* store.put(late, task(7));
            // One record already streamed, one not yet: both changed after the rewrite began.
            yield* store.update(first, (t) => ({ ...t, updated_at: t.updated_at + 1000 }));
            yield* store.update(lastId, (t) => ({ ...t, updated_at: t.updated_at + 1000 }));
          });
          yield* Effect.all([during, store.compact], { concurrency: 2 });
          fileAfterCompact = yield* Effect.promise(() => readFile(path, "utf8"));
          yield* store.flush;
        }),
      { chunkBytes: 64, coalesceMs: 60_000, trace: false },
    ),
  );
  assert.is(fileAfterCompact, encodeLockFile("spring", tasks), "the rewrite wrote the records of its start");
  const file = await readLockFile(path);
  assert.ok(file!.tasks[late]);
  assert.is(file!.tasks[first]!.updated_at, tasks.get(first)!.updated_at + 1000);
  assert.is(file!.tasks[lastId]!.updated_at, tasks.get(lastId)!.updated_at + 1000);
});

test.run();
