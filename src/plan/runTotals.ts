// What a run starts from, per job, read off the plan: every task the job is expected to
// have (recorded ones, ones to create, and the downstream ones that wait on their
// upstream job), and of those how many are done, in flight at the service, failed for
// good, or still to create. The live view's totals and the "resuming: ..." line come from
// here, so a run and `plan` count the same way. Pure.

import type { TaskState } from "../state/LockFile.js";
import type { PlanEntry, PlanResult } from "./diffPlan.js";

/** Where the start event's totals counted a task recorded before the run (see JobOutlook). */
export type StartBucket = "done" | "inFlight" | "failed";

/** What the run found and expects, per job, from the plan (runTotals below). */
export interface JobOutlook {
  /** Every task the job is expected to have: recorded, to create, and expected downstream ones. */
  readonly total: number;
  /** Results on disk already. */
  readonly done: number;
  /** Created (or finished) at the service, results not on disk yet. */
  readonly inFlight: number;
  /** Failed with no attempt left. */
  readonly failed: number;
  /** To create now, plus expected downstream tasks that wait on their upstream job. */
  readonly toCreate: number;
}

export interface RunTotals {
  readonly total: number;
  /** Per job, in the plan's job order. */
  readonly jobs: Readonly<Record<string, JobOutlook>>;
  /** Set when the lockfile recorded any task the manifest still makes: the run resumes. */
  readonly resume?: { readonly done: number; readonly inFlight: number; readonly failed: number; readonly toCreate: number };
}

/**
 * Where the totals count a task the plan keeps as it is (`=`), by its recorded state;
 * undefined: to create (a fresh service has none of the tasks in flight).
 */
export const startBucketOf = (state: TaskState, freshService: boolean): StartBucket | undefined =>
  state === "downloaded" ? "done" : state === "failed" || state === "rejected" ? "failed" : freshService ? undefined : "inFlight";

const isSettled = (bucket: StartBucket | undefined): boolean => bucket === "done" || bucket === "failed";

/**
 * Where the start's totals count one entry: in a bucket, to create, or not at all (`-`;
 * what a chosen part leaves out, except tasks done or failed, which stay where they are).
 * A `+` made again after a downloaded attempt (`--recreate-lost`) stays counted where that
 * attempt was (its walk's `before`) until it is made: one task, not a second one.
 */
const countedAs = (e: PlanEntry, freshService: boolean, keeps: ((e: PlanEntry) => boolean) | undefined): StartBucket | "toCreate" | undefined => {
  if (e.mark === "-") return undefined;
  const bucket = e.mark === "=" ? startBucketOf(e.state ?? "submitted", freshService) : e.mark === "+" && e.walk !== undefined && e.walk.record === undefined ? e.walk.before : undefined;
  if (keeps !== undefined && !keeps(e) && !(e.mark === "=" && isSettled(bucket))) return undefined;
  return bucket ?? "toCreate";
};

/**
 * `freshService`: the service knows none of the recorded tasks (an emulated run starts a
 * new emulator), so tasks in flight there are created again: they count as to create.
 * `keeps`: a run of a chosen part (--only, --where, --failed; the plan made with its
 * renewals) counts only the work it does: what it leaves out is not counted, except
 * tasks done or failed, which stay where they are (selection.ts keepsEntry).
 */
export const runTotals = (plan: PlanResult, freshService = false, keeps?: (e: PlanEntry) => boolean): RunTotals => {
  const jobs: Record<string, { total: number; done: number; inFlight: number; failed: number; toCreate: number }> = {};
  const zero = () => ({ total: 0, done: 0, inFlight: 0, failed: 0, toCreate: 0 });
  for (const job of Object.keys(plan.jobs)) jobs[job] = zero();
  let recorded = 0;
  for (const e of plan.entries) {
    const as = countedAs(e, freshService, keeps);
    if (as === undefined) continue;
    const c = (jobs[e.job] ??= zero());
    const n = e.mark === "…" ? (e.count ?? 0) : 1;
    c.total += n;
    if (e.mark === "=" || (e.mark !== "…" && (e.state !== undefined || e.replaces !== undefined))) recorded++;
    c[as] += n;
  }
  const all = Object.values(jobs);
  const sum = (k: "total" | "done" | "inFlight" | "failed" | "toCreate") => all.reduce((n, c) => n + c[k], 0);
  return {
    total: sum("total"),
    jobs,
    ...(recorded > 0 ? { resume: { done: sum("done"), inFlight: sum("inFlight"), failed: sum("failed"), toCreate: sum("toCreate") } } : {}),
  };
};

/** Where the start's totals counted a matrix position (job and folder), as a view asks when it first hears of it; undefined: to create, or not counted. */
export type StartBuckets = (job: string, dir: string) => StartBucket | undefined;

/**
 * The start's buckets per matrix position, by the rule `runTotals` counts with: a view
 * moves a task it hears of out of the bucket the start counted it in, so a task sent,
 * made or tried again is still one task. Made on the first question (a run that tells
 * nothing asks none).
 */
export const startBuckets = (plan: PlanResult, freshService = false, keeps?: (e: PlanEntry) => boolean): StartBuckets => {
  let byPosition: Map<string, StartBucket> | undefined;
  return (job, dir) => {
    if (byPosition === undefined) {
      byPosition = new Map();
      for (const e of plan.entries) {
        if (e.mark === "…" || e.dir === undefined) continue;
        const as = countedAs(e, freshService, keeps);
        if (as !== undefined && as !== "toCreate") byPosition.set(`${e.job}\u0000${e.dir}`, as);
      }
    }
    return byPosition.get(`${job}\u0000${dir}`);
  };
};

/** `36 tasks: 12 stills, 24 reels`. */
export const describeTotals = (t: Pick<RunTotals, "total" | "jobs">): string => {
  const parts = Object.entries(t.jobs).map(([job, c]) => `${c.total} ${job}`);
  return `${t.total} task${t.total === 1 ? "" : "s"}${parts.length > 1 ? `: ${parts.join(", ")}` : ""}`;
};

/** `resuming: 22 done, 4 in flight at the service, 10 to create`. */
export const describeResume = (r: NonNullable<RunTotals["resume"]>): string =>
  `resuming: ${r.done} done, ${r.inFlight} in flight at the service, ${r.toCreate} to create${r.failed ? `, ${r.failed} failed` : ""}`;
