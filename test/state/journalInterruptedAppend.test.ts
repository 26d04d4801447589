// Guarantee: a flush interrupted while its journal append is on its way (a stop:
// SIGINT/SIGTERM, --max-wait, interrupting the write-ahead flush of intents) never lets a
// second append run beside it: the journal keeps one header, so a kill -9 before the
// closing compaction leaves a journal the next run reads.
//
// Review finding (src/state/LockStore.ts, fixed there): the append's disk side could be
// interrupted; the interrupted flush gave its write permit back while its write went on,
// and the stop's own flush, seeing the journal still empty, wrote a second header. The next
// run refused the journal (exit 2). Here the first append is held on purpose: the run
// trace it writes before a new journal is a named pipe (FIFO) that nobody reads yet, so the
// write blocks in the kernel until the test opens the pipe. Real file system; Linux/macOS
// (`mkfifo`).

import { execFileSync } from "node:child_process";
import { mkdtemp, readFile, rm, unlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Effect, Fiber, Option } from "effect";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { encodeJournalHeader, encodeJournalRecord, journalPathOf, replayJournal } from "../../src/state/LockJournal.js";
import { LockStore } from "../../src/state/LockStore.js";
import { readLockFile } from "../../src/state/readLockFile.js";
import { traceFileOf } from "../../src/state/RunTrace.js";
import { task, taskId } from "./lockTask.js";

const dirs: string[] = [];
test.after(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test("a stop interrupting the first journal append, then the stop's own flush: one header, and the journal reads back with both changes", async () => {
  const dir = await mkdtemp(join(tmpdir(), "omnibatch-journal-interrupt-"));
  dirs.push(dir);
  const path = join(dir, "m.lock.json");
  const journal = journalPathOf(path);
  const trace = traceFileOf(path);
  // A lockfile in the current format and a run trace (so the next open hashes the file and
  // the first append's first wait is the trace write).
  await Effect.runPromise(LockStore.use(path, "spring-campaign", (store) => store.put(taskId(1), task(1))));
  let journalText = "";
  let readBack: Awaited<ReturnType<typeof readLockFile>> | Error | undefined;
  await Effect.runPromise(
    LockStore.use(
      path,
      "spring-campaign",
      (store) =>
        Effect.gen(function* () {
          // From here, writing the trace blocks until someone opens the pipe for reading.
          yield* Effect.promise(() => unlink(trace));
          execFileSync("mkfifo", [trace]);
          yield* store.put(taskId(2), task(2, { state: "submitting" }));
          const first = yield* Effect.fork(store.flush);
          // Bounded: the flush reaches the blocked trace write within microseconds of CPU.
          for (let i = 0; i < 20; i++) yield* Effect.sleep("10 millis");
          assert.ok(Option.isNone(yield* Fiber.poll(first)), "the first append is held at the pipe");
          // The stop: the in-flight flush is interrupted (without waiting for it here: a
          // flush whose disk side cannot be interrupted finishes first), then the stop's flush.
          const interrupting = yield* Effect.fork(Fiber.interrupt(first));
          yield* store.put(taskId(3), task(3, { state: "planned" }));
          const second = yield* Effect.fork(store.flush);
          for (let i = 0; i < 20; i++) yield* Effect.sleep("10 millis");
          // Let the held write through: read the pipe to its end (every writer closed).
          yield* Effect.promise(() => readFile(trace));
          yield* Effect.promise(() => unlink(trace));
          yield* Fiber.join(second);
          yield* Fiber.join(interrupting);
          // An interrupted append (old code) is not waited for by anyone: give it time to land.
          for (let i = 0; i < 100; i++) {
            journalText = yield* Effect.promise(() => readFile(journal, "utf8").catch(() => ""));
            if (journalText.includes(taskId(2)) && journalText.includes(taskId(3))) break;
            yield* Effect.promise(() => sleep(20));
          }
          yield* Effect.promise(() => sleep(100));
          journalText = yield* Effect.promise(() => readFile(journal, "utf8"));
          // What a run started after a kill -9 here would read (read-only; the store then compacts).
          readBack = yield* Effect.promise(() => readLockFile(path).catch((error: Error) => error));
        }),
      { heartbeatMs: 600_000, coalesceMs: 60_000 },
    ),
  );
  const headers = journalText.split("\n").filter((line) => line.includes('"journal":'));
  assert.is(headers.length, 1, `one journal header, got ${headers.length}:\n${journalText}`);
  assert.ok(readBack !== undefined && !(readBack instanceof Error), `the journal reads back: ${String(readBack)}`);
  const tasks = (readBack as Exclude<typeof readBack, Error | undefined>)!.tasks;
  assert.is(tasks[taskId(2)]?.state, "submitting");
  assert.is(tasks[taskId(3)]?.state, "planned");
  // After the closing compaction, the file holds all three.
  const closed = await readLockFile(path);
  assert.equal(Object.keys(closed!.tasks).sort(), [taskId(1), taskId(2), taskId(3)].sort());
});

test("a journal with its header repeated (left by an older build) is refused, saying why, not replayed out of order", () => {
  const header = encodeJournalHeader("spring-campaign", "ab".repeat(32));
  // The second batch (an older state of task 2) landed after the first: replaying would undo `submitting`.
  const text =
    header +
    encodeJournalRecord("spring-campaign", taskId(2), task(2, { state: "submitting" })) +
    header +
    encodeJournalRecord("spring-campaign", taskId(2), task(2, { state: "planned" }));
  const replayed = replayJournal(text);
  assert.type(replayed, "string");
  assert.match(replayed as string, /line 3 repeats the header \(line 1\): two writes of one run ran at once/);
  // One header: read as before.
  const once = replayJournal(header + encodeJournalRecord("spring-campaign", taskId(2), task(2, { state: "submitting" })));
  assert.is(typeof once === "string" ? once : once.tasks.get(taskId(2))?.state, "submitting");
});

test.run();
