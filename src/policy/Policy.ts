// Every retry, wait and polling rhythm of the engine, as named values in one place, so a
// reader finds them and a test can swap them (RunPolicy.layer(makePolicy(0.01))).
// Durations are given at the real service's speed and multiplied by `scale`.

import { Context, Duration, Layer, Schedule } from "effect";
import type { SlotPools, SlotShareRule } from "./slotShare.js";

export type ProductKind = "video" | "image";

export interface Policy {
  /** Multiplier applied to every duration below (1 = real service speed). */
  readonly scale: number;
  /** Retrying a request whose error class is "retry" (1302, 5xx, network) when resending is safe. */
  readonly requestRetry: Schedule.Schedule<unknown, unknown>;
  /**
   * The longest wait a `Retry-After` header may impose on one retry (the service's ask is
   * honoured up to this; a longer one is cut to it). The request retry's own cap.
   */
  readonly retryAfterCap: Duration.Duration;
  /** Retrying a download (truncated body, reset, expired link refreshed). */
  readonly downloadRetry: Schedule.Schedule<unknown, unknown>;
  /**
   * A create whose outcome is unknown (5xx after the body was sent, a reset) is never sent
   * again until a lookup that started this long after that send finds nothing: the
   * service's visibility lag (a new task may be invisible to queries for several
   * seconds) plus a wide margin. Until then the task holds its slots and is looked up
   * with every poll.
   */
  readonly unknownOutcomeWindow: Duration.Duration;
  /**
   * After a 1303 ("no slot") no create of that kind leaves for this long, doubled with each
   * refusal in a row up to `noSlotWaitMax`; one of the run's own tasks of the kind ending
   * ends the wait (src/policy/slotShare.ts).
   */
  readonly noSlotWait: Duration.Duration;
  readonly noSlotWaitMax: Duration.Duration;
  /** Polling interval for in-flight tasks of a kind, from the age of the youngest one. */
  readonly pollInterval: (kind: ProductKind, youngestAgeMs: number) => Duration.Duration;
  /**
   * Adaptive polling (src/engine/pollTiming.ts): once `durationSamples` tasks of a kind and
   * settings have finished, that kind is polled when the slot-time expected to have idled
   * since its last poll (tasks ended unseen) reaches `pollIdleBudget`, never sooner than
   * `pollFloor` after the last poll and never later than `pollCeiling`; tasks without
   * evidence keep `pollInterval`.
   */
  readonly pollIdleBudget: (kind: ProductKind) => Duration.Duration;
  readonly pollFloor: (kind: ProductKind) => Duration.Duration;
  readonly pollCeiling: (kind: ProductKind) => Duration.Duration;
  readonly durationSamples: number;
  /** A task in flight that no answer has shown for this long is left for a later run. */
  readonly missingAfter: Duration.Duration;
  /** A result URL older than this is refreshed by querying its task before it is used. */
  readonly urlFreshFor: Duration.Duration;
  /** At most this many creates on the wire at once. */
  readonly createConcurrency: number;
  /**
   * While tasks wait for a slot, the intents (`submitting`, flushed) of up to this many of
   * the next ones are written ahead, so a freed slot costs only the create's round trip
   * (createRules.ts `intentsToWrite`). Each is a task the next run looks up before
   * creating if this one is killed (a clean stop sets them back to planned).
   */
  readonly intentsAhead: number;
  /** At most this many files downloading at once. */
  readonly downloadConcurrency: number;
  /** With this many image tasks in flight or fewer, follow them one by one (B2) instead of listing pages (B3). */
  readonly imageSingleQueryMax: number;
  /** Page size of the image list when following or looking up. */
  readonly imagePageSize: number;
  /** Upper bound on pages read in one image listing pass (B3 allows pageNum <= 1000). */
  readonly imageMaxPages: number;
  /** AIMD (src/policy/slotShare.ts): on a 1303 the limit drops to this times the slots held plus the refused task's ... */
  readonly slotDecrease: number;
  /** ... and grows by this many slots per limit's worth of the run's tasks ended. */
  readonly slotIncrease: number;
  /** Plain (non-TTY) progress: a summary line at least this often. */
  readonly summaryEvery: Duration.Duration;
  /** While callbacks flow, in-flight tasks of a kind are polled only this often (lost callbacks are still found). */
  readonly callbackPollInterval: (kind: ProductKind) => Duration.Duration;
  /**
   * Queries cued by callbacks (a callback is only a cue to query the task now) are at
   * least this far apart per kind, and cover every task cued meanwhile in one query: a
   * flood of callbacks, forged or not, costs at most one query per spacing.
   */
  readonly cueQuerySpacing: Duration.Duration;
  /**
   * Videos: a cue (a callback saying a task ended) lends that task's slot to the next
   * waiting create at once; the service answers 1303 if it was not free (nothing created).
   * The cued task is then recorded from a query made once `cueBatch` lent tasks wait or
   * the oldest has waited `cueHold` (src/engine/cueRules.ts).
   */
  readonly lendOnCue: boolean;
  readonly cueHold: Duration.Duration;
  readonly cueBatch: number;
  /** A task not heard from by callback this long after its create makes polling return to its normal rhythm. */
  readonly callbackGrace: Duration.Duration;
  /** How long a task of a kind is expected to take, until `callbackSamples` have finished (then: the longest seen). */
  readonly expectedDuration: (kind: ProductKind) => Duration.Duration;
  readonly callbackSamples: number;
  /** A task older than its expected duration times this is overdue: its callback may be lost, polling returns to normal. */
  readonly callbackOverdueFactor: number;
  /** Sends of one create (resends after an unknown outcome found nothing) before the worker gives up for now. */
  readonly sendsPerCreate: number;
  /** Sends of a downstream create again with fresh upstream links, after the service could not fetch them. */
  readonly linkRefreshesPerCreate: number;
  /** A create whose upstream links keep failing is rejected once it has failed this many times. */
  readonly linkFailuresBeforeReject: number;
  /** A task whose creates went unconfirmed this many times is left for a later run. */
  readonly sendFailuresBeforeStuck: number;
  /** How long a task waits after an unconfirmed create before it may be sent again. */
  readonly sendFailedWait: Duration.Duration;
  /**
   * After an answer refuses the run (exit 5), how long the creates already in flight are
   * given to report before the run ends: each answer is recorded (a second refusal leaves
   * its task planned, a success records the task), where one cut off stays "outcome unknown".
   */
  readonly refusedDrainWait: Duration.Duration;
  /** Download rounds of one task (each with fresh links) before it is left for a later run. */
  readonly downloadRounds: number;
  /** Tasks downloading at once (each fetches its files `downloadConcurrency` at a time). */
  readonly tasksDownloading: number;
  /** Polls in a row without the task (and `missingAfter` passed) before it is left for a later run. */
  readonly missingPolls: number;
  /**
   * `succeeded` answers listing too few results (engine/resultCount.ts) taken before the
   * missing ones are recorded lost, or the time since the first of them, whichever ends first.
   */
  readonly shortAnswers: number;
  readonly shortAnswerWait: Duration.Duration;
  /** The loop looks at the time at least this often, however far the next poll is. */
  readonly loopWakeAtLeast: Duration.Duration;
  /**
   * Several manifests run in one process (src/run/runManifests.ts) share one pool of slots
   * per product: a run's own limit is then only its concurrency, and the pool's share
   * (src/policy/slotShare.ts) counts the slots all of them hold. Absent: the run's own.
   */
  readonly slotPools?: SlotPools;
}

