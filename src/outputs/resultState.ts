// The truthful state of each recorded result (issue 16): present (the file is here and
// matches its record), restorable (missing here, but in the store or still at the
// service, so it is fetched again), or lost (neither). Pure: what is on disk and in a
// store comes in as data (`local`, `inStore`), time as `now`; the I/O that gathers them
// lives beside its callers (scanResults.ts). With the outputs in a store, "here" is the
// store: its object counts as the local copy when its size and ETag match the record.

import type { LockOutput, LockTask } from "../state/LockFile.js";

/** The service deletes results this long after generation (spec: 30 days). */
export const SERVICE_RETENTION_MS = 30 * 86_400_000;

export type ResultState = "present" | "restorable" | "lost";

/** What the outputs (a folder or a store) hold at the record's path: the result as recorded, something else, or nothing. */
export type LocalCopy = "matches" | "differs" | "missing";

/** What a store holds under a key, as its listing shows it: size and ETag. */
export interface StoredObject {
  readonly size: number;
  /** The store's entity tag, unquoted. */
  readonly etag?: string;
}

/** How many leading characters of the store's ETag an output record keeps (`etag`). */
export const ETAG_FINGERPRINT_CHARS = 8;

/**
 * The part of a store's ETag an output record keeps: its first 8 characters, lower case
 * (32 bits of the MD5 a single-part object's ETag is, on S3, R2, MinIO and GCS). Enough
 * to tell an object replaced by other bytes of the same size (1 in 4 billion to miss
 * one); not a defence against someone forging content: `pull` checks the sha256. An
 * ETag that is not printable ASCII gives none (the object is then compared by size).
 */
export const etagFingerprint = (etag: string): string | undefined => {
  const f = etag.toLowerCase().slice(0, ETAG_FINGERPRINT_CHARS);
  return /^[!#-~]+$/.test(f) ? f : undefined;
};

/**
 * A store's object against the record of the result it should hold: "matches" when it
 * has the recorded size and, when the record keeps the ETag's fingerprint (written since
 * this field exists), the same ETag; "differs" for any other object; "missing" for none.
 * An older record without `etag`, or a store whose listing gives no ETag, is compared by
 * size alone.
 */
export const storedCopy = (o: Pick<LockOutput, "size" | "etag">, object: StoredObject | undefined): LocalCopy => {
  if (object === undefined) return "missing";
  if (o.size === undefined || object.size !== o.size) return "differs";
  const seen = o.etag !== undefined && object.etag !== undefined ? etagFingerprint(object.etag) : undefined;
  if (seen !== undefined && seen !== o.etag) return "differs";
  return "matches";
};

export interface ResultFacts {
  readonly output: LockOutput;
  /** The task the output belongs to (its times: the deletion counts from generation). */
  readonly task: Pick<LockTask, "created_at" | "finished_at">;
  readonly local: LocalCopy;
  readonly now: number;
  /** A store's object for a key (the output's path), when results are kept in a store besides `local`. */
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

/**
 * Whether a task's results are past the service's retention at `now`: 30 days after the
 * task ended (its latest possible generation time), so a result is never taken as
 * deleted while it may still be there. `endedAt` undefined (or not a time): not known to be.
 */
export const pastRetention = (endedAt: number | undefined, now: number): boolean =>
  endedAt !== undefined && Number.isFinite(endedAt) && now >= endedAt + SERVICE_RETENTION_MS;

/**
 * Whether a result link answering 404, fresh from a query made for this download, proves
 * the result deleted: only past the service's retention. Within it a 404 proves nothing
 * (a storage or CDN hiccup, a link refused early): the result stays pending and is
 * fetched with a fresh link later, or by the next run, never declared lost (which would
 * offer paying for it again).
 */
export const notFoundMeansDeleted = (endedAt: number | undefined, now: number): boolean => pastRetention(endedAt, now);

const storeHas = (o: LockOutput, object: StoredObject | undefined): boolean => storedCopy(o, object) === "matches";

/** The verdict of every result here: one object (a rerun scans 100,000 of them). */
const PRESENT: ResultVerdict = Object.freeze({ state: "present" });

export const resultState = (facts: ResultFacts): ResultVerdict => {
  const { output: o, task, local, now } = facts;
  if (local === "matches" && o.path !== undefined) return PRESENT;
  if (o.path !== undefined && o.sha256 !== undefined && storeHas(o, facts.inStore?.(o.path))) return { state: "restorable", from: "store" };
  if (o.deleted_at !== undefined) return { state: "lost", why: "deleted", at: o.deleted_at };
  // The service keeps results 30 days from generation; counted from the task's end (the
  // latest it can have been made), so a result is never called lost while it may be there.
  const made = task.finished_at ?? task.created_at;
  if (made !== undefined && pastRetention(made, now)) return { state: "lost", why: "expired", at: made + SERVICE_RETENTION_MS };
  const deletesAt = earliestDeletion(task);
  return { state: "restorable", from: "service", ...(deletesAt !== undefined ? { deletesAt } : {}) };
};
