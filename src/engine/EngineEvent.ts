// What reaches the task state machine (events, each carrying the time it happened) and
// what it asks the effectful parts to do (effects). Plain data: the machine itself
// (transition.ts) never performs anything, and the parts never decide a task's next step.

import type { BigDecimal } from "effect";
import type { CallbackObservation } from "../callbacks/CallbackListener.js";
import type { PlannedTask } from "../manifest/PlannedTask.js";
import type { ProductKind } from "../policy/Policy.js";
import type { RemoteOutput, TaskView } from "../protocol/TaskView.js";
import type { LockOutput, LockTask, TaskState } from "../state/LockFile.js";
import type { RunEvent } from "./RunEvent.js";
import type { Entry } from "./TaskTable.js";

/** What the lockfile already says about a task being admitted. */
/** Why a run stops early: --max-wait, the interrupt, or its run lock lost (taken over). */
export type StopReason = "time" | "signal" | "lock";

export interface KnownRecord {
  readonly state: TaskState;
  readonly task_id?: string;
  readonly created_at?: number;
  /** When a `submitting` record's create was sent (its outcome unknown). */
  readonly submitted_at?: number;
}

/** The answers a create worker reports. `intentRecorded`: it wrote `submitting` before sending. */
export type CreateOutcome =
  | {
      readonly _tag: "Created";
      readonly id: string;
      readonly taskId: string;
      readonly createdAt: number;
      /** When the create request left (our clock): the task's age counts from here, not from the answer's arrival, which a busy machine delays. */
      readonly sentAt?: number;
    }
  | { readonly _tag: "Adopted"; readonly id: string; readonly view: TaskView; readonly intentRecorded: boolean }
  /** `retryAfterMs`: the service's Retry-After on the 1303, when it sent one. */
  | { readonly _tag: "NoSlot"; readonly id: string; readonly retryAfterMs?: number }
  | { readonly _tag: "Rejected"; readonly id: string; readonly code?: number; readonly message: string; readonly intentRecorded: boolean }
  | {
      readonly _tag: "Refused";
      readonly id: string;
      readonly code?: number;
      readonly message: string;
      /** An earlier send of this create may have made the task: keep it `submitting` (looked up first next time). */
      readonly keepSubmitting: boolean;
      readonly intentRecorded: boolean;
    }
  | { readonly _tag: "SendFailed"; readonly id: string; readonly message: string; readonly lookupFirst: boolean; readonly intentRecorded: boolean }
  /**
   * A create was sent and its outcome is unknown (5xx after the body, a reset), or the
   * service said the id is in use (`exists`): the task may exist. `sentAt`: when it left.
   */
  | {
      readonly _tag: "Unknown";
      readonly id: string;
      readonly message: string;
      readonly sentAt: number;
      readonly exists: boolean;
      /** The create's answer named another task (the external id it echoed): created, but not known as which. */
      readonly namedAnother?: boolean;
      readonly intentRecorded: boolean;
    };

/** An "outcome unknown" task a poll looks up by external id. */
export interface Lookup {
  readonly id: string;
  readonly watermark: boolean;
}

/** One task of a poll answer that could not be read (what was wrong, scrubbed). */
export interface OddTask {
  readonly taskId?: string;
  readonly externalId?: string;
  readonly problems: string;
  /** A charge that cannot be true (money/chargeCheck.ts), by path, value and why: the run refuses it. */
  readonly charge?: string;
  /** The answer's request id, with `charge`. */
  readonly requestId?: string;
}

/** The "outcome unknown" tasks a poll looked up by external id, and what it found. */
export interface LookedUpUnknown {
  readonly ids: readonly string[];
  readonly found: ReadonlyMap<string, TaskView>;
  /** When the lookup was decided (the request left after this). */
  readonly startedAt: number;
}

export type FetchOutcome =
  | { readonly _tag: "Fetched"; readonly id: string; readonly outputs: readonly LockOutput[]; readonly urls: readonly RemoteOutput[] }
  | { readonly _tag: "FetchFailed"; readonly id: string; readonly message: string };

