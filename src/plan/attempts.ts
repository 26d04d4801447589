// The one attempt walk: which attempt of a task this run deals with, and why. The plan
// (diffPlan.ts) asks it for every manifest task at the start; the engine asks it for the
// tasks that enter mid-run (downstream items once their upstream files are on disk, the
// next attempt after a failure: src/engine/Planning.ts). Pure: the records are read
// through `AttemptRecords` (a lockfile's tasks, or the engine's Recorder), and the one
// fact that needs I/O (how many of a downloaded attempt's results are lost) is asked of
// `lostCount`, which may answer "not known yet": the walk then says which record it needs
// (`needLost`) and the caller looks it up and walks again.
//
// From the manifest's task (attempt 1, or the attempt its identity starts at), each
// recorded attempt leads on to the next one when:
//   - it was abandoned at another service (--switch-service), or it was replaced by an
//     earlier attempt taken up again at its own service: history, it uses up no retry;
//   - it failed and a retry is left (retryRule.ts), or --failed renews it, or the next
//     attempt is recorded already (made by an earlier retry or renewal);
//   - it was downloaded and the next attempt is recorded (not one it replaced), or its
//     results are lost and --recreate-lost asks to make it again.
// Anything else is where the walk stops: that attempt is the task's in this run. A task
// whose first attempt is not recorded while a later one is starts at that later one.

import { replacedByEarlier, type LockTask } from "../state/LockFile.js";
import type { PlannedTask } from "../manifest/PlannedTask.js";
import { mayRetry } from "./retryRule.js";
import type { StartBucket } from "./runTotals.js";

/** The records the walk reads: by external id, and whether any record of a job has an attempt number (a cheap check before a hash). */
export interface AttemptRecords {
  readonly get: (id: string) => LockTask | undefined;
  readonly hasAttempt: (job: string, attempt: number) => boolean;
}

export interface AttemptRules {
  /** The task's attempt `n` (a new id): LoadedManifest.withAttempt. */
  readonly withAttempt: (task: PlannedTask, attempt: number) => PlannedTask;
  /** `retry_failed` of a job, when the run sets it apart from the task's own (the engine's table). */
  readonly retryFailedOf?: (job: string) => number | undefined;
  /** `--failed`: does a failed attempt of this task with no retry left get one new attempt all the same? */
  readonly renew?: (task: PlannedTask) => boolean;
  /** `run --recreate-lost`: a downloaded attempt with lost results is made again as the next attempt. */
  readonly recreateLost?: boolean;
  /** Lost results of a downloaded attempt; undefined: not known yet (the walk returns `needLost`). */
  readonly lostCount?: (id: string, record: LockTask) => number | undefined;
  /** A new service that knows none of the records (a fresh emulator): a downloaded attempt is never followed further. */
  readonly freshService?: boolean;
}

/** Why the walk stopped where it did. */
export type AttemptWhy =
  /** No record of the attempt: the task was never made (a first run, a new task). */
  | "new"
  /** The attempt recorded: done, in flight, planned or refused, or failed for good. */
  | "recorded"
  /** After a failed attempt with a retry left. */
  | "retry"
  /** After a failed attempt with no retry left: `--failed`. */
  | "renew"
  /** After attempts abandoned at another service (or replaced by an earlier one taken up again). */
  | "abandoned"
  /** After a downloaded attempt whose results are lost (`--recreate-lost`). */
  | "recreate";

export interface AttemptWalk {
  /** The task the walk started from (the manifest's, or a downstream one). */
  readonly planned: PlannedTask;
  /** The attempt this run deals with. */
  readonly task: PlannedTask;
  /** Its record, when the lockfile has one. */
  readonly record: LockTask | undefined;
  /** Its retries count from here: the first attempt plus those passed as history (abandoned, replaced). */
  readonly firstAttempt: number;
  readonly why: AttemptWhy;
  /** The walk passed a failed attempt. */
  readonly pastFailed: boolean;
  /** For an attempt not recorded, after one recorded: where a start's totals counted the position ("done" when recreated). */
  readonly before?: StartBucket;
  /** The recorded attempts passed, in order. */
  readonly walked: readonly string[];
  /** The last attempt passed as abandoned at another service, for the plan's note. */
  readonly abandonedAt?: string;
  /** The walk's recreated attempts (`--recreate-lost`): [lost attempt, new attempt]. */
  readonly recreated: readonly (readonly [string, string])[];
  /** Set when `lostCount` did not know this record: look it up and walk again. */
  readonly needLost?: readonly [string, LockTask];
}

/**
 * A downloaded attempt's next step: stay with it, follow to its next attempt (made
 * before, by `--recreate-lost`), or make that attempt now (`recreate`: asked for, and
 * results of this one are lost). Paying again is only ever the user's choice.
 */
export const nextAfterDownloaded = (nextRecorded: boolean, recreateLost: boolean, lost: number): "stay" | "follow" | "recreate" =>
  nextRecorded ? "follow" : recreateLost && lost > 0 ? "recreate" : "stay";

const NONE: readonly never[] = Object.freeze([]);

/** The walk of a task with no record of any attempt (a first run): the task itself, new. */
export const newWalk = (planned: PlannedTask): AttemptWalk => ({ planned, task: planned, record: undefined, firstAttempt: planned.attempt, why: "new", pastFailed: false, walked: NONE, recreated: NONE });

