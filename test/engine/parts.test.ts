// The engine's parts without HTTP: the run against an in-memory service (test/api/
// memoryClient.ts), an in-memory lockfile store and an in-memory downloader
// (test/outputs/memoryDownloader.ts). Each test names the part whose behaviour it pins:
// submitting, recovery, fetching, the stop rules, and time (Effect's TestClock).

import { Duration, Effect, Fiber, TestClock, TestContext } from "effect";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { runEngine, type RunnerOptions } from "../../src/engine/Runner.js";
import { makePolicy } from "../../src/policy/Policy.js";
import { LOCKFILE_VERSION, type LockFile, type LockTask } from "../../src/state/LockFile.js";
import { LockStore } from "../../src/state/LockStore.js";
import { memoryService, type CreateScript } from "../api/memoryClient.js";
import { memoryDownloader } from "../outputs/memoryDownloader.js";
import { testManifest } from "./testManifest.js";

const policy = makePolicy(0.001);

const setup = (o: { create?: CreateScript[]; failures?: number; tasks?: number; lock?: Record<string, LockTask>; concurrency?: number }) => {
  const manifest = testManifest("/memory", {
    name: "mem",
    concurrency: o.concurrency ?? 4,
    tasks: Array.from({ length: o.tasks ?? 1 }, (_, i) => ({ job: "clips", kind: "video" as const, prompt: `p${i}` })),
  });
  const service = memoryService({ create: o.create ?? [] });
  const files = memoryDownloader({ failures: o.failures ?? 0 });
  const initial: LockFile = { lockfile_version: LOCKFILE_VERSION, name: "mem", tasks: o.lock ?? {} };
  const run = (extra: Partial<RunnerOptions> = {}) =>
    Effect.gen(function* () {
      const store = yield* LockStore;
      const result = yield* runEngine({ client: service.client, store, downloader: files.downloader, policy }, { manifest, ...extra });
      return { result, lock: yield* store.snapshot };
    }).pipe(Effect.provide(LockStore.memory("mem", initial)));
  return { manifest, service, files, run, id: (i = 0) => manifest.tasks[i]!.id };
};

const record = (state: LockTask["state"], extra: Partial<LockTask> = {}): LockTask =>
  ({ job: "clips", kind: "video", vars: { i: 0 }, dir: "clips/task-0", request_hash: "hash-0", take: 0, attempt: 0, state, planned_at: 1, updated_at: 1, outputs: [], billing: [], ...extra }) as LockTask;

test("submitting: a create whose answer was lost (it landed) is looked up and adopted, never sent twice", async () => {
  const s = setup({ create: ["land-then-timeout"] });
  const { result, lock } = await Effect.runPromise(s.run());
  assert.is(s.service.made.get(s.id()), 1, "one task at the service");
  assert.is(s.service.calls["createVideo"], 1, "one create sent");
  assert.is(result.adopted, 1);
  assert.is(result.created, 0);
  assert.is(result.outcome, "done");
  assert.is(lock.tasks[s.id()]!.state, "downloaded");
});

test("submitting: a create that never landed and got no answer is looked up, then sent again once", async () => {
  const s = setup({ create: ["timeout"] });
  const { result } = await Effect.runPromise(s.run());
  assert.is(s.service.made.get(s.id()), 1);
  assert.is(s.service.calls["createVideo"], 2);
  assert.ok((s.service.calls["queryVideos"] ?? 0) >= 2, "looked up before the second send");
  assert.is(result.outcome, "done");
});

test("submitting: a 1303 puts the task back for a slot; it is created once and the run ends done", async () => {
  const s = setup({ create: ["no-slot"] });
  const { result } = await Effect.runPromise(s.run());
  assert.is(result.noSlotAnswers, 1);
  assert.is(s.service.made.get(s.id()), 1);
  assert.is(result.exitCode, 0);
});

test("submitting: a refusal stops all submission: outcome refused, exit 5, the task back to planned", async () => {
  const s = setup({ create: ["refused"], tasks: 2, concurrency: 1 });
  const { result, lock } = await Effect.runPromise(s.run());
  assert.is(result.outcome, "refused");
  assert.is(result.exitCode, 5);
  assert.is(s.service.calls["createVideo"], 1, "the second task was never sent");
  assert.is(lock.tasks[s.id(0)]!.state, "planned");
});

test("recovery: a task a killed run left `submitting` is found at start-up and followed; no create is sent", async () => {
  const s0 = setup({});
  const id = s0.id();
  const s = setup({ lock: { [id]: record("submitting") } });
  s.service.seed(id, "video", "processing");
  const { result, lock } = await Effect.runPromise(s.run());
  assert.is(s.service.calls["createVideo"], undefined);
  assert.is(result.adopted, 1);
  assert.is(lock.tasks[id]!.state, "downloaded");
});

test("fetching: a download failing round after round leaves the task for a later run (pending, exit 3), recorded succeeded", async () => {
  const s = setup({ failures: 99 });
  const { result, lock } = await Effect.runPromise(s.run());
  assert.is(s.files.attempts(), policy.downloadRounds);
  assert.is(result.outcome, "pending");
  assert.is(result.exitCode, 3);
  assert.is(lock.tasks[s.id()]!.state, "succeeded");
});

test("fetching: one failed round, then fresh links from the next poll and the files arrive", async () => {
  const s = setup({ failures: 1 });
  const { result } = await Effect.runPromise(s.run());
  assert.is(s.files.attempts(), 2);
  assert.is(result.outcome, "done");
  assert.is(result.downloaded, 1);
});

test("time: the time limit runs on Effect's clock: moving the test clock past it stops the run (pending, exit 3)", async () => {
  const s = setup({});
  const slow = makePolicy(1); // first poll of a video 3 s after its create
  const program = Effect.gen(function* () {
    const fiber = yield* Effect.fork(
      Effect.gen(function* () {
        const store = yield* LockStore;
        return yield* runEngine({ client: s.service.client, store, downloader: s.files.downloader, policy: slow }, { manifest: s.manifest, maxWaitMs: 1_000 });
      }).pipe(Effect.provide(LockStore.memory("mem"))),
    );
    yield* TestClock.adjust(Duration.millis(1_500));
    return yield* Fiber.join(fiber);
  }).pipe(Effect.provide(TestContext.TestContext));
  const result = await Effect.runPromise(program);
  assert.is(result.outcome, "pending");
  assert.is(result.reason, "time limit reached");
  assert.is(s.service.calls["createVideo"], 1);
  // One query: the start-up lookup (there was no lockfile). No poll: the clock stopped short of the first one.
  assert.is(s.service.calls["queryVideos"], 1);
});

test.run();
