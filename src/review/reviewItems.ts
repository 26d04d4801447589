// What a person reviews: every recorded output of the jobs marked `review`, with its
// task, file, matrix values and decision; and the filter the review command takes
// (`stills product.sku=A-1`: a job id, then key=value matrix values with dotted paths
// into data rows). Pure: the command and the review page read files and call these.

import type { LockFile } from "../state/LockFile.js";
import { type DecisionIndex, type ReviewState, reviewStateOf } from "./reviewDecision.js";

export interface ReviewItem {
  readonly job: string;
  /** external_task_id of the task that made it. */
  readonly task: string;
  readonly output: number;
  readonly sha256: string;
  readonly type: "image" | "video";
  /** Relative to the outputs folder. */
  readonly path: string;
  readonly vars: Readonly<Record<string, unknown>>;
  /** The task's take (a new take after a rejection has the same matrix values: `take=2` tells it apart). */
  readonly take: number;
  readonly state: ReviewState;
}

/** The outputs of `jobs` the lockfile records on disk, ordered by job, task, output. */
export const reviewItems = (lock: LockFile | undefined, jobs: ReadonlySet<string>, decisions: DecisionIndex): ReviewItem[] => {
  const items: ReviewItem[] = [];
  if (!lock) return items;
  for (const id of Object.keys(lock.tasks).sort()) {
    const t = lock.tasks[id]!;
    if (!jobs.has(t.job) || t.state !== "downloaded") continue;
    for (const o of t.outputs) {
      if (o.variant !== "main" || (o.type !== "image" && o.type !== "video") || !o.sha256 || !o.path) continue;
      items.push({
        job: t.job,
        task: id,
        output: o.index,
        sha256: o.sha256,
        type: o.type,
        path: o.path,
        vars: t.vars,
        take: t.take,
        state: reviewStateOf({ task: id, output: o.index, sha256: o.sha256 }, decisions),
      });
    }
  }
  return items.sort((a, b) => (a.job < b.job ? -1 : a.job > b.job ? 1 : a.task < b.task ? -1 : a.task > b.task ? 1 : a.output - b.output));
};

export interface ReviewFilter {
  readonly job?: string;
  readonly where: readonly { readonly path: readonly string[]; readonly value: string }[];
}

/**
 * `stills product.sku=A-1 style=studio` -> job `stills`, two conditions. The job may be
 * left out (`product.sku=A-1`: every reviewed job). A reason in words when malformed.
 */
export const parseFilter = (text: string): ReviewFilter | { readonly error: string } => {
  const words = text.trim().split(/\s+/).filter(Boolean);
  let job: string | undefined;
  const where: { path: string[]; value: string }[] = [];
  for (const [i, w] of words.entries()) {
    const eq = w.indexOf("=");
    if (eq < 0) {
      if (i > 0) return { error: `'${w}' in the filter '${text}': after the job id, each word is key=value (e.g. product.sku=A-1)` };
      job = w;
      continue;
    }
    const key = w.slice(0, eq);
    const path = key.split(".");
    if (key === "" || path.some((p) => p === "")) return { error: `'${w}' in the filter '${text}': the key before '=' must be a name or a dotted path (e.g. product.sku)` };
    where.push({ path, value: w.slice(eq + 1) });
  }
  return { ...(job !== undefined ? { job } : {}), where };
};

const at = (vars: Readonly<Record<string, unknown>>, path: readonly string[]): unknown => {
  let v: unknown = vars;
  for (const p of path) {
    if (v === null || typeof v !== "object") return undefined;
    v = (v as Record<string, unknown>)[p];
  }
  return v;
};

/**
 * Whether an item matches: the job (when given) and every value, compared as text. `take=N`
 * names the task's take, unless the matrix has a value called `take`.
 */
export const matchesFilter = (item: Pick<ReviewItem, "job" | "vars"> & { readonly take?: number }, filter: ReviewFilter): boolean =>
  (filter.job === undefined || item.job === filter.job) &&
  filter.where.every((c) => {
    const v = c.path.length === 1 && c.path[0] === "take" && !Object.hasOwn(item.vars, "take") ? item.take : at(item.vars, c.path);
    return v !== undefined && v !== null && typeof v !== "object" && String(v) === c.value;
  });

/** Outputs per state, for "N left". */
export const countStates = (items: readonly ReviewItem[]): Record<ReviewState, number> => {
  const c = { approved: 0, rejected: 0, awaiting: 0 };
  for (const i of items) c[i.state]++;
  return c;
};

/** `product.sku=A-1 style=studio`: an item's scalar values by dotted path, for one line. */
export const describeItemVars = (vars: Readonly<Record<string, unknown>>): string => {
  const parts: string[] = [];
  const walk = (v: unknown, path: string) => {
    if (v !== null && typeof v === "object" && !Array.isArray(v)) {
      for (const k of Object.keys(v)) walk((v as Record<string, unknown>)[k], path ? `${path}.${k}` : k);
    } else if (v !== undefined && path !== "") parts.push(`${path}=${Array.isArray(v) ? JSON.stringify(v) : String(v)}`);
  };
  walk(vars, "");
  return parts.join(" ");
};
