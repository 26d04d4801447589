// Every recorded result of a lockfile with its state (resultState.ts), for run, status,
// plan and the reports: the one place that looks at the outputs folder for them. A file
// counts as here when it has its recorded size (a stat, no hashing: 100,000 results
// must not cost a read of every byte; the downloader hashes each file as it writes it).

import { statSync } from "node:fs";
import type { LockTask } from "../state/LockFile.js";
import { resolveInside } from "./OutputPaths.js";
import { isResultFile, resultState, type LocalCopy, type ResultVerdict, type StoredObject } from "./resultState.js";

export interface ScannedResult {
  /** The task's external id. */
  readonly id: string;
  readonly job: string;
  readonly vars: Readonly<Record<string, unknown>>;
  /** Path relative to the outputs folder (absent for a result deleted before it was ever fetched). */
  readonly path?: string;
  readonly index: number;
  readonly verdict: ResultVerdict;
}

export interface ResultCounts {
  readonly present: number;
  readonly restorable: number;
  readonly lost: number;
}

export const localCopy = (outputsDir: string, path: string | undefined, size: number | undefined): LocalCopy => {
  if (path === undefined) return "missing";
  try {
    const s = statSync(resolveInside(outputsDir, path), { throwIfNoEntry: false });
    if (!s?.isFile()) return "missing";
    return s.size === size ? "matches" : "differs";
  } catch {
    return "missing"; // unreadable or outside the folder: not here
  }
};

/** Each result file the lockfile records (in task id order), with its state now. */
export const scanResults = (
  tasks: Readonly<Record<string, LockTask>>,
  outputsDir: string,
  now: number,
  inStore?: (key: string) => StoredObject | undefined,
): ScannedResult[] => {
  const out: ScannedResult[] = [];
  for (const id of Object.keys(tasks).sort()) {
    const task = tasks[id]!;
    for (const o of task.outputs) {
      if (!isResultFile(o)) continue;
      const verdict = resultState({ output: o, task, local: localCopy(outputsDir, o.path, o.size), now, ...(inStore ? { inStore } : {}) });
      out.push({ id, job: task.job, vars: task.vars, ...(o.path !== undefined ? { path: o.path } : {}), index: o.index, verdict });
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
  const values = Object.keys(r.vars)
    .sort()
    .map((k) => `${k}=${typeof r.vars[k] === "object" ? JSON.stringify(r.vars[k]) : String(r.vars[k])}`)
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

export const lostResults = (results: readonly ScannedResult[]): LostResult[] =>
  results.flatMap((r) =>
    r.verdict.state === "lost"
      ? [{ task: r.id, job: r.job, vars: r.vars, ...(r.path !== undefined ? { path: r.path } : {}), why: r.verdict.why, ...(r.verdict.at !== undefined ? { at: r.verdict.at } : {}) }]
      : [],
  );
