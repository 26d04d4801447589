// How many results a finished task must list, and what to do when a `succeeded` answer
// lists fewer: ask again (bounded in answers and in time), or give up and record the
// missing results as lost. A short answer is not final: the service may show the outputs
// a moment after the status, and a task whose results were deleted (past the 30 days)
// still answers `succeeded`, with none. Pure: counts, times and bounds come in as data.

import type { PlannedTask } from "../manifest/PlannedTask.js";
import type { RemoteOutput } from "../protocol/TaskView.js";
import type { LockOutput } from "../state/LockFile.js";
import { SERVICE_RETENTION_MS } from "../outputs/resultState.js";

/**
 * The fewest results (main files of the task's kind) a succeeded task can have: a video
 * 1; an image task `n` (1 when absent) for `single`, `series_amount` (4 when absent) for
 * `series`, and 1 for `series_amount: auto` (the service picks the count).
 */
export const expectedResults = (task: Pick<PlannedTask, "kind" | "request">): number => {
  if (task.kind === "video") return 1;
  const request = task.request as { result_type?: string; n?: number; series_amount?: number | "auto" };
  if (request.result_type === "series") {
    const amount = request.series_amount ?? 4;
    return amount === "auto" ? 1 : Math.max(1, amount);
  }
  return Math.max(1, request.n ?? 1);
};

/** The results an answer lists: distinct positions of main files of the task's kind, with a link. */
export const listedResults = (kind: "video" | "image", outputs: readonly RemoteOutput[]): number =>
  new Set(outputs.filter((o) => o.type === kind && o.variant === "main" && typeof o.url === "string" && o.url.length > 0).map((o) => o.index)).size;

/** A task's short answers so far in this run: how many, and when the first came. */
export interface ShortAnswers {
  readonly count: number;
  readonly since: number | undefined;
}

export interface ShortAnswerBounds {
  /** Short answers taken before giving up. */
  readonly answers: number;
  /** Time since the first short answer after which it gives up, whatever the count. */
  readonly waitMs: number;
}

export type SucceededStep =
  /** Enough results listed: fetch them. */
  | { readonly _tag: "Fetch" }
  /** Too few: not final, ask the service again (the task stays in flight, without a slot). */
  | { readonly _tag: "AskAgain" }
  /** Too few, and asking again will not help: fetch what is listed, record the rest lost. */
  | { readonly _tag: "GiveUp"; readonly why: string };

/**
 * What a `succeeded` answer listing `listed` of `expected` results leads to, `short`
 * being the short answers before this one. Past the service's retention (30 days from
 * the task's end, `finishedAt`, by the service's own times) a short answer is final at
 * once: the results are deleted. Otherwise it is asked again until `bounds.answers`
 * short answers, or `bounds.waitMs` since the first.
 */
export const afterSucceeded = (
  expected: number,
  listed: number,
  short: ShortAnswers,
  now: number,
  finishedAt: number | undefined,
  bounds: ShortAnswerBounds,
): SucceededStep => {
  if (listed >= expected) return { _tag: "Fetch" };
  const what = `the service lists ${listed} of the task's ${expected} result${expected === 1 ? "" : "s"}`;
  if (finishedAt !== undefined && Number.isFinite(finishedAt) && now >= finishedAt + SERVICE_RETENTION_MS) {
    return { _tag: "GiveUp", why: `${what}, more than 30 days after it ended (deleted at the service)` };
  }
  const count = short.count + 1;
  const since = short.since ?? now;
  if (count >= bounds.answers || now - since >= bounds.waitMs) {
    return { _tag: "GiveUp", why: `${what}, in ${count} answer${count === 1 ? "" : "s"} over ${Math.round((now - since) / 1000)} s` };
  }
  return { _tag: "AskAgain" };
};

/** Whether an output record is a result of the task's kind that has a file or is known deleted. */
const isAccounted = (kind: "video" | "image", o: LockOutput): boolean =>
  o.type === kind && o.variant === "main" && (o.path !== undefined || o.deleted_at !== undefined);

/**
 * A task's output records after a download, with every result it must have accounted
 * for: a main result of its kind recorded without a file (listed without a link) is
 * marked deleted at `now`, and records are added, deleted at `now`, at the first free
 * positions until `expected` results are recorded. Records are never dropped or
 * changed otherwise. Returns the records and how many were marked or added.
 */
export const withMissingResults = (
  kind: "video" | "image",
  expected: number,
  outputs: readonly LockOutput[],
  now: number,
): { readonly outputs: LockOutput[]; readonly missing: number } => {
  let missing = 0;
  const out = outputs.map((o) => {
    if (o.type === kind && o.variant === "main" && o.path === undefined && o.deleted_at === undefined) {
      missing++;
      return { ...o, deleted_at: now };
    }
    return o;
  });
  let accounted = out.filter((o) => isAccounted(kind, o)).length;
  const used = new Set(out.filter((o) => o.type === kind && o.variant === "main").map((o) => o.index));
  for (let index = 0; accounted < expected; index++) {
    if (used.has(index)) continue;
    out.push({ type: kind, index, variant: "main", deleted_at: now });
    used.add(index);
    accounted++;
    missing++;
  }
  return { outputs: out, missing };
};
