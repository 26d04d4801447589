// The run itself: one controller fiber feeds every event to the task state machine
// (transition.ts) and performs the effects it asks for through the named parts:
// Submitting (creates), Following (polls, callbacks), Fetching (downloads), Planning
// (tasks entering), the Recorder (the lockfile) and the Summary. Workers report back
// through one inbox. A create's intent is flushed before it is sent, so a kill at any
// point leaves a lockfile from which the next run resumes without paying twice.
// The loop and who owns what: README.md in this folder.

import { Clock, Deferred, Duration, Effect, Exit, FiberSet, Option } from "effect";
import type { CallbackFeed, CallbackObservation } from "../callbacks/CallbackListener.js";
import type { DownloaderService } from "../outputs/Downloader.js";
import type { Policy } from "../policy/Policy.js";
import { afterSend, runLockLost, type LockfileWriteAfterSend, type LockfileWriteError, type RunLockLost } from "../state/LockfileError.js";
import type { LockStoreService } from "../state/LockStore.js";
import type { OmniClientService } from "../api/OmniClient.js";
import type { CreateOutcome, EngineEffect, EngineEvent, FetchOutcome, StopReason } from "./EngineEvent.js";
import { makeFetching } from "./Fetching.js";
import { listen, poll } from "./Following.js";
import { Inbox } from "./Inbox.js";
import { makePlanning, ReviewHold, UpstreamLinks, type Planning } from "./Planning.js";
import type { DecisionIndex } from "../review/reviewDecision.js";
import { Recorder } from "./Recorder.js";
import { forgetOldService, recover } from "./Recovery.js";
import type { AttemptWalk } from "../plan/attempts.js";
import type { RunEvent } from "./RunEvent.js";
import type { RunnableManifest } from "./RunnableManifest.js";
import type { RunSelection } from "./RunSelection.js";
import { makeKindAdapters } from "./ServiceKinds.js";
import { makeSubmitting } from "./Submitting.js";
import { leftBehind, summarize, type RunnerResult } from "./Summary.js";
import { TaskTable } from "./TaskTable.js";
import { transition } from "./transition.js";

export type { RunnerResult } from "./Summary.js";

export interface RunnerDeps {
  readonly client: OmniClientService;
  readonly store: LockStoreService;
  readonly downloader: DownloaderService;
  readonly policy: Policy;
}

export interface RunnerOptions {
  readonly manifest: RunnableManifest;
  /** Overrides the manifest's concurrency. */
  readonly concurrency?: number;
  /** Stop submitting and waiting after this long (exit 3). */
  readonly maxWaitMs?: number;
  /** Aborting it stops the run at once (exit 3), as SIGINT does. */
  readonly signal?: AbortSignal;
  readonly onEvent?: (event: RunEvent) => void;
  /**
   * The service is new and knows none of the lockfile's tasks (an in-process emulator,
   * started afresh by every `--emulate` run). Tasks not finished locally are planned
   * again from scratch, with no lookups: nothing real was ever paid for them.
   */
  readonly freshService?: boolean;
  /** Callbacks: its address goes on every create; each observation is only a cue to query that task soon. */
  readonly callbacks?: CallbackFeed;
  /** A run of a chosen part (--only, --where, --failed, a saved plan); undefined: the whole manifest. */
  readonly selection?: RunSelection;
  /** Review decisions (the review file, read by src/run/): outputs of a `review` job go downstream only once approved. */
  readonly reviews?: DecisionIndex;
  /** Make tasks whose results are lost again, as new attempts with new ids (`run --recreate-lost`). */
  readonly recreateLost?: boolean;
  /** The service's address (no credentials), named in the line of an answer that refuses the run (api/refusal.ts). */
  readonly address?: string;
  /**
   * The run's plan (src/plan/diffPlan.ts, made once by src/run/prepareRun.ts with the
   * run's rules): its attempt walk of each of `manifest.tasks`, in that order, each with
   * the record it reached; the engine admits them as they are. Absent (the engine run
   * alone, as in its tests): each task is walked at the start by the same walk.
   */
  readonly plan?: { readonly walks: readonly AttemptWalk[] };
}

/** What workers and the outside put in the controller's inbox; the time is stamped when it is taken. */
type Message =
  | CreateOutcome
  | FetchOutcome
  | { readonly _tag: "Stop"; readonly reason: StopReason }
  | { readonly _tag: "Callback"; readonly observation: CallbackObservation }
  | { readonly _tag: "IntentsWritten"; readonly ids: readonly string[]; readonly ok: boolean };