const ms = (n: number): Duration.Duration => Duration.millis(Math.max(1, Math.round(n)));

/** The request retry's longest wait, and so the most a `Retry-After` may ask for (real speed); src/api/retry.ts cuts a longer ask to it. */
export const RETRY_AFTER_CAP_MS = 20_000;

/** Exponential from `base`, jittered, each wait capped at `cap`, at most `times` retries. */
const backoff = (base: number, cap: number, times: number): Schedule.Schedule<unknown, unknown> =>
  Schedule.exponential(ms(base), 2).pipe(
    Schedule.modifyDelay((d) => Duration.min(d, ms(cap))),
    Schedule.jittered,
    Schedule.intersect(Schedule.recurs(times)),
  );

/**
 * Polling grows with age: a task that has run a minute is not going to finish in the
 * next second, and asking less often costs the account nothing. Images finish in tens of
 * seconds, videos in minutes, so they start and cap at different rhythms.
 */
const pollRhythm = {
  image: { startMs: 1_000, growth: 0.1, capMs: 5_000 },
  video: { startMs: 3_000, growth: 0.1, capMs: 15_000 },
} as const;

/**
 * Adaptive polling, once durations have been seen. The idle budget is what one query is
 * worth in idle slot-time: with 8 video slots of 1-to-8-minute tasks, 3.2 s gives about
 * 2.46 queries per task and leaves about 3 % of slot-time idle (simulated, docs/
 * benchmarks.md, "Adaptive polling"). The floor keeps a kind from being asked more often than every 2 s
 * (videos) or 1 s (images); the ceiling (1 minute, 20 s) bounds how late a slow or stuck
 * task is noticed. The floor is at most the rhythm's start and the ceiling at least its
 * cap, so without evidence the rhythm holds.
 */
