// The truthful state of each recorded result (issue 16): present (the file is here and
// matches its record), restorable (missing here, but in the store or still at the
// service, so it is fetched again), or lost (neither). Pure: what is on disk and in a
// store comes in as data (`local`, `inStore`), time as `now`; the I/O that gathers them
// lives beside its callers (scanResults.ts).

import type { LockOutput, LockTask } from "../state/LockFile.js";

/** The service deletes results this long after generation (spec: 30 days). */
export const SERVICE_RETENTION_MS = 30 * 86_400_000;

export type ResultState = "present" | "restorable" | "lost";

/** What the outputs folder holds at the record's path: its file with the recorded size (and sha256, when checked), another file, or nothing. */
export type LocalCopy = "matches" | "differs" | "missing";

/** What a store holds under a key, when a store is used (its listing: size and, when it keeps one, the sha256). */
export interface StoredObject {
  readonly size: number;
  readonly sha256?: string;
}

export interface ResultFacts {
  readonly output: LockOutput;
  /** The task the output belongs to (its times: the deletion counts from generation). */
  readonly task: Pick<LockTask, "created_at" | "finished_at">;
  readonly local: LocalCopy;
  readonly now: number;
  /** The store's object for a key (the output's path), when a store is used. */
  readonly inStore?: (key: string) => StoredObject | undefined;
}

export type ResultVerdict =
  | { readonly state: "present" }
  | {
      readonly state: "restorable";
      readonly from: "store" | "service";
      /** Earliest time the service may delete it (when it is to come from the service). */
      readonly deletesAt?: number;
    }
  | {
      readonly state: "lost";
      /** deleted: the service said so (deleted_at); expired: past its 30-day deletion, not asked yet. */
      readonly why: "deleted" | "expired";
      readonly at?: number;
    };

/** Outputs that are result files (or were meant to be): not metadata-only items. */
export const isResultFile = (o: LockOutput): boolean => o.variant !== "meta" && (o.path !== undefined || o.deleted_at !== undefined);

/** When the service may delete a task's results at the earliest (created_at + 30 days), if known. */
export const earliestDeletion = (task: Pick<LockTask, "created_at" | "finished_at">): number | undefined => {
  const from = task.created_at ?? task.finished_at;
  return from === undefined ? undefined : from + SERVICE_RETENTION_MS;
};

const storeHas = (o: LockOutput, object: StoredObject | undefined): boolean =>
  object !== undefined && o.size !== undefined && object.size === o.size && (object.sha256 === undefined || object.sha256 === o.sha256);

export const resultState = (facts: ResultFacts): ResultVerdict => {
  const { output: o, task, local, now } = facts;
  if (local === "matches" && o.path !== undefined) return { state: "present" };
  if (o.path !== undefined && o.sha256 !== undefined && storeHas(o, facts.inStore?.(o.path))) return { state: "restorable", from: "store" };
  if (o.deleted_at !== undefined) return { state: "lost", why: "deleted", at: o.deleted_at };
  // The service keeps results 30 days from generation; counted from the task's end (the
  // latest it can have been made), so a result is never called lost while it may be there.
  const made = task.finished_at ?? task.created_at;
  if (made !== undefined && now >= made + SERVICE_RETENTION_MS) return { state: "lost", why: "expired", at: made + SERVICE_RETENTION_MS };
  const deletesAt = earliestDeletion(task);
  return { state: "restorable", from: "service", ...(deletesAt !== undefined ? { deletesAt } : {}) };
};