/** The task table of a run: its settings (slots, lookups, the deadline, the budget) and the account's currency. */
const tableOf = (
  manifest: RunnableManifest,
  options: RunnerOptions,
  store: LockStoreService,
  recorder: Recorder,
  policy: Policy,
  concurrency: number,
  started: number,
): TaskTable => {
  const fresh = options.freshService === true;
  // Image tasks report cash charges without a currency: they are in the account's
  // currency, which the budget or prices name, or which video charges show.
  let currency: string | undefined = manifest.budget?.currency ?? manifest.prices?.currency;
  if (currency === undefined) {
    for (const t of recorder.records.values()) {
      currency = t.billing.find((b) => b.currency !== undefined)?.currency;
      if (currency !== undefined) break;
    }
  }
  const jobById = new Map(manifest.jobs.map((j) => [j.id, j] as const));
  const table = new TaskTable(
    {
      concurrency,
      policy,
      callbacks: options.callbacks !== undefined,
      // Any task the lockfile does not record as created may exist all the same (a
      // lockfile restored from git, a lost journal): looked up by external id before
      // its first create (start-up lookups are batched, Recovery.ts). A fresh service
      // cannot hold tasks this lockfile lost: no lookups there.
      lookupFirst: !fresh,
      mayLackCreates: !fresh && store.mayLackCreatesUntil !== undefined,
      freshService: fresh,
      ...(options.maxWaitMs !== undefined ? { deadline: started + options.maxWaitMs } : {}),
      ...(manifest.budget ? { budget: manifest.budget } : {}),
      withAttempt: (task, attempt) => manifest.withAttempt(task, attempt),
      retryFailedOf: (job) => jobById.get(job)?.retryFailed,
    },
    currency,
  );
  return table;
};

/**
 * The run's end, once the loop stopped and its workers are gone: intents whose create never
 * started are planned again, tasks left behind are named, and the summary is made.
 */
const wrapUp = (
  table: TaskTable,
  recorder: Recorder,
  store: LockStoreService,
  manifest: RunnableManifest,
  options: RunnerOptions,
  emit: (event: RunEvent) => void,
  planning: Planning,
  started: number,
  hold: ReviewHold,
) =>
  Effect.gen(function* () {
    const now = Clock.currentTimeMillis;
    // Intents written ahead whose create never started: nothing was sent, so planned
    // again (quietly: they were never announced), and the next run creates them at once.
    const stoppedAt = yield* now;
    for (const e of table.intentsUnsent()) yield* recorder.record(e.task, { state: "planned" }, stoppedAt, true);
    yield* store.flush;
    // A run of a chosen part names only what it chose: the rest is left as it was on purpose.
    const sel = options.selection;
    for (const { id, state } of leftBehind(table, recorder, sel ? (rec) => !sel.failed && sel.selects(rec) : undefined)) {
      emit({
        type: "notice",
        level: "warn",
        message: `${id}: ${state} in the lockfile but not taken up by this run (no longer in the manifest, or its upstream task is not done); its result is not fetched. It stays in the lockfile: restore its manifest entry (or let the upstream finish) and run again to fetch it`,
      });
    }
    const ended = yield* now;
    const lost = yield* planning.lostOfRun;
    return summarize(table, recorder, manifest, ended - started, hold, lost, planning.held.size, [...planning.unexpanded.values()]);
  });

