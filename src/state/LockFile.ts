// The lockfile's data shape in memory (M.lock.json beside the manifest), shared by the
// engine that writes it and by plan/status/report that read it. On disk, versions 2 and 3
// leave out what the rest of a task's line determines (TaskLine.ts);
// schemas/lockfile.schema.json is the format's definition on disk.

import type { OutputType, OutputVariant } from "../protocol/TaskView.js";
import type { BillingEntry } from "../protocol/wire.js";

/** The format version written. Version 1 and 2 files are still read (and rewritten as 3). */
export const LOCKFILE_VERSION = 3;

/**
 * planned -> submitting -> submitted -> processing -> succeeded -> downloaded
 *                                                  \-> failed
 * rejected: the service refused the create (1201, 1301, ...): nothing was created.
 */
export type TaskState =
  | "planned"
  | "submitting"
  | "submitted"
  | "processing"
  | "succeeded"
  | "downloaded"
  | "failed"
  | "rejected";

export interface LockOutput {
  /** Output item type as the service named it. */
  readonly type: OutputType;
  /** Position among the task's outputs (stable across queries). */
  readonly index: number;
  /** Which file of the item: main result, watermarked copy, mp3, wav. */
  readonly variant: OutputVariant;
  /** Path relative to the manifest's outputs folder, with `/` separators; absent until downloaded. */
  readonly path?: string;
  readonly size?: number;
  readonly sha256?: string;
  /** The service's id of the item, when it has one; group_id for grouped images. */
  readonly remote_id?: string;
  readonly group_id?: string;
  /**
   * Unix ms when the service was first seen without this result (an empty result list,
   * or its link answering 404 after a fresh query): deleted at the service. The rest of
   * the record is history and is never removed or replaced (issue 16).
   */
  readonly deleted_at?: number;
  /**
   * With the outputs in an object store: the first 8 characters of the store's ETag of
   * the verified object (outputs/resultState.ts `etagFingerprint`), so a listing tells an
   * object replaced by other bytes of the same size. Absent for a folder, and in records
   * written before this field (their objects are compared by size).
   */
  readonly etag?: string;
  /** Voice / element items are recorded as metadata only. */
  readonly meta?: Record<string, unknown>;
}

export interface LockError {
  /** Service code when the service gave one. */
  readonly code?: number;
  readonly message: string;
  /** Unix ms. */
  readonly at: number;
}

export interface LockTask {
  readonly job: string;
  readonly kind: "video" | "image";
  /** Matrix / item values the task was expanded from (for names and reports). */
  readonly vars: Record<string, unknown>;
  /** Folder of its results, relative to the outputs folder. */
  readonly dir: string;
  readonly request_hash: string;
  readonly take: number;
  readonly attempt: number;
  readonly state: TaskState;
  /** System task id, once known. */
  readonly task_id?: string;
  /** Unix ms of each step, when it happened. */
  readonly planned_at?: number;
  readonly submitted_at?: number;
  /** The service's create_time / created_at: the 30-day deletion counts from here. */
  readonly created_at?: number;
  readonly finished_at?: number;
  readonly updated_at: number;
  readonly outputs: readonly LockOutput[];
  readonly billing: readonly BillingEntry[];
  readonly error?: LockError;
  /** For downstream tasks: the upstream task and output they were made from. */
  readonly upstream?: { readonly job: string; readonly task: string; readonly output: number };
  /**
   * The task that replaced this one once that one was created: a changed request (`~`),
   * or the new attempt made at another service after this one was `abandoned`.
   */
  readonly superseded_by?: string;
  /**
   * `run --switch-service`: the task was unfinished at `service` (the lockfile's service
   * until then) when a run moved to another one, at `at` (Unix ms). Nothing else of the
   * record changes (its outputs, billing and ids are history; its billing counts in spend
   * to date); the task is made again there as its next attempt, a new external id. A
   * later run at `service` learns its end and charge, or takes it up again when the task
   * has no current attempt (src/run/serviceCheck.ts `abandonedHere`).
   */
  readonly abandoned?: { readonly service: string; readonly at: number };
  /**
   * When `omnibatch prune` removed the task's files and report records (superseded or
   * orphaned). The record stays: its billing counts in spend to date, and a manifest that
   * asks for the task again finds it created (its files are fetched again, never re-paid).
   */
  readonly pruned_at?: number;
  /**
   * The task was not created for this manifest: its results were copied from a finished,
   * paid task with the same request recorded in another lockfile (or an earlier record of
   * this one), verified by sha256 (src/run/reuseResults.ts). Its own billing is empty (no
   * charge of its own); `cost` is what the source was charged when it was paid, for the
   * reports only, never summed into spend.
   */
  readonly reused_from?: ReusedFrom;
}

/** Where a reused task's results came from (LockTask.reused_from). */
export interface ReusedFrom {
  /** The source's lockfile, relative to this lockfile's folder, `/` separators. */
  readonly lockfile: string;
  /** The source task's external_task_id. */
  readonly id: string;
  /** Unix ms when the source finished (was paid), when known. */
  readonly paid_at?: number;
  /** What the source was charged, in one currency, when its billing says (decimal string). */
  readonly cost?: { readonly amount: string; readonly currency: string };
}

/** States of a created attempt that still stands for its task: in flight, or finished with results. */
const STANDING: ReadonlySet<TaskState> = new Set(["submitting", "submitted", "processing", "succeeded", "downloaded"]);

/**
 * Whether an attempt stands for its task (a later one abandoned at another service is not
 * taken up again over it): created, not abandoned, and not ended `failed` (nor refused, nor
 * only planned). A failed attempt made elsewhere gave nothing; an earlier one paid (or to be)
 * at the run's service is followed instead of paying there again (src/run/serviceCheck.ts).
 */
export const isCurrentAttempt = (t: LockTask): boolean => t.abandoned === undefined && STANDING.has(t.state);

/**
 * Whether `later` (a later attempt of the same task) was replaced by the attempt `id`, an
 * earlier one taken up again at the service it was made at (`run --switch-service` back
 * there, src/run/serviceCheck.ts `abandonedHere`): `later` does not stand for the task
 * (abandoned elsewhere, or ended failed, refused or only planned) and names `id` as
 * `superseded_by`. The engine's walk from `id` stops there, and a plan never takes `later`
 * for the task's latest attempt.
 */
export const replacedByEarlier = (later: LockTask, id: string): boolean => later.superseded_by === id && !isCurrentAttempt(later);

export interface LockFile {
  /** Data read from a version-1 or 2 file is the same model: read, and written as the current version. */
  readonly lockfile_version: 1 | 2 | typeof LOCKFILE_VERSION;
  /** The manifest's `name`. */
  readonly name: string;
  /**
   * The service the tasks were created at: base URL origin + path (`serviceIdentity`,
   * never a key), or `emulator`. Absent in files written before it was recorded.
   */
  readonly service?: string;
  /** Keyed by external_task_id. */
  readonly tasks: Readonly<Record<string, LockTask>>;
  /**
   * Read only, never written: the file's lines of another manifest (state/foreignLines.ts),
   * for the warning that names them; absent when there are none.
   */
  readonly foreign?: readonly { readonly line: number; readonly id: string; readonly job: string }[];
}