/** Where a walk goes on from mid-way (the engine's next attempt after a failure): the attempts counted so far. */
export interface WalkFrom {
  /** Retries count from here (the failed attempt's walk's `firstAttempt`). */
  readonly firstAttempt: number;
  /** The recorded attempts already passed (the failed one among them). */
  readonly walked: readonly string[];
}

/**
 * The attempt of `planned` this run deals with, walking the recorded attempts as the
 * header says. Bounded: each step passes a recorded attempt (or, at the last, makes one).
 * `from`: the walk goes on from `planned`, a later attempt, with what was counted before it.
 */
export const attempts = (planned: PlannedTask, records: AttemptRecords, rules: AttemptRules, from?: WalkFrom): AttemptWalk => {
  let task = planned;
  let firstAttempt = from?.firstAttempt ?? planned.attempt;
  let pastFailed = false;
  let before: StartBucket | undefined;
  let why: AttemptWhy = "recorded";
  let abandonedAt: string | undefined;
  const walked: string[] = from ? [...from.walked] : [];
  const recreated: [string, string][] = [];
  const done = (record: LockTask | undefined, needLost?: readonly [string, LockTask]): AttemptWalk => ({
    planned,
    task,
    record,
    firstAttempt,
    why: record === undefined && why === "recorded" ? "new" : record !== undefined ? "recorded" : why,
    pastFailed,
    ...(before !== undefined ? { before } : {}),
    // One empty list for every walk that passed nothing (the plan keeps a walk per task).
    walked: walked.length > 0 ? walked : NONE,
    ...(abandonedAt !== undefined ? { abandonedAt } : {}),
    recreated: recreated.length > 0 ? recreated : NONE,
    ...(needLost ? { needLost } : {}),
  });
  for (;;) {
    const rec = records.get(task.id);
    if (rec === undefined) {
      // A first attempt not recorded while later ones are (found by their ids): the walk starts at the earliest of those.
      const skip = walked.length === 0 ? recordedLater(task, records, rules) : undefined;
      if (skip === undefined) return done(undefined);
      task = skip;
      continue;
    }
    // History: abandoned at the service the lockfile named before, or replaced by an
    // earlier attempt taken up again at its own service. The next attempt takes its place.
    if (rec.abandoned !== undefined || (rec.superseded_by !== undefined && walked.some((id) => replacedByEarlier(rec, id)))) {
      if (rec.abandoned !== undefined) abandonedAt = rec.abandoned.service;
      walked.push(task.id);
      task = rules.withAttempt(task, task.attempt + 1);
      firstAttempt++;
      before = undefined;
      why = "abandoned";
      continue;
    }
    if (rec.state === "downloaded" && rules.freshService !== true) {
      // The next attempt's id (a hash) is worked out only when a record could be it or one is to be made.
      const mayFollow = records.hasAttempt(task.job, task.attempt + 1);
      if (!mayFollow && rules.recreateLost !== true) return done(rec);
      const next = rules.withAttempt(task, task.attempt + 1);
      // A later attempt abandoned elsewhere and replaced by this one is no successor.
      const later = mayFollow ? records.get(next.id) : undefined;
      const follows = later !== undefined && !replacedByEarlier(later, task.id);
      // The lost results are asked about only when they decide.
      const lost = follows || rules.recreateLost !== true || rules.lostCount === undefined ? 0 : rules.lostCount(task.id, rec);
      if (lost === undefined) return done(rec, [task.id, rec]);
      const step = nextAfterDownloaded(follows, rules.recreateLost === true, lost);
      if (step === "stay") return done(rec);
      if (step === "recreate") {
        recreated.push([task.id, next.id]);
        why = "recreate";
      }
      walked.push(task.id);
      task = next;
      before = "done";
      continue;
    }
    if (rec.state !== "failed") return done(rec);
    walked.push(task.id);
    const retryFailed = rules.retryFailedOf?.(task.job) ?? task.retryFailed;
    const retry = mayRetry({ retryFailed, retryContentRisk: task.retryContentRisk }, task.attempt - firstAttempt, rec.error);
    const next = rules.withAttempt(task, task.attempt + 1);
    // No retry left: the walk goes on only to a recorded next attempt, or one --failed renews.
    if (!retry && records.get(next.id) === undefined && rules.renew?.(planned) !== true) {
      walked.pop();
      return done(rec);
    }
    why = retry ? "retry" : "renew";
    task = next;
    before = undefined;
    pastFailed = true;
  }
};

/** The earliest later attempt of `task` recorded, when `task` itself is not; bounded by the attempt numbers recorded for its job. */
const recordedLater = (task: PlannedTask, records: AttemptRecords, rules: AttemptRules): PlannedTask | undefined => {
  for (let n = task.attempt + 1; records.hasAttempt(task.job, n); n++) {
    const later = rules.withAttempt(task, n);
    if (records.get(later.id) !== undefined) return later;
  }
  return undefined;
};

/** How many attempts a task may have made by now: the first, its retries, and those passed as history. */
export const attemptsAllowed = (walk: Pick<AttemptWalk, "firstAttempt">, task: PlannedTask, retryFailed = task.retryFailed): number =>
  1 + retryFailed + walk.firstAttempt - task.attempt;