const adaptiveRhythm = {
  image: { idleBudgetMs: 1_000, floorMs: 1_000, ceilingMs: 20_000 },
  video: { idleBudgetMs: 3_200, floorMs: 2_000, ceilingMs: 60_000 },
  samples: 5,
} as const;

/**
 * With callbacks arriving, polling only guards against lost ones: ten times the longest
 * normal interval. A task unheard past the grace, or running past 1.5 times the longest
 * duration seen (10 min video / 3 min image until 5 have finished), brings polling back.
 */
const callbackRhythm = {
  stretch: 10,
  graceMs: 5_000,
  expectedMs: { image: 3 * 60_000, video: 10 * 60_000 },
  samples: 5,
  overdueFactor: 1.5,
  cueSpacingMs: 1_000,
  // A lent task's answer only records it (its slot is already in use): wait for a few
  // more ends to share the query, at most two minutes. With 8 slots of 1-to-8-minute
  // videos an end comes about every 34 s, so a query covers three or four ends.
  cueHoldMs: 120_000,
  cueBatch: 4,
} as const;

export const makePolicy = (scale = 1): Policy => ({
  scale,
  requestRetry: backoff(500 * scale, RETRY_AFTER_CAP_MS * scale, 8),
  retryAfterCap: ms(RETRY_AFTER_CAP_MS * scale),
  downloadRetry: backoff(500 * scale, 10_000 * scale, 6),
  unknownOutcomeWindow: ms(60_000 * scale),
  noSlotWait: ms(2_000 * scale),
  noSlotWaitMax: ms(64_000 * scale),
  pollInterval: (kind, ageMs) => {
    const r = pollRhythm[kind];
    return ms(Math.min(r.capMs, r.startMs + (ageMs / scale) * r.growth) * scale);
  },
  pollIdleBudget: (kind) => ms(adaptiveRhythm[kind].idleBudgetMs * scale),
  pollFloor: (kind) => ms(adaptiveRhythm[kind].floorMs * scale),
  pollCeiling: (kind) => ms(adaptiveRhythm[kind].ceilingMs * scale),
  durationSamples: adaptiveRhythm.samples,
  urlFreshFor: ms(5 * 60_000 * scale),
  missingAfter: ms(10 * 60_000 * scale),
  createConcurrency: 4,
  intentsAhead: 4,
  downloadConcurrency: 4,
  imageSingleQueryMax: 5,
  imagePageSize: 100,
  imageMaxPages: 1000,
  // Two or three runs of one account sharing 5 or 9 slots, simulated (test/policy/
  // slotShare.property.test.ts): these keep about 0.9 of one run's utilisation for under
  // one 1303 per task, no run starved; a run alone whose account has fewer slots than its
  // `concurrency` keeps about 0.85 of them busy.
  slotDecrease: 0.6,
  slotIncrease: 1,
  summaryEvery: Duration.seconds(30),
  callbackPollInterval: (kind) => ms(pollRhythm[kind].capMs * callbackRhythm.stretch * scale),
  callbackGrace: ms(callbackRhythm.graceMs * scale),
  cueQuerySpacing: ms(callbackRhythm.cueSpacingMs * scale),
  lendOnCue: true,
  cueHold: ms(callbackRhythm.cueHoldMs * scale),
  cueBatch: callbackRhythm.cueBatch,
  expectedDuration: (kind) => ms(callbackRhythm.expectedMs[kind] * scale),
  callbackSamples: callbackRhythm.samples,
  callbackOverdueFactor: callbackRhythm.overdueFactor,
  sendsPerCreate: 4,
  linkRefreshesPerCreate: 3,
  linkFailuresBeforeReject: 5,
  sendFailuresBeforeStuck: 8,
  sendFailedWait: ms(5 * 2_000 * scale),
  refusedDrainWait: ms(15_000 * scale),
  downloadRounds: 3,
  tasksDownloading: 4 * 2,
  missingPolls: 5,
  shortAnswers: 5,
  shortAnswerWait: ms(5 * 60_000 * scale),
  loopWakeAtLeast: Duration.seconds(60),
});

