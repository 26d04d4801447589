// What a run tells the outside while it works (events) and when it ends (the summary).
// The CLI renders these (src/cli/Progress.ts); a library user gets them through
// `onEvent`. Plain data, JSON-serialisable, never holding a secret.

import type { BillingEntry } from "../protocol/wire.js";
import type { LostResult } from "../outputs/scanResults.js";
import type { TaskState } from "../state/LockFile.js";
import type { Failures } from "./Failures.js";
import type { JobOutlook, StartBucket, StartBuckets } from "../plan/runTotals.js";

/** `review`: everything that could be done is done, and outputs await a person's review (exit 3). lost: every task ended, but results the lockfile records are neither here nor at the service (exit 6). */
export type RunOutcome = "done" | "failed" | "pending" | "review" | "budget" | "refused" | "charge" | "lost";

export type { JobOutlook, StartBucket, StartBuckets };

/** A for_each job and about how many of its tasks one upstream task gives. */
export interface DownstreamLink {
  readonly job: string;
  readonly upstream: string;
  readonly perUpstreamTask: number;
}

export type RunEvent =
  | {
      readonly type: "start";
      readonly manifest: string;
      readonly name: string;
      readonly lockfile: string;
      readonly outputs: string;
      readonly tasks: number;
      readonly jobs: readonly string[];
      readonly concurrency: number;
      /** Against an in-process emulator, with the emulated lockfile and outputs. */
      readonly emulated?: true;
      /** When it happened (ISO 8601); every event of `omnibatch run` carries it. */
      readonly at?: string;
      /** Every task of the run, expected downstream ones included (`tasks` counts only the jobs without for_each). */
      readonly total?: number;
      /** Per job, in the jobs' order: the whole plan (see JobOutlook). */
      readonly totals?: Readonly<Record<string, JobOutlook>>;
      /** Set when the lockfile already recorded tasks of this manifest: the run resumes. */
      readonly resume?: { readonly done: number; readonly inFlight: number; readonly failed: number; readonly toCreate: number };
      /** Cash the lockfile recorded before this run, per currency (decimal strings). */
      readonly spentBefore?: Readonly<Record<string, string>>;
      readonly budget?: { readonly max: string; readonly currency: string };
      /** The for_each links, so a view can drop downstream work an upstream failure removes. */
      readonly downstream?: readonly DownstreamLink[];
      /**
       * Where `totals` counted each matrix position (job and folder; runTotals.ts
       * `startBuckets`), so a view moves a task it hears of out of there: one sent, made
       * or tried again is still one task. In-process only: a function, which JSON leaves out.
       */
      readonly startBuckets?: StartBuckets;
    }
  | {
      /** One task changed state. */
      readonly type: "task";
      readonly id: string;
      readonly job: string;
      readonly state: TaskState;
      readonly task_id?: string;
      readonly error?: { readonly code?: number; readonly message: string };
      readonly files?: number;
      /** What the service charged, on the step where the task finished. */
      readonly billing?: readonly BillingEntry[];
      readonly at?: string;
      /** The task's matrix values (and, downstream, `item`). */
      readonly vars?: Readonly<Record<string, unknown>>;
      /** Its results folder, relative to the outputs folder (one per matrix position). */
      readonly dir?: string;
      /** On `downloaded`: the files written, absolute paths. */
      readonly paths?: readonly string[];
    }
  | {
      /** Something worth a line: a lowered slot limit, a stop reason, a recovered create. */
      readonly type: "notice";
      readonly level: "info" | "warn";
      readonly message: string;
      readonly at?: string;
    }
  | ({ readonly type: "summary" } & RunSummary);

export interface JobCounts {
  readonly total: number;
  readonly done: number;
  readonly inFlight: number;
  readonly queued: number;
  readonly failed: number;
  readonly rejected: number;
  /** Outputs of this (`review`) job awaiting a person's decision; absent when none. */
  readonly awaitingReview?: number;
  /** Tasks of this (for_each) job not made yet because the outputs they need await review; absent when none. */
  readonly waitingOnReview?: number;
}

export interface RunSummary {
  readonly exitCode: 0 | 1 | 3 | 4 | 5 | 6;
  readonly outcome: RunOutcome;
  /** Why the run stopped early, in words, when it did. */
  readonly reason?: string;
  readonly manifest: string;
  readonly lockfile: string;
  readonly outputs: string;
  /** Report files written (absolute paths). */
  readonly reports: readonly string[];
  readonly jobs: Readonly<Record<string, JobCounts>>;
  /** Cash charged so far, per currency (decimal strings), from the lockfile; "" is the account's currency, unnamed (image charges). */
  readonly spend: Readonly<Record<string, string>>;
  /** Creates sent (and confirmed) by this run. */
  readonly created: number;
  /** Tasks found at the service and adopted instead of created again. */
  readonly adopted: number;
  /** Files written by this run. */
  readonly downloaded: number;
  readonly failures: ReadonlyArray<{
    readonly id: string;
    readonly job: string;
    readonly state: TaskState;
    readonly code?: number;
    readonly message: string;
    /** Its matrix values. */
    readonly vars?: Readonly<Record<string, unknown>>;
  }>;
  /** The lockfile's failures grouped by reason, named by job and matrix values, with what they leave unmade downstream. */
  readonly failureGroups?: Failures;
  /**
   * Cash charged by this run, per currency: the charges its records brought (money/charges.ts
   * newCharges), as the live view counts them. A currency "" is the account's, unnamed (image charges).
   */
  readonly spendThisRun?: Readonly<Record<string, string>>;
  readonly budget?: { readonly max: string; readonly currency: string };
  readonly at?: string;
  readonly elapsedMs: number;
  /** Answers 1303 seen (each cost a request, nothing else). */
  readonly noSlotAnswers: number;
  /**
   * Results of the manifest's tasks that are lost: not in the outputs folder (nor a
   * store) and deleted at the service, named by job and matrix values. Their records stay
   * in the lockfile; `run --recreate-lost` pays to make them again.
   */
  readonly lost?: readonly LostResult[];
  /** Downstream tasks not sent because an upstream result they need is lost. */
  readonly held?: number;
  /** Set when the run was against an in-process emulator (`--emulate`): nothing real was created or charged. */
  readonly emulated?: true;
  /**
   * Charges the service answered that cannot be true (negative, no number, absurdly
   * large; money/chargeCheck.ts), refused: in no sum; the first stopped the run (outcome `charge`).
   */
  readonly refusedCharges?: readonly { readonly id: string; readonly job: string; readonly taskId?: string; readonly charge: string; readonly requestId?: string }[];
}
