// results.jsonl: one line per task (sorted by id), for scripts and jq: what it was made
// from (the request as sent and its manifest position, when the manifest's planned
// tasks are at hand), where it ended, its files (paths relative to the outputs folder,
// size, sha256), the upstream file it was made from and the downstream files made from
// it, what it cost, its error, and when its results are deleted at the service. The same
// record is each task folder's task.json.

import type { PlannedTask } from "../manifest/PlannedTask.js";
import type { LockFile, LockTask } from "../state/LockFile.js";
import type { ResultState } from "../outputs/resultState.js";
import { resultKey } from "../outputs/scanResults.js";
import { isoTime } from "../protocol/UnixMs.js";
import { deletionTime, nearingDeletion } from "./nearingDeletion.js";
import { type FilesByHash, type LinkedFile, type RequestView, downstreamIndex, filesByHashWhenAsked, position, requestView, upstreamFiles } from "./provenance.js";
import { recordedStanding, type Standings, standingOf } from "./standing.js";

/** What an earlier results.jsonl said made a task: kept for tasks the manifest no longer makes. */
export interface EarlierRecord {
  readonly source?: string;
  readonly request?: RequestView;
  readonly estimate?: { readonly currency: string; readonly amount: string };
}

/**
 * Request, source and estimate of each task in an earlier results.jsonl. A task that
 * left the manifest (orphaned, superseded) keeps what made it: the manifest can no
 * longer say, the earlier record can. Lines that are not such records are skipped.
 */
export const earlierRecords = (text: string, wanted?: ReadonlySet<string>): Map<string, EarlierRecord> => {
  const map = new Map<string, EarlierRecord>();
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue;
    // Lines start with their id: only the wanted ones are parsed (a large file holds 100,000).
    if (wanted) {
      const id = /^\{"id":"([^"\\]*)"/.exec(line)?.[1];
      if (id !== undefined && !wanted.has(id)) continue;
    }
    try {
      const r = JSON.parse(line) as { id?: unknown; source?: unknown; request?: unknown; estimate?: unknown };
      if (typeof r.id !== "string" || typeof r.request !== "object" || r.request === null) continue;
      map.set(r.id, {
        request: r.request as RequestView,
        ...(typeof r.source === "string" ? { source: r.source } : {}),
        ...(typeof r.estimate === "object" && r.estimate !== null ? { estimate: r.estimate as EarlierRecord["estimate"] & object } : {}),
      });
    } catch {
      // A damaged line: that task's record is simply not carried over.
    }
  }
  return map;
};

/** What a record needs beyond its own lockfile entry. */
export interface Provenance {
  readonly lock: LockFile;
  /** The manifest's planned tasks by id: current tasks get `request` and `source`. */
  readonly planned?: ReadonlyMap<string, PlannedTask>;
  readonly files: FilesByHash;
  readonly downstream: ReadonlyMap<string, readonly LinkedFile[]>;
  /** Which tasks are superseded, orphaned or pruned (standing.ts); absent: all current. */
  readonly standing?: Standings;
  /** What the last results.jsonl said of tasks the manifest does not make now. */
  readonly earlier?: ReadonlyMap<string, EarlierRecord>;
}

export const provenanceOf = (
  lock: LockFile,
  planned?: ReadonlyMap<string, PlannedTask>,
  more: { readonly standing?: Standings; readonly earlier?: ReadonlyMap<string, EarlierRecord> } = {},
): Provenance => ({
  lock,
  ...(planned ? { planned } : {}),
  ...more,
  files: filesByHashWhenAsked(lock),
  downstream: downstreamIndex(lock),
});

// A time no Date can show (a service sent 1e300, an older version recorded it) is left out, never a failed report.
const iso = isoTime;

/**
 * `states`: each result's state (present, restorable, lost) by `resultKey`, when the
 * outputs folder was looked at (scanResults.ts).
 */
export const resultLine = (id: string, task: LockTask, now: number, prov?: Provenance, states?: ReadonlyMap<string, ResultState>) => {
  const planned = prov?.planned?.get(id);
  const earlier = planned ? undefined : prov?.earlier?.get(id);
  const standing = prov?.standing ? standingOf(prov.standing, id) : recordedStanding(task) === "superseded" ? "superseded" : "current";
  return {
    id,
    job: task.job,
    kind: task.kind,
    vars: task.vars,
    source: planned ? position(planned.source) : earlier?.source,
    request: planned ? requestView(planned, prov?.files) : earlier?.request,
    estimate: planned?.estimate ?? earlier?.estimate,
    state: task.state,
    standing,
    superseded_by: prov?.standing?.supersededBy.get(id) || task.superseded_by,
    abandoned: task.abandoned ? { service: task.abandoned.service, at: iso(task.abandoned.at) } : undefined,
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
      deleted_at_service: iso(o.deleted_at),
      state: states?.get(resultKey(id, o.index, o.variant)),
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

/** results.jsonl's lines (each with its newline), made one at a time as they are asked for. */
export function* resultsJsonlLines(lock: LockFile, now: number, prov?: Provenance, states?: ReadonlyMap<string, ResultState>): Generator<string, void, undefined> {
  const ids = Object.keys(lock.tasks)
    // Pruned tasks' records were removed with their files: only billing.* keeps their spend.
    .filter((id) => lock.tasks[id]!.pruned_at === undefined)
    .sort();
  // Fixed key order, id first, for people reading the file; the same lockfile gives the same bytes.
  for (const id of ids) yield `${JSON.stringify(resultLine(id, lock.tasks[id]!, now, prov, states))}\n`;
}

/** The whole of results.jsonl as one string (writeReports writes it from `resultsJsonlLines` in chunks). */
export const formatResultsJsonl = (lock: LockFile, now: number, prov?: Provenance, states?: ReadonlyMap<string, ResultState>): string =>
  [...resultsJsonlLines(lock, now, prov, states)].join("");
