// The plan: what the manifest asks for against what the lockfile already records.
// `+` to create, `=` done or in flight, `~` changed (the old task stays in the
// lockfile; a new one is created), `-` in the lockfile but no longer in the manifest,
// `…` downstream tasks waiting on their upstream job. Pure: the engine uses the same
// answer to decide what to create.

import type { LockFile, LockTask, TaskState } from "../state/LockFile.js";
import type { LoadedManifest } from "./LoadedManifest.js";
import { type Amount, amountOf, formatAmount, plus, times } from "../money/Money.js";
import { join } from "node:path";
import type { PlannedTask, UpstreamItem } from "./PlannedTask.js";
import { folderHolders, resultFolder } from "./resultFolder.js";

export type PlanMark = "+" | "=" | "~" | "-" | "…";

export interface PlanEntry {
  readonly mark: PlanMark;
  /** The task to create or the task recorded; for `…`, the job id. */
  readonly id: string;
  readonly job: string;
  readonly vars: Readonly<Record<string, unknown>>;
  readonly dir?: string;
  /** State in the lockfile, for `=`, `~` (of the old task) and `-`. */
  readonly state?: TaskState;
  /** `=` only: submitted and not finished yet. */
  readonly inFlight?: boolean;
  /** `~`: the lockfile task(s) of the same job and matrix position this one replaces. */
  readonly replaces?: readonly string[];
  /** `+` for a retry: the attempt to create. */
  readonly attempt?: number;
  /** `+`/`~`: the PlannedTask to create (its id is `id`). */
  readonly task?: PlannedTask;
  readonly estimate?: { readonly currency: string; readonly amount: string };
  /** `…`: number of tasks expected once the upstream job has its results (`estimate` covers them all). */
  readonly count?: number;
  /** Why, in a few words (e.g. "retry 2 of 3", "failed, no retries left"). */
  readonly note?: string;
}

export interface PlanCounts {
  "+": number;
  "=": number;
  "~": number;
  "-": number;
  "…": number;
  /** Of `=`: tasks in flight. */
  inFlight: number;
}

export interface PlanResult {
  readonly manifest: string;
  readonly lockfile: string;
  readonly lockfileFound: boolean;
  readonly entries: readonly PlanEntry[];
  readonly jobs: Readonly<Record<string, PlanCounts>>;
  readonly total: PlanCounts;
  /** Estimated cost of the tasks to create (`+` and `~`), per currency; decimal strings. */
  readonly estimate: Readonly<Record<string, string>>;
  /** Estimated cost of the waiting downstream tasks (`…`), per currency, where prices allow. */
  readonly waitingEstimate: Readonly<Record<string, string>>;
}

const IN_FLIGHT: ReadonlySet<TaskState> = new Set(["submitting", "submitted", "processing"]);
const DONE: ReadonlySet<TaskState> = new Set(["succeeded", "downloaded"]);

const emptyCounts = (): PlanCounts => ({ "+": 0, "=": 0, "~": 0, "-": 0, "…": 0, inFlight: 0 });

const outputCount = (t: LockTask): number =>
  t.outputs.filter((o) => o.variant === "main" && (o.type === "image" || o.type === "video")).length;

