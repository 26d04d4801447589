// Every recorded result of a lockfile with its state (resultState.ts), for run, status,
// plan and the reports: the one place that looks at the outputs for them. A file counts
// as here when it has its recorded size (a stat, no hashing: 100,000 results must not
// cost a read of every byte; the downloader hashes each file as it writes it). With the
// outputs in a store, the caller lists the prefix once (one request per 1,000 keys) and
// passes the listing: an object counts as here when its size and ETag match the record.

import { statSync } from "node:fs";
import type { LockTask } from "../state/LockFile.js";
import { resolveInside } from "./OutputPaths.js";
import { isResultFile, resultState, storedCopy, type LocalCopy, type ResultVerdict, type StoredObject } from "./resultState.js";

export interface ScannedResult {
  /** The task's external id. */
  readonly id: string;
  readonly job: string;
  readonly vars: Readonly<Record<string, unknown>>;
  /** Path relative to the outputs folder (absent for a result deleted before it was ever fetched). */
  readonly path?: string;
  readonly index: number;
  readonly variant: string;
  readonly verdict: ResultVerdict;
}

/** The key of one result in `statesOf`: task id, output index and variant. */
export const resultKey = (id: string, index: number, variant: string): string => `${id}\u0000${index}\u0000${variant}`;

/** Each result's state by `resultKey`, for the reports. */
export const statesOf = (results: readonly ScannedResult[]): ReadonlyMap<string, ResultVerdict["state"]> =>
  new Map(results.map((r) => [resultKey(r.id, r.index, r.variant), r.verdict.state] as const));

export interface ResultCounts {
  readonly present: number;
  readonly restorable: number;
  readonly lost: number;
}

/** Whether the run already saw the file at `path` with `size` (then it is not looked at again). */
export type SeenFile = (path: string, size: number | undefined) => boolean;

export const localCopy = (outputsDir: string, path: string | undefined, size: number | undefined, seen?: SeenFile): LocalCopy => {
  if (path === undefined) return "missing";
  if (seen?.(path, size) === true) return "matches";
  try {
    const s = statSync(resolveInside(outputsDir, path), { throwIfNoEntry: false });
    if (!s?.isFile()) return "missing";
    return s.size === size ? "matches" : "differs";
  } catch {
    return "missing"; // unreadable or outside the folder: not here
  }
};

/** Where the results are: an outputs folder, or what a store's listing shows under its prefix (keys relative to it). */
export type ResultsAt = string | ReadonlyMap<string, StoredObject>;

/**
 * Each result file the lockfile records (in task id order), with its state now. A task
 * made again as a later attempt (a failure tried again, `run --recreate-lost`) is
 * superseded: its results are history, not counted; so are the results of downstream
 * tasks made from a superseded task's results.
 */
export const scanResults = (
  tasks: Readonly<Record<string, LockTask>>,
  outputsDir: ResultsAt,
  now: number,
  inStore?: (key: string) => StoredObject | undefined,
  /** Files the run already saw with their recorded size (its start check, its downloads): not stat'ed again. */
  seen?: SeenFile,
): ScannedResult[] => {
  const out: ScannedResult[] = [];
  const slot = (t: LockTask) => `${t.job}\u0000${t.dir}\u0000${t.take}`;
  // Only a later attempt (2 or more) supersedes anything: only their slots are keyed (a
  // lockfile of 100,000 first attempts builds no key per task).
  const latest = new Map<string, number>();
  for (const id in tasks) {
    const t = tasks[id]!;
    if (t.attempt < 2) continue;
    const key = slot(t);
    if ((latest.get(key) ?? -1) < t.attempt) latest.set(key, t.attempt);
  }
  const superseded = new Set<string>();
  if (latest.size > 0) for (const id in tasks) if (tasks[id]!.attempt < (latest.get(slot(tasks[id]!)) ?? -1)) superseded.add(id);
  // Downstream of superseded, level by level (a chain of jobs is short; bounded by the task count).
  for (let grew = superseded.size > 0, rounds = 0; grew && rounds < 64; rounds++) {
    grew = false;
    for (const id in tasks) {
      const up = tasks[id]!.upstream?.task;
      if (up !== undefined && superseded.has(up) && !superseded.has(id)) {
        superseded.add(id);
        grew = true;
      }
    }
  }
  for (const id of Object.keys(tasks).sort()) {
    if (superseded.has(id)) continue;
    const task = tasks[id]!;
    for (const o of task.outputs) {
      if (!isResultFile(o)) continue;
      const local = typeof outputsDir === "string" ? localCopy(outputsDir, o.path, o.size, seen) : o.path === undefined ? "missing" : storedCopy(o, outputsDir.get(o.path));
      const verdict = resultState({ output: o, task, local, now, ...(inStore ? { inStore } : {}) });
      // Written out, not spread: one object per result (a rerun scans 100,000).
      out.push(
        o.path !== undefined
          ? { id, job: task.job, vars: task.vars, path: o.path, index: o.index, variant: o.variant, verdict }
          : { id, job: task.job, vars: task.vars, index: o.index, variant: o.variant, verdict },
      );
    }
  }
  return out;
};

export const countResults = (results: readonly ScannedResult[]): ResultCounts => {
  let present = 0;
  let restorable = 0;
  let lost = 0;
  for (const r of results) {
    if (r.verdict.state === "present") present++;
    else if (r.verdict.state === "restorable") restorable++;
    else lost++;
  }
  return { present, restorable, lost };
};

/** A result named for people: its job and matrix values (`stills subject=apple`), and its file. */
export const resultName = (r: Pick<ScannedResult, "job" | "vars" | "path" | "index">): string => {
  // A downstream task names its upstream's values and which output it was made from.
  const item = r.vars.item as { vars?: Record<string, unknown>; index?: unknown } | undefined;
  const vars: Record<string, unknown> =
    item && typeof item === "object" && !Array.isArray(item)
      ? { ...(item.vars ?? {}), ...(typeof item.index === "number" ? { output: item.index + 1 } : {}), ...Object.fromEntries(Object.entries(r.vars).filter(([k]) => k !== "item")) }
      : r.vars;
  const values = Object.keys(vars)
    .sort()
    .map((k) => `${k}=${typeof vars[k] === "object" ? JSON.stringify(vars[k]) : String(vars[k])}`)
    .join(" ");
  return `${r.job}${values ? ` ${values}` : ""}${r.path ? ` (${r.path})` : ` (output ${r.index + 1})`}`;
};

/** A lost result as reports carry it. */
export interface LostResult {
  readonly task: string;
  readonly job: string;
  readonly vars: Readonly<Record<string, unknown>>;
  readonly path?: string;
  /** deleted: the service said so; expired: past the service's 30 days. */
  readonly why: "deleted" | "expired";
  /** Unix ms: when it was seen deleted, or when it expired. */
  readonly at?: number;
}

export const lostResults = (results: readonly ScannedResult[]): LostResult[] => {
  // A loop, not flatMap: no empty array per result that is not lost (a rerun's 100,000).
  const lost: LostResult[] = [];
  for (const r of results) {
    if (r.verdict.state !== "lost") continue;
    lost.push({ task: r.id, job: r.job, vars: r.vars, ...(r.path !== undefined ? { path: r.path } : {}), why: r.verdict.why, ...(r.verdict.at !== undefined ? { at: r.verdict.at } : {}) });
  }
  return lost;
};
