// The service deletes generated results 30 days after the task was created. A result
// that is still only at the service when that nears must be flagged loudly (status and
// reports), or it is lost.

import type { LockTask } from "../state/LockFile.js";

export const RETENTION_DAYS = 30;
const DAY_MS = 24 * 60 * 60 * 1000;

/** Unix ms when the service deletes the task's results, when known. */
export const deletionTime = (task: LockTask): number | undefined => {
  const created = task.created_at ?? task.submitted_at;
  return created === undefined ? undefined : created + RETENTION_DAYS * DAY_MS;
};

/** Whether some result of the task exists only at the service (not downloaded yet). */
export const hasUndownloadedResults = (task: LockTask): boolean =>
  task.state === "succeeded" ||
  (task.state === "downloaded" && task.outputs.some((o) => o.variant !== "meta" && o.path === undefined));

/**
 * True when the task has results not downloaded yet and the service deletes them within
 * `warnDays` (or already has).
 */
export const nearingDeletion = (task: LockTask, now: number, warnDays = 5): boolean => {
  const deletion = deletionTime(task);
  return deletion !== undefined && hasUndownloadedResults(task) && deletion - now <= warnDays * DAY_MS;
};