/** A task the service was asked about in one poll. */
export interface Asked {
  readonly id: string;
  readonly taskId: string;
  readonly createdAt: number | undefined;
  readonly watermark: boolean;
}

export type EngineEvent = { readonly now: number } & (
  | CreateOutcome
  | FetchOutcome
  | {
      /** A task enters the run, in the phase the lockfile says (`known`); `filesOk`: its recorded files are intact. */
      readonly _tag: "Admit";
      readonly task: PlannedTask;
      readonly firstAttempt: number;
      readonly front: boolean;
      readonly known?: KnownRecord;
      readonly filesOk?: boolean;
      /** It comes from a task this run created (its upstream): see createRules.ts `lookupBeforeCreate`. */
      readonly parentCreatedHere?: boolean;
    }
  | {
      readonly _tag: "AdmitRetry";
      readonly task: PlannedTask;
      readonly firstAttempt: number;
      readonly known?: KnownRecord;
      /** The failed attempt it follows was created by this run. */
      readonly parentCreatedHere?: boolean;
    }
  | { readonly _tag: "LookedUp"; readonly ids: readonly string[]; readonly found: ReadonlyMap<string, TaskView> }
  | { readonly _tag: "LookupFailed"; readonly kind: ProductKind; readonly message: string; readonly refused: boolean }
  | {
      readonly _tag: "Polled";
      readonly asked: readonly Asked[];
      readonly views: readonly TaskView[];
      readonly lookedUp?: LookedUpUnknown;
      /** Tasks of the answer that could not be read: reported, asked again later. */
      readonly odd?: readonly OddTask[];
    }
  | { readonly _tag: "PollFailed"; readonly kind: ProductKind; readonly message: string; readonly refused: boolean }
  | { readonly _tag: "Callback"; readonly observation: CallbackObservation }
  | { readonly _tag: "Stop"; readonly reason: StopReason }
  /** The intents written ahead for `ids` were flushed (`ok`) or could not be (each then writes its own before its create). */
  | { readonly _tag: "IntentsWritten"; readonly ids: readonly string[]; readonly ok: boolean }
  /** Time to start what fits and poll what is due; `charged`: cash charged so far in the budget's currency. */
  | { readonly _tag: "Tick"; readonly charged?: BigDecimal.BigDecimal }
);

export type EngineEffect =
  /** `quiet`: no task event (an intent written ahead is announced when its create starts). */
  | { readonly _tag: "Record"; readonly task: PlannedTask; readonly patch: Partial<LockTask> & { readonly state: TaskState }; readonly at: number; readonly quiet?: boolean }
  | { readonly _tag: "Emit"; readonly event: RunEvent }
  /**
   * Start the create worker; `lookupFirst`: look the task up by external id before any
   * send; `intentReady`: its intent was written ahead and is durable (only the run lock is
   * confirmed before the request leaves).
   */
  | { readonly _tag: "Create"; readonly entry: Entry; readonly lookupFirst: boolean; readonly sendFailures: number; readonly intentReady: boolean }
  /** Make the intents just recorded (quietly) for these waiting tasks durable, then report IntentsWritten. */
  | { readonly _tag: "FlushIntents"; readonly ids: readonly string[] }
  /** Follow `tasks` by id, and look up the "outcome unknown" tasks `lookups` by external id; `at`: when decided. */
  | { readonly _tag: "Poll"; readonly kind: ProductKind; readonly tasks: readonly Asked[]; readonly lookups: readonly Lookup[]; readonly at: number }
  | { readonly _tag: "Download"; readonly entry: Entry; readonly view: TaskView }
  /** Plan the downstream tasks of a task whose outputs are on disk. */
  | { readonly _tag: "Expand"; readonly entry: Entry }
  /** Admit the next attempt of a failed task. */
  | { readonly _tag: "Retry"; readonly task: PlannedTask; readonly firstAttempt: number; readonly parentCreatedHere: boolean }
  /** Fresh result links of a finished task (for downstream requests). */
  | { readonly _tag: "Links"; readonly id: string; readonly outputs: readonly RemoteOutput[]; readonly at: number };

export interface Transition<S> {
  readonly state: S;
  readonly effects: readonly EngineEffect[];
}
