// results.jsonl: one line per task (sorted by id), for scripts and jq: what it was made
// from (the request as sent and its manifest position, when the manifest's planned
// tasks are at hand), where it ended, its files (paths relative to the outputs folder,
// size, sha256), the upstream file it was made from and the downstream files made from
// it, what it cost, its error, and when its results are deleted at the service. The same
// record is each task folder's task.json.

import type { PlannedTask } from "../manifest/PlannedTask.js";
import type { LockFile, LockTask } from "../state/LockFile.js";
import { deletionTime, nearingDeletion } from "./nearingDeletion.js";
import { type FilesByHash, type LinkedFile, type RequestView, downstreamIndex, filesByHash, position, requestView, upstreamFiles } from "./provenance.js";

/** What a record needs beyond its own lockfile entry. */
export interface Provenance {
  readonly lock: LockFile;
  /** The manifest's planned tasks by id: current tasks get `request` and `source`. */
  readonly planned?: ReadonlyMap<string, PlannedTask>;
  readonly files: FilesByHash;
  readonly downstream: ReadonlyMap<string, readonly LinkedFile[]>;
  /**
   * Requests the reports recorded before, by id: a task the manifest no longer makes keeps
   * its request (plan shows what a changed task changed from it).
   */
  readonly recorded?: ReadonlyMap<string, RequestView>;
}

export const provenanceOf = (lock: LockFile, planned?: ReadonlyMap<string, PlannedTask>, recorded?: ReadonlyMap<string, RequestView>): Provenance => ({
  lock,
  ...(planned ? { planned } : {}),
  ...(recorded ? { recorded } : {}),
  files: filesByHash(lock),
  downstream: downstreamIndex(lock),
});

const iso = (ms: number | undefined): string | undefined => (ms === undefined ? undefined : new Date(ms).toISOString());

export const resultLine = (id: string, task: LockTask, now: number, prov?: Provenance) => {
  const planned = prov?.planned?.get(id);
  return {
    id,
    job: task.job,
    kind: task.kind,
    vars: task.vars,
    source: planned && position(planned.source),
    request: planned ? requestView(planned, prov?.files) : prov?.recorded?.get(id),
    estimate: planned?.estimate,
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
    upstream_files: task.upstream && prov ? upstreamFiles(prov.lock, task.upstream) : undefined,
    downstream: prov?.downstream.get(id),
    times: {
      planned: iso(task.planned_at),
      submitted: iso(task.submitted_at),
      created: iso(task.created_at),
      finished: iso(task.finished_at),
      updated: iso(task.updated_at),
      deleted_at_service: iso(deletionTime(task)),
    },
    nearing_deletion: nearingDeletion(task, now),
  };
};

export type ResultRecord = ReturnType<typeof resultLine>;

export const formatResultsJsonl = (lock: LockFile, now: number, prov?: Provenance): string =>
  Object.keys(lock.tasks)
    .sort()
    // Fixed key order, id first, for people reading the file; the same lockfile gives the same bytes.
    .map((id) => `${JSON.stringify(resultLine(id, lock.tasks[id]!, now, prov))}\n`)
    .join("");
