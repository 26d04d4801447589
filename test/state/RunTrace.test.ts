// The run trace (src/state/RunTrace.ts): whether a lockfile is the one the last run on
// this machine left. Pure rule on every case (no trace, same bytes, other bytes, no file,
// a journal the trace expects and is missing, a killed run), the engine's "look again
// at" rule, and the store writing the trace for real: a rewritten (restored) lockfile or
// a lost journal is noticed at the next open; an untouched one is not.

import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Duration, Effect } from "effect";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { lookupAgainAt } from "../../src/engine/Recovery.js";
import { journalPathOf } from "../../src/state/LockJournal.js";
import { LockStore } from "../../src/state/LockStore.js";
import { mayLackCreatesUntil, parseTrace, traceFileOf, type RunTrace } from "../../src/state/RunTrace.js";
import { task, taskId } from "./lockTask.js";

const trace = (o: Partial<RunTrace> = {}): RunTrace => ({ v: 1, file: "aaa", journal: false, until: 1_000, ...o });

test("mayLackCreatesUntil: no trace → nothing known; the same bytes → complete; anything else → until the trace's time (a killed run: now)", () => {
  assert.is(mayLackCreatesUntil(undefined, { file: "zzz", journalBase: undefined }, 5_000), undefined);
  assert.is(mayLackCreatesUntil(trace(), { file: "aaa", journalBase: undefined }, 5_000), undefined);
  assert.is(mayLackCreatesUntil(trace(), { file: "bbb", journalBase: undefined }, 5_000), 1_000, "other bytes (restored from git)");
  assert.is(mayLackCreatesUntil(trace(), { file: undefined, journalBase: undefined }, 5_000), 1_000, "the file is gone");
  assert.is(mayLackCreatesUntil(trace({ journal: true }), { file: "aaa", journalBase: "aaa" }, 5_000), undefined, "file and its journal");
  assert.is(mayLackCreatesUntil(trace({ journal: true }), { file: "aaa", journalBase: undefined }, 5_000), 1_000, "the journal was lost");
  assert.is(mayLackCreatesUntil(trace({ journal: true }), { file: "aaa", journalBase: "old" }, 5_000), 1_000, "a journal of another file");
  assert.is(mayLackCreatesUntil(trace({ until: null }), { file: "bbb", journalBase: undefined }, 5_000), 5_000, "killed run: up to now");
  assert.is(mayLackCreatesUntil(trace({ until: null, journal: true }), { file: "aaa", journalBase: "aaa" }, 5_000), undefined, "killed run, lockfile intact");
});

test("parseTrace: a damaged or foreign trace says nothing", () => {
  assert.is(parseTrace(undefined), undefined);
  assert.is(parseTrace("{"), undefined);
  assert.is(parseTrace('{"v":2,"file":"a","journal":false,"until":1}'), undefined);
  assert.is(parseTrace('{"v":1,"file":"a","journal":false,"until":"soon"}'), undefined);
  assert.equal(parseTrace('{"v":1,"file":"a","journal":true,"until":null}'), trace({ file: "a", journal: true, until: null }));
});

test("lookupAgainAt: after the window from the time the lockfile may lack creates; never on a fresh service or a complete lockfile", () => {
  assert.is(lookupAgainAt(1_000, Duration.seconds(60), false), 61_000);
  assert.is(lookupAgainAt(1_000, Duration.seconds(60), true), undefined);
  assert.is(lookupAgainAt(undefined, Duration.seconds(60), false), undefined);
});

const put = (n: number) => (store: Parameters<Parameters<typeof LockStore.use>[2]>[0]) =>
  Effect.zipRight(store.put(taskId(n), task(n, { state: "submitting" })), store.flush);

test("store: the trace follows each run; a restored file, a lost journal, a deleted file are noticed, an untouched file is not", async () => {
  const dir = await mkdtemp(join(tmpdir(), "omnibatch-trace-"));
  const path = join(dir, "spring-campaign.lock.json");
  const open = () => Effect.runPromise(LockStore.use(path, "spring-campaign", (s) => Effect.succeed(s.mayLackCreatesUntil)));
  try {
    assert.is(await open(), undefined, "no trace yet: nothing known");
    await Effect.runPromise(LockStore.use(path, "spring-campaign", put(0)));
    const before = await readFile(path, "utf8");
    const first = parseTrace(await readFile(traceFileOf(path), "utf8"));
    assert.ok(first && first.until !== null && first.journal === false, JSON.stringify(first));
    assert.is(await open(), undefined, "the file the run left");

    await Effect.runPromise(LockStore.use(path, "spring-campaign", put(1)));
    await writeFile(path, before); // `git checkout` of the older file
    const lacks = await open();
    assert.ok(lacks !== undefined && Math.abs(lacks - Date.now()) < 10_000, `restored: may lack creates until ${lacks}`);

    await Effect.runPromise(LockStore.use(path, "spring-campaign", put(2)));
    await rm(path);
    assert.ok((await open()) !== undefined, "deleted file");

    // A run killed with its journal: intact → complete; journal lost → noticed.
    await Effect.runPromise(LockStore.use(path, "spring-campaign", put(3)));
    const killed = await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const store = yield* LockStore.open(path, "spring-campaign", { minCompactBytes: 1 << 20 });
          yield* put(4)(store);
          return { file: yield* Effect.promise(() => readFile(path, "utf8")), journal: yield* Effect.promise(() => readFile(journalPathOf(path), "utf8")), trace: yield* Effect.promise(() => readFile(traceFileOf(path), "utf8")) };
        }),
      ),
    );
    // As a kill -9 left it: the file, its journal, the trace of a run in progress.
    assert.is(parseTrace(killed.trace)?.until, null);
    assert.is(parseTrace(killed.trace)?.journal, true);
    const leave = async (withJournal: boolean) => {
      await writeFile(path, killed.file);
      await writeFile(traceFileOf(path), killed.trace);
      if (withJournal) await writeFile(journalPathOf(path), killed.journal);
      else await rm(journalPathOf(path), { force: true });
    };
    await leave(true);
    assert.is(await open(), undefined, "killed with the journal intact");
    await leave(false);
    assert.ok((await open()) !== undefined, "killed, journal lost");
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test.run();