/** The slot-share rule's numbers (src/policy/slotShare.ts), from a policy. */
export const slotShareRule = (policy: Policy): SlotShareRule => ({
  decrease: policy.slotDecrease,
  increase: policy.slotIncrease,
  waitMs: Duration.toMillis(policy.noSlotWait),
  waitMaxMs: Duration.toMillis(policy.noSlotWaitMax),
  retryAfterCapMs: Duration.toMillis(policy.retryAfterCap),
});

/**
 * A run that has nothing at the service yet asks once whether its address answers at all
 * (run/reachCheck.ts): a refused connection or an unknown host is asked again twice, half
 * a second apart, then the run stops (exit 5) instead of retrying for minutes. The whole
 * check is given at most `reachCheckLimit`; an address that neither answers nor refuses
 * by then is left to the run's own patience.
 */
export const reachRetry: Schedule.Schedule<unknown, unknown> = Schedule.spaced(Duration.millis(500)).pipe(Schedule.intersect(Schedule.recurs(2)));
export const reachCheckLimit: Duration.Duration = Duration.seconds(10);

/** Real service speed. */
export const livePolicy: Policy = makePolicy(1);

/**
 * The waits that guard against paying twice, never shorter than `floor`'s (the real
 * service's): how long a create whose answer proved nothing is looked up before it may be
 * sent again, and how long a task the service said exists may stay invisible. A run
 * against a service not on this machine applies this to whatever policy it was given, so
 * a scaled policy meant for an emulator cannot shrink them against the real service.
 */
export const withSafetyFloors = (policy: Policy, floor: Policy = livePolicy): Policy => ({
  ...policy,
  unknownOutcomeWindow: Duration.max(policy.unknownOutcomeWindow, floor.unknownOutcomeWindow),
  missingAfter: Duration.max(policy.missingAfter, floor.missingAfter),
});

/**
 * The review file's lock (src/review/reviewFileLock.ts): held for one decision's read
 * and write, milliseconds. A lock left by a decision killed midway is taken over once its
 * heartbeat is `staleMs` old (and the run lock's margin); a decision waits for a busy lock
 * every 15 ms, for at most 20 s (past the takeover of a stale one).
 */
export const reviewFileLockPolicy = {
  staleMs: 10_000,
  wait: Schedule.spaced(ms(15)).pipe(Schedule.upTo(ms(20_000))),
} as const;

/** For the in-process emulator (`--emulate`): everything twenty times quicker. */
export const fastPolicy: Policy = makePolicy(0.05);

export class RunPolicy extends Context.Tag("omnibatch/RunPolicy")<RunPolicy, Policy>() {
  static readonly layer = (policy: Policy): Layer.Layer<RunPolicy> => Layer.succeed(RunPolicy, policy);
  static readonly live = RunPolicy.layer(livePolicy);
}
