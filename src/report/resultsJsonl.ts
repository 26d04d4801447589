// results.jsonl: one line per task (sorted by id), for scripts and jq: what it was made
// from, where it ended, its files (paths relative to the outputs folder, size, sha256),
// what it cost, its error, and when its results are deleted at the service.

import type { LockFile, LockTask } from "../state/LockFile.js";
import { deletionTime, nearingDeletion } from "./nearingDeletion.js";

const iso = (ms: number | undefined): string | undefined => (ms === undefined ? undefined : new Date(ms).toISOString());

export const resultLine = (id: string, task: LockTask, now: number) => ({
  id,
  job: task.job,
  kind: task.kind,
  vars: task.vars,
  state: task.state,
  task_id: task.task_id,
  attempt: task.attempt,
  take: task.take,
  dir: task.dir,
  outputs: task.outputs.map((o) => ({
    type: o.type,
    index: o.index,
    variant: o.variant,
    path: o.path,
    size: o.size,
    sha256: o.sha256,
    remote_id: o.remote_id,
    group_id: o.group_id,
    meta: o.meta,
  })),
  billing: task.billing,
  error: task.error && { code: task.error.code, message: task.error.message, at: iso(task.error.at) },
  upstream: task.upstream,
  times: {
    planned: iso(task.planned_at),
    submitted: iso(task.submitted_at),
    created: iso(task.created_at),
    finished: iso(task.finished_at),
    updated: iso(task.updated_at),
    deleted_at_service: iso(deletionTime(task)),
  },
  nearing_deletion: nearingDeletion(task, now),
});

export const formatResultsJsonl = (lock: LockFile, now: number): string =>
  Object.keys(lock.tasks)
    .sort()
    // Fixed key order, id first, for people reading the file; the same lockfile gives the same bytes.
    .map((id) => `${JSON.stringify(resultLine(id, lock.tasks[id]!, now))}\n`)
    .join("");