export const diffPlan = (manifest: LoadedManifest, lock: LockFile | undefined): PlanResult => {
  const entries: PlanEntry[] = [];
  const lockTasks = lock?.tasks ?? {};
  const slotKey = (job: string, dir: string) => `${job}\u0000${dir}`;
  // Later attempts have ids of their own: find them by matrix position. They are few.
  const retries = new Map<string, [string, LockTask][]>();
  for (const id in lockTasks) {
    const t = lockTasks[id]!;
    if (t.attempt <= 1) continue;
    const key = slotKey(t.job, t.dir);
    const list = retries.get(key);
    if (list) list.push([id, t]);
    else retries.set(key, [[id, t]]);
  }
  const accounted = new Set<string>();
  /** Manifest id -> outputs of its latest finished attempt (for the downstream estimate). */
  const outputsOf = new Map<string, number>();
  /** Manifest id -> its latest finished attempt in the lockfile (the source of downstream items). */
  const finished = new Map<string, [string, LockTask]>();
  /** Tasks with no attempt in the lockfile: `+` or `~`, decided once every match is known. */
  const unmatched: { task: PlannedTask; at: number }[] = [];
  const anyLocked = Object.keys(lockTasks).length > 0;
  const holders = anyLocked ? folderHolders(Object.entries(lockTasks)) : new Map<string, string>();

  const create = (task: PlannedTask, dir: string): PlanEntry =>
    task.estimate
      ? { mark: "+", id: task.id, job: task.job, vars: task.vars, dir, task, estimate: task.estimate }
      : { mark: "+", id: task.id, job: task.job, vars: task.vars, dir, task };

  const classify = (task: PlannedTask): void => {
    if (!anyLocked) {
      // Nothing recorded at all: the common case of a first run.
      entries.push(create(task, task.dir));
      return;
    }
    // Where its results really go (the run's rule): its own record's folder, or a folder of its own.
    const folder = resultFolder(task, lockTasks[task.id]?.dir, holders);
    const chain: [string, LockTask][] = [];
    const direct = lockTasks[task.id];
    if (direct) chain.push([task.id, direct]);
    const later = retries.size ? retries.get(slotKey(task.job, folder)) : undefined;
    if (later) {
      for (const [id, t] of later) {
        if (id !== task.id && manifest.withAttempt(task, t.attempt).requestHash === t.request_hash) chain.push([id, t]);
      }
    }
    if (chain.length === 0) {
      unmatched.push({ task, at: entries.length });
      entries.push(create(task, folder));
      return;
    }
    let latestId = chain[0]![0];
    let latest = chain[0]![1];
    for (const [id, t] of chain) {
      accounted.add(id);
      if (t.attempt > latest.attempt) {
        latestId = id;
        latest = t;
      }
    }
    const state = latest.state;
    if (DONE.has(state)) {
      // Succeeded but not downloaded yet: its outputs are not recorded, it still makes what it asked for.
      if (state === "downloaded" || outputCount(latest) > 0) outputsOf.set(task.id, outputCount(latest));
      finished.set(task.id, [latestId, latest]);
      entries.push({ mark: "=", id: latestId, job: task.job, vars: task.vars, dir: folder, state });
    } else if (IN_FLIGHT.has(state)) {
      entries.push({ mark: "=", id: latestId, job: task.job, vars: task.vars, dir: folder, state, inFlight: true });
    } else if (state === "failed") {
      const attempts = 1 + task.retryFailed;
      if (latest.attempt < attempts) {
        const next = manifest.withAttempt(task, latest.attempt + 1);
        entries.push({
          mark: "+",
          id: next.id,
          job: task.job,
          vars: task.vars,
          dir: folder,
          state,
          attempt: next.attempt,
          task: next,
          ...(next.estimate ? { estimate: next.estimate } : {}),
          note: `retry: attempt ${next.attempt} of ${attempts}`,
        });
      } else {
        const note = attempts > 1 ? "failed, no retries left" : "failed";
        // It makes nothing: no downstream task waits on it.
        outputsOf.set(task.id, 0);
        entries.push({ mark: "=", id: latestId, job: task.job, vars: task.vars, dir: folder, state, note });
      }
    } else {
      // planned (never sent) or rejected (the service refused it): create it (again).
      const again = latest.attempt === task.attempt ? task : manifest.withAttempt(task, latest.attempt);
      entries.push({
        mark: "+",
        id: again.id,
        job: task.job,
        vars: task.vars,
        dir: folder,
        state,
        task: again,
        ...(again.estimate ? { estimate: again.estimate } : {}),
        ...(state === "rejected" ? { note: "the service rejected it before" } : {}),
      });
    }
  };

  const tasksOf = new Map<string, PlannedTask[]>();
  for (const task of manifest.tasks) {
    classify(task);
    const list = tasksOf.get(task.job);
    if (list) list.push(task);
    else tasksOf.set(task.job, [task]);
  }

  // Downstream jobs: their tasks exist for the upstream results the lockfile records.
  // Identity uses content hashes, not URLs, so they can be expanded here exactly; the
  // rest wait for their upstream tasks.
  for (const job of manifest.jobs) {
    if (!job.upstream) continue;
    const items: UpstreamItem[] = [];
    for (const up of tasksOf.get(job.upstream.job) ?? []) {
      const done = finished.get(up.id);
      if (!done) continue;
      for (const o of done[1].outputs) {
        if (o.variant !== "main" || (o.type !== "image" && o.type !== "video") || !o.sha256) continue;
        items.push({
          job: up.job,
          task: done[0],
          index: o.index,
          type: o.type,
          // Not a real address: identity never uses it (the engine sends a fresh one).
          url: `https://upstream.invalid/${o.sha256}`,
          file: o.path ? join(manifest.outputsDir, o.path) : "",
          sha256: o.sha256,
          vars: up.vars,
        });
      }
    }
    let made: PlannedTask[] = [];
    let note = `waiting on ${job.upstream.job} (${job.upstream.mode === "outputs" ? "one task per output" : "one task per task"})`;
    if (items.length > 0) {
      try {
        made = manifest.expandDownstream(job.id, items);
      } catch (error) {
        note = `cannot be expanded yet: ${(error as Error).message.split("\n").find((l) => l.includes("error:")) ?? "invalid"}`;
      }
    }
    for (const t of made) classify(t);
    tasksOf.set(job.id, made);
    const waiting = Math.max(0, manifest.expectedDownstreamCount(job.id, outputsOf) - made.length);
    if (waiting > 0) {
      const each = manifest.downstreamEstimate(job.id);
      entries.push({
        mark: "…",
        id: job.id,
        job: job.id,
        vars: {},
        count: waiting,
        note,
        ...(each ? { estimate: { currency: each.currency, amount: formatAmount(times(amountOf(each.amount), waiting)) } } : {}),
      });
    }
  }

  // `~`: a task without attempts whose matrix position holds other (older) tasks.
  if (unmatched.length > 0) {
    const leftover = new Map<string, string[]>();
    for (const id in lockTasks) {
      if (accounted.has(id)) continue;
      const t = lockTasks[id]!;
      const key = slotKey(t.job, t.dir);
      const list = leftover.get(key);
      if (list) list.push(id);
      else leftover.set(key, [id]);
    }
    for (const { task, at } of unmatched) {
      const older = leftover.get(slotKey(task.job, task.dir))?.filter((id) => !accounted.has(id)) ?? [];
      if (older.length === 0) continue;
      for (const id of older) accounted.add(id);
      entries[at] = { ...entries[at]!, mark: "~", replaces: older.sort() };
    }
  }

  for (const id in lockTasks) {
    if (accounted.has(id)) continue;
    const t = lockTasks[id]!;
    entries.push({ mark: "-", id, job: t.job, vars: t.vars, dir: t.dir, state: t.state });
  }

  const jobs: Record<string, PlanCounts> = {};
  for (const j of manifest.jobs) jobs[j.id] = emptyCounts();
  const total = emptyCounts();
  const costs = new Map<string, Amount>();
  const waitingCosts = new Map<string, Amount>();
  for (const e of entries) {
    const c = (jobs[e.job] ??= emptyCounts());
    const n = e.mark === "…" ? (e.count ?? 0) : 1;
    c[e.mark] += n;
    total[e.mark] += n;
    if (e.inFlight) {
      c.inFlight++;
      total.inFlight++;
    }
    if (e.estimate && e.mark !== "=" && e.mark !== "-") {
      const into = e.mark === "…" ? waitingCosts : costs;
      const before = into.get(e.estimate.currency);
      const cost = amountOf(e.estimate.amount);
      into.set(e.estimate.currency, before === undefined ? cost : plus(before, cost));
    }
  }
  const estimate: Record<string, string> = {};
  for (const [currency, m] of costs) estimate[currency] = formatAmount(m);
  const waitingEstimate: Record<string, string> = {};
  for (const [currency, m] of waitingCosts) waitingEstimate[currency] = formatAmount(m);
  return {
    manifest: manifest.file,
    lockfile: manifest.lockfilePath,
    lockfileFound: lock !== undefined,
    entries,
    jobs,
    total,
    estimate,
    waitingEstimate,
  };
};