export const runEngine = (
  deps: RunnerDeps,
  options: RunnerOptions,
): Effect.Effect<RunnerResult, LockfileWriteError | LockfileWriteAfterSend | RunLockLost> => {
  // Whether this run may have sent a create: a lockfile write failing after that is no
  // "nothing was sent" (exit 2) but paid work to resume (LockfileWriteAfterSend, exit 3).
  let maybeSent = (): boolean => false;
  return Effect.scoped(
    Effect.gen(function* () {
      const { client, store, downloader, policy } = deps;
      const manifest = options.manifest;
      const started = yield* Clock.currentTimeMillis;
      const emit = (event: RunEvent) => options.onEvent?.(event);
      const concurrency = Math.max(1, options.concurrency ?? manifest.concurrency);
      const fresh = options.freshService === true;

      const recorder = new Recorder(store, emit, manifest.budget?.currency ?? "", yield* store.view, manifest.outputsDir);
      if (fresh) yield* forgetOldService(recorder);
      const table = tableOf(manifest, options, store, recorder, policy, concurrency, started);
      maybeSent = () =>
        table.counters.created > 0 ||
        table.counters.creating > 0 ||
        // (an intent written ahead for a task still waiting was never sent)
        [...table.entries.values()].some((e) => (e.recorded === "submitting" && e.intent === undefined) || e.sendFailures > 0);

      // The loop's clock (a TestClock in tests), read without an effect per message.
      const clock = yield* Effect.clock;
      const inbox = new Inbox<Message>(yield* FiberSet.make<void, never>());
      // The deadline (--max-wait) and the interrupt (the first Ctrl-C) end every wait: the
      // loop's own, and the parts the controller performs inline (the start-up lookup, a
      // poll), which a stalled service could otherwise hold for minutes (timeouts times
      // retries). Workers (creates, downloads) are interrupted when the loop ends.
      const stopped = yield* Deferred.make<StopReason>();
      if (options.maxWaitMs !== undefined) {
        const deadlineIn = Math.max(0, started + options.maxWaitMs - (yield* Clock.currentTimeMillis));
        yield* Effect.forkScoped(Effect.sleep(Duration.millis(deadlineIn)).pipe(Effect.zipRight(Deferred.succeed(stopped, "time"))));
      }
      const onAbort = () => {
        Deferred.unsafeDone(stopped, Exit.succeed("signal"));
        inbox.offer({ _tag: "Stop", reason: "signal" });
      };
      // A run whose lock was taken over stops at once (it can write nothing more, and must
      // not keep polling and downloading beside the run that holds the lock now).
      yield* Effect.forkScoped(
        Effect.flatMap(store.lockLost, () =>
          Effect.sync(() => {
            Deferred.unsafeDone(stopped, Exit.succeed("lock"));
            inbox.offer({ _tag: "Stop", reason: "lock" });
          }),
        ),
      );
      if (options.signal?.aborted) onAbort();
      options.signal?.addEventListener("abort", onAbort, { once: true });
      yield* Effect.addFinalizer(() => Effect.sync(() => options.signal?.removeEventListener("abort", onAbort)));
      const feedStop = Effect.flatMap(Deferred.await(stopped), (reason) =>
        Effect.flatMap(Clock.currentTimeMillis, (at) => Effect.suspend(() => perform(transition(table, { _tag: "Stop", reason, now: at }).effects))),
      );
      /**
       * `effect`'s result, unless the run is stopped first: then it is interrupted, and only
       * once it is (nothing more of it can be sent) is the Stop fed and `onStop` returned.
       */
      const untilStopped = <A>(effect: Effect.Effect<A>, onStop: A): Effect.Effect<A> =>
        Effect.flatMap(Effect.raceFirst(Effect.map(effect, Option.some), Effect.as(Deferred.await(stopped), Option.none<A>())), (result) =>
          Option.isSome(result) ? Effect.succeed(result.value) : Effect.as(feedStop, onStop),
        );
      if (options.callbacks) {
        // A dropped callback is told (a few times, then counted quietly): it may be an attack.
        let drops = 0;
        const onDrop = (reason: string) => {
          drops++;
          if (drops <= 3) emit({ type: "notice", level: "warn", message: `callback dropped: ${reason}${drops === 3 ? " (further drops are not shown)" : ""}` });
        };
        yield* listen(options.callbacks, (observation) => inbox.offer({ _tag: "Callback", observation }), onDrop);
      }
      const workers = yield* FiberSet.make<void, never>();
      const fork = <A extends Message>(worker: Effect.Effect<A>) =>
        Effect.asVoid(FiberSet.run(workers, Effect.flatMap(worker, (m) => Effect.sync(() => inbox.offer(m)))));

      const adapters = makeKindAdapters(client, policy, () => table.currency);
      const links = new UpstreamLinks();
      // Fresh links are kept only for jobs a for_each job reads (a downstream create
      // sends them); kept for every task, 200,000 tasks held every result URL to the end.
      const feedsDownstream = new Set(manifest.jobs.flatMap((j) => (j.upstream ? [j.upstream.job] : [])));
      const now = Clock.currentTimeMillis;
      // Runs one event through the state machine and performs its effects, in order;
      // effects that admit tasks feed their own events back here first (depth first).
      const feed = (event: EngineEvent): Effect.Effect<void> => Effect.suspend(() => perform(transition(table, event).effects));
      const hold = new ReviewHold();
      const planning = makePlanning({
        manifest, table, recorder, downloader, links, emit, feed, now, hold,
        recreateLost: options.recreateLost === true,
        ...(options.selection ? { selection: options.selection } : {}),
        ...(options.reviews ? { reviews: options.reviews } : {}),
      });
      const submitting = makeSubmitting({ adapters, recorder, store, policy, manifest, table, links, planning, callbackUrl: options.callbacks?.url, address: options.address ?? "" });
      const fetching = makeFetching({ downloader, adapters, recorder, policy, table, fork });

      // Most events ask for no effect or one: those skip the loop over them.
      const perform = (effects: readonly EngineEffect[]): Effect.Effect<void> =>
        effects.length === 0 ? Effect.void : effects.length === 1 ? performOne(effects[0]!) : Effect.forEach(effects, performOne, { discard: true });
      const performOne = (effect: EngineEffect): Effect.Effect<void> => {
        switch (effect._tag) {
          case "Record":
            return recorder.record(effect.task, effect.patch, effect.at, effect.quiet === true);
          case "FlushIntents":
            // Intents written ahead: durable before any of their creates may skip its own write.
            return fork(Effect.map(Effect.either(store.flush), (r) => ({ _tag: "IntentsWritten", ids: effect.ids, ok: r._tag === "Right" }) as const));
          case "Emit":
            return Effect.sync(() => emit(effect.event));
          case "Create":
            return fork(submitting.create(effect));
          case "Poll":
            // Only the asking is cut short by a stop; its answer, once in, is taken in whole.
            return Effect.flatMap(untilStopped(Effect.map(poll(adapters[effect.kind], effect, options.address), Option.some), Option.none()), (answer) =>
              Option.isSome(answer) ? feed(answer.value) : Effect.void,
            );
          case "Download":
            return fetching.enqueue(effect.entry, effect.view);
          case "Expand":
            return planning.expand(effect.entry);
          case "Retry":
            return planning.retry(effect.task, effect.firstAttempt, effect.parentCreatedHere);
          case "Links":
            return Effect.sync(() => {
              const job = table.entries.get(effect.id)?.task.job;
              if (job === undefined || feedsDownstream.has(job)) links.set(effect.id, effect.outputs, effect.at);
            });
        }
      };

      /** An inbox message, stamped with the time it is taken. */
      const handle = (msg: Message): Effect.Effect<void> =>
        msg._tag === "Fetched" || msg._tag === "FetchFailed"
          ? Effect.zipRight(
              fetching.finished,
              Effect.suspend(() => feed({ ...msg, now: clock.unsafeCurrentTimeMillis() })),
            )
          : feed({ ...msg, now: clock.unsafeCurrentTimeMillis() } as EngineEvent);

      // ------------------------------------------------------------ start-up

      emit({
        type: "start",
        manifest: manifest.file,
        name: manifest.name,
        lockfile: manifest.lockfilePath,
        outputs: manifest.outputsDir,
        tasks: manifest.tasks.length,
        jobs: manifest.jobs.map((j) => j.id),
        concurrency,
      });
      // A stop during the start-up lookup leaves the tasks not yet looked up as they were
      // (each is looked up before its create, by this run or the next).
      yield* untilStopped(
        recover({ manifest, table, planning, adapters, feed, emit, mayLackCreatesUntil: store.mayLackCreatesUntil, address: options.address, walks: options.plan?.walks }),
        undefined,
      );
      yield* store.flush;

      // ------------------------------------------------------------ the loop

      const wakeAtLeast = Duration.toMillis(policy.loopWakeAtLeast);

      for (;;) {
        // Take in everything the workers said, without waiting.
        for (let msg = inbox.take(); msg !== undefined; msg = inbox.take()) yield* handle(msg);
        const tickAt = clock.unsafeCurrentTimeMillis();
        yield* feed({ _tag: "Tick", now: tickAt, ...(table.config.budget ? { charged: recorder.charged() } : {}) });
        const step = table.loop;
        if (step._tag !== "Wait") break;
        // Until a message comes, or the time the tick asked for (at most wakeAtLeast on).
        yield* inbox.waitUntil(Math.min(step.until, tickAt + wakeAtLeast), clock.unsafeCurrentTimeMillis());
      }

      // ------------------------------------------------------------ stopping

      // Workers still running are interrupted: a create cut off stays `submitting` and is
      // looked up by the next run; a download cut off leaves only a temp file.
      yield* FiberSet.clear(workers);
      if (table.stop === "lock") return yield* Effect.fail(runLockLost(store.path));
      return yield* wrapUp(table, recorder, store, manifest, options, emit, planning, started, hold);
    }),
  ).pipe(
    Effect.mapError((error) =>
      error._tag !== "LockfileWriteError" ? error : maybeSent() ? afterSend(error) : error.lockLost === true ? runLockLost(error.path) : error,
    ),
  );
};
