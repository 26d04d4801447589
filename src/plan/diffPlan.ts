// The plan: what the manifest asks for against what the lockfile already records.
// `+` to create, `=` done or in flight, `~` changed (the old task stays in the
// lockfile; a new one is created), `-` in the lockfile but no longer in the manifest,
// `…` downstream tasks waiting on their upstream job. Pure: the engine uses the same
// answer to decide what to create.

import type { LockFile, LockTask, TaskState } from "../state/LockFile.js";
import type { LoadedManifest } from "../manifest/LoadedManifest.js";
import { type Amount, amountOf, formatAmount, plus, times } from "../money/Money.js";
import type { PlannedTask, UpstreamItem } from "../manifest/PlannedTask.js";
import { plannedFiles } from "../manifest/taskFiles.js";
import { itemFile } from "../manifest/itemFile.js";
import { gateItems } from "../review/gate.js";
import type { DecisionIndex } from "../review/reviewDecision.js";
import { defaultFolderOf, folderHolders, resultFolder } from "../manifest/resultFolder.js";
import { changeReason } from "./changeReason.js";
import { attempts, attemptsAllowed, newWalk, type AttemptRecords, type AttemptRules, type AttemptWalk } from "./attempts.js";
import { retakeDownstream, retakePass } from "./retakes.js";

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
  /** `+`: the attempt walk passed a failed attempt to reach it (attempts.ts): what `--failed` takes. */
  readonly pastFailed?: boolean;
  /** Why, in a few words (e.g. "retry 2 of 3", "failed, no retries left"). */
  readonly note?: string;
  /**
   * `+`/`~`: the folder the run will really put the task's files in, when it is not `dir`
   * (another task's files are there: taskFiles.ts, shared with the run). See `entryFiles`.
   */
  readonly placed?: string;
  /**
   * `-` only: the current task at the same job and matrix position (the one that replaced
   * it); absent for an orphaned task, whose position the manifest no longer has.
   */
  readonly supersededBy?: string;
  /** `=` only: not created here, its results taken from a paid task with the same request elsewhere (`note` says where). */
  readonly reused?: true;
  /** `=` only: a take rejected in review that brings no new take, `retake_rejected` being used up (`note` says so; the plan lists it). */
  readonly noNewTake?: true;
  /**
   * `+`, `=`, `~` of a task made from the manifest (or from upstream results) when the
   * lockfile records anything: the attempt walk that led here (attempts.ts), with the
   * record it stopped at. The engine admits it as it is (absent: the task, new: `newWalk`).
   */
  readonly walk?: AttemptWalk;
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
  /**
   * Jobs with `review`: their recorded outputs by decision; and for_each jobs over them:
   * `waitingOnReview`, their tasks held until outputs are reviewed. Absent without such jobs.
   */
  readonly review?: Readonly<Record<string, { readonly awaiting: number; readonly approved: number; readonly rejected: number } | { readonly waitingOnReview: number }>>;
  /** Of `=`: tasks whose results are reused from a paid task elsewhere (`reusable`); absent when none. */
  readonly reused?: number;
  /**
   * New takes after rejections in review (`retake_rejected`, src/review/retake.ts), to
   * create or recorded: tasks of the manifest's jobs that are not in `manifest.tasks`, so
   * the run admits them beside those. Absent when none.
   */
  readonly retakes?: readonly PlannedTask[];
}

const IN_FLIGHT: ReadonlySet<TaskState> = new Set(["submitting", "submitted", "processing"]);
const DONE: ReadonlySet<TaskState> = new Set(["succeeded", "downloaded"]);

const emptyCounts = (): PlanCounts => ({ "+": 0, "=": 0, "~": 0, "-": 0, "…": 0, inFlight: 0 });

/**
 * The matrix positions (folders as the manifest names them) a recorded task can stand
 * for: its folder, and, when a run gave it a suffixed one because another task's files
 * were there (taskFiles.ts: `<folder>-<last 6 of the id>`; later attempts keep the
 * first attempt's), that folder without the suffix.
 */
export const slotDirs = (id: string, t: Pick<LockTask, "dir" | "attempt">): string[] => {
  const m = /^(.+)-([a-z2-7]{6})$/.exec(t.dir);
  return m && (m[2] === id.slice(-6) || t.attempt > 1) ? [t.dir, m[1]!] : [t.dir];
};

const outputCount = (t: LockTask): number => {
  let n = 0;
  for (const o of t.outputs) if (o.variant === "main" && (o.type === "image" || o.type === "video")) n++;
  return n;
};

/**
 * The files a `+`/`~` entry's task is expected to make, relative to the outputs folder,
 * in the folder and with the names the run will really use (taskFiles.ts). Computed when
 * shown, not for every entry of a large plan.
 */
export const entryFiles = (e: PlanEntry): string[] | undefined =>
  e.task && (e.mark === "+" || e.mark === "~") ? plannedFiles(e.task, e.placed ?? e.dir ?? e.task.dir) : undefined;

/** States of a task that was never created at the service: it cannot have replaced anything yet. */
const NOT_CREATED: ReadonlySet<TaskState> = new Set(["planned", "rejected"]);

/**
 * What the lockfile should record of replacements: `[old id, the task that replaced it]`
 * for each superseded task whose replacement was created and whose record does not say
 * so yet. Pure; the run writes them (runLoadedManifest.ts).
 */
export const supersessions = (plan: PlanResult, lock: LockFile | undefined): [string, string][] => {
  const out: [string, string][] = [];
  if (!lock) return out;
  for (const e of plan.entries) {
    if (e.mark !== "-" || e.supersededBy === undefined) continue;
    const by = lock.tasks[e.supersededBy];
    if (!by || NOT_CREATED.has(by.state)) continue;
    if (lock.tasks[e.id]?.superseded_by !== e.supersededBy) out.push([e.id, e.supersededBy]);
  }
  return out;
};

export interface DiffOptions {
  /** `--failed`: a task whose attempts all failed gets one new attempt (`+`) all the same. */
  readonly renewFailed?: (task: PlannedTask) => boolean;
  /** Review decisions (src/review/): a `review` job's outputs reach its for_each jobs only once approved. */
  readonly reviews?: DecisionIndex;
  /**
   * Reuse across manifests (src/plan/reuse.ts `reuseFor`): asked for a task with no record
   * here; a paid result of the same request makes it `=` (reused, with the answer's note),
   * an answer `why` is said on the `+`. Absent: nothing is reused.
   */
  readonly reusable?: (task: PlannedTask) => { readonly reuse: { readonly note: string; readonly record: LockTask } } | { readonly why: string } | undefined;
  /**
   * The run's own rules of the walk, for the plan a run executes (src/run/prepareRun.ts): a
   * fresh service, `--recreate-lost` with the lost results counted, a job's retry_failed.
   */
  readonly walkRules?: Pick<AttemptRules, "retryFailedOf" | "recreateLost" | "lostCount" | "freshService">;
}

/** `+` for a task to create in `dir`. */
const create = (task: PlannedTask, dir: string): PlanEntry =>
  task.estimate
    ? { mark: "+", id: task.id, job: task.job, vars: task.vars, dir, task, estimate: task.estimate }
    : { mark: "+", id: task.id, job: task.job, vars: task.vars, dir, task };

/**
 * Reuse (issue 31): a task with no record here whose request was paid for elsewhere is `=`,
 * its results taken from there (and, for a job others feed on, its outputs counted as the
 * source's, so downstream tasks are expanded from them); otherwise `+`, with the reason
 * reuse was refused as its note.
 */
const reuseOf = (
  reusable: DiffOptions["reusable"],
  feeding: ReadonlySet<string>,
  finished: Map<string, [string, LockTask]>,
  outputsOf: Map<string, number>,
) => {
  let count = 0;
  const entry = (task: PlannedTask, dir: string): PlanEntry => {
    const answer = reusable?.(task);
    if (answer === undefined) return create(task, dir);
    if ("why" in answer) return { ...create(task, dir), note: answer.why };
    count++;
    if (feeding.has(task.job)) {
      finished.set(task.id, [task.id, answer.reuse.record]);
      outputsOf.set(task.id, outputCount(answer.reuse.record));
    }
    return { mark: "=", id: task.id, job: task.job, vars: task.vars, dir, state: "downloaded", reused: true, note: answer.reuse.note };
  };
  return { entry, count: () => count };
};

const slotKey = (job: string, dir: string) => `${job}\u0000${dir}`;

/**
 * Later attempts have ids of their own: found by matrix position (`retries`; they are
 * few), and `job\0attempt` of each (`laterAttempts`): the walk works out a next attempt's
 * id only when one may be recorded.
 */
const laterAttemptsOf = (lockTasks: Readonly<Record<string, LockTask>>) => {
  const retries = new Map<string, [string, LockTask][]>();
  const laterAttempts = new Set<string>();
  for (const id in lockTasks) {
    const t = lockTasks[id]!;
    if (t.attempt <= 1) continue;
    laterAttempts.add(`${t.job}\u0000${t.attempt}`);
    const key = slotKey(t.job, t.dir);
    const list = retries.get(key);
    if (list) list.push([id, t]);
    else retries.set(key, [[id, t]]);
  }
  return { retries, laterAttempts };
};

/**
 * The first pass: every manifest task against its records (the attempt walk), with what
 * the passes after it share: the entries so far, the records accounted for, the finished
 * attempts and output counts of jobs others feed on, and the tasks still unmatched.
 */
const classifierOf = (manifest: LoadedManifest, lock: LockFile | undefined, options: DiffOptions) => {
  const entries: PlanEntry[] = [];
  const lockTasks = lock?.tasks ?? {};
  const { retries, laterAttempts } = laterAttemptsOf(lockTasks);
  // Records a manifest task accounts for: its own (counted, not kept: a rerun of 100,000
  // recorded tasks would fill a set of them for nothing) and later attempts found by
  // position (kept). The set of all is made only when some record may be unaccounted for.
  const accounted = new Set<string>();
  const counts = { own: 0 };
  let everyAccounted: Set<string> | undefined;
  const accountedAll = (): Set<string> => {
    if (everyAccounted === undefined) {
      everyAccounted = new Set(accounted);
      for (const list of tasksOf.values()) for (const t of list) if (lockTasks[t.id] !== undefined) everyAccounted.add(t.id);
    }
    return everyAccounted;
  };
  // Only tasks of a job another job feeds on, or that is reviewed, need their finished attempt and output count kept.
  const feeding = new Set<string>();
  for (const j of manifest.jobs) {
    if (j.upstream) feeding.add(j.upstream.job);
    if (j.review) feeding.add(j.id);
  }
  /** Manifest id -> outputs of its latest finished attempt (for the downstream estimate). */
  const outputsOf = new Map<string, number>();
  /** Manifest id -> its latest finished attempt in the lockfile (the source of downstream items). */
  const finished = new Map<string, [string, LockTask]>();
  /** Tasks with no attempt in the lockfile: `+` or `~`, decided once every match is known. */
  const unmatched: { task: PlannedTask; at: number }[] = [];
  const lockedCount = Object.keys(lockTasks).length;
  const anyLocked = lockedCount > 0;
  // Made when a task without a record of its own needs it: a rerun where every task has one makes none.
  let holdersMade: Map<string, string> | undefined;
  const holders = (): Map<string, string> => (holdersMade ??= folderHolders(Object.entries(lockTasks)));
  /** Where the task's results really go (the run's rule): its own record's folder, or a folder of its own. */
  const folderOf = (task: PlannedTask): string => {
    const recorded = lockTasks[task.id]?.dir;
    return recorded !== undefined ? recorded : resultFolder(task, undefined, holders());
  };

  /** `{ placed }` when the run's own rule puts the task's files elsewhere than its default folder. */
  const placedOf = (task: PlannedTask): { placed?: string } => {
    if (!anyLocked) return {};
    const placed = folderOf(task);
    return placed === task.dir ? {} : { placed };
  };

  /** The attempt walk (attempts.ts) over the lockfile's records: the engine's own, so a run does what its plan said. */
  const records: AttemptRecords = { get: (id) => lockTasks[id], hasAttempt: (job, attempt) => laterAttempts.has(`${job}\u0000${attempt}`) };
  const rules: AttemptRules = {
    withAttempt: (task, attempt) => manifest.withAttempt(task, attempt),
    ...(options.renewFailed ? { renew: options.renewFailed } : {}),
    ...options.walkRules,
  };

  const reuse = reuseOf(options.reusable, feeding, finished, outputsOf);

  /** `+` for the next attempt of a recorded task (a new id): a retry, a --failed renewal, or a task abandoned at another service. */
  const pushNextAttempt = (task: PlannedTask, folder: string, walk: AttemptWalk): void => {
    const next = walk.task;
    const last = lockTasks[walk.walked[walk.walked.length - 1]!]!;
    const note =
      walk.why === "abandoned"
        ? `abandoned at ${walk.abandonedAt ?? last.abandoned?.service ?? "another service"}: new attempt ${next.attempt} here`
        : walk.why === "renew"
          ? `new attempt ${next.attempt} (--failed)`
          : `retry: attempt ${next.attempt} of ${attemptsAllowed(walk, task)}`;
    entries.push({
      mark: "+",
      id: next.id,
      job: task.job,
      vars: task.vars,
      dir: folder,
      state: last.state,
      attempt: next.attempt,
      task: next,
      ...(next.estimate ? { estimate: next.estimate } : {}),
      note,
      ...placedOf(task),
      ...(walk.pastFailed ? { pastFailed: true } : {}),
      walk,
    });
  };

  const classify = (task: PlannedTask): void => {
    if (!anyLocked) {
      // Nothing recorded at all: the common case of a first run.
      entries.push(reuse.entry(task, task.dir));
      return;
    }
    const direct = lockTasks[task.id];
    // Where its results really go (folderOf, with the record already at hand).
    const folder = direct !== undefined ? direct.dir : resultFolder(task, undefined, holders());
    const later = retries.size ? retries.get(slotKey(task.job, folder)) : undefined;
    // The records this task accounts for: its own, and its later attempts at its position.
    if (later === undefined) {
      // The usual case: the task's own record and no later attempt at its position.
      if (direct === undefined) {
        const entry = reuse.entry(task, folder);
        if (entry.mark === "+") unmatched.push({ task, at: entries.length });
        entries.push({ ...entry, walk: attempts(task, records, rules) });
        return;
      }
      counts.own++;
    } else {
      let matched = direct !== undefined;
      for (const [id, t] of later) {
        if (id !== task.id && manifest.withAttempt(task, t.attempt).requestHash === t.request_hash) {
          accounted.add(id);
          matched = true;
        }
      }
      if (!matched) {
        const entry = reuse.entry(task, folder);
        if (entry.mark === "+") unmatched.push({ task, at: entries.length });
        entries.push({ ...entry, walk: attempts(task, records, rules) });
        return;
      }
      if (direct) counts.own++;
    }
    const walk = attempts(task, records, rules);
    for (const id of walk.walked) if (id !== task.id) accounted.add(id);
    const latest = walk.record;
    const latestId = walk.task.id;
    if (latest === undefined) {
      // Past the recorded attempts: the next one is made (a retry, --failed, abandoned elsewhere).
      if (walk.walked.length === 0) entries.push({ ...create(task, folder), walk });
      else pushNextAttempt(task, folder, walk);
      // Made again (--recreate-lost): until it is, downstream work is counted from the attempt it replaces.
      const lost = walk.why === "recreate" ? walk.walked[walk.walked.length - 1]! : undefined;
      if (lost !== undefined && feeding.has(task.job)) {
        finished.set(task.id, [lost, lockTasks[lost]!]);
        outputsOf.set(task.id, outputCount(lockTasks[lost]!));
      }
      return;
    }
    const state = latest.state;
    const keep = feeding.has(task.job);
    if (DONE.has(state)) {
      // Succeeded but not downloaded yet: its outputs are not recorded, it still makes what it asked for.
      if (keep) {
        if (state === "downloaded" || outputCount(latest) > 0) outputsOf.set(task.id, outputCount(latest));
        finished.set(task.id, [latestId, latest]);
      }
      entries.push({ mark: "=", id: latestId, job: task.job, vars: task.vars, dir: folder, state, walk });
    } else if (IN_FLIGHT.has(state)) {
      entries.push({ mark: "=", id: latestId, job: task.job, vars: task.vars, dir: folder, state, inFlight: true, walk });
    } else if (state === "failed") {
      const allowed = attemptsAllowed(walk, task);
      const note = latest.attempt < allowed ? "content risk: not retried without retry_content_risk: true" : allowed > 1 ? "failed, no retries left" : "failed";
      // It makes nothing: no downstream task waits on it.
      if (keep) outputsOf.set(task.id, 0);
      entries.push({ mark: "=", id: latestId, job: task.job, vars: task.vars, dir: folder, state, note, walk });
    } else {
      // planned (never sent) or rejected (the service refused it): create it (again).
      const again = walk.task;
      entries.push({
        mark: "+",
        id: again.id,
        job: task.job,
        vars: task.vars,
        dir: folder,
        state,
        task: again,
        ...(again.estimate ? { estimate: again.estimate } : {}),
        ...placedOf(task),
        ...(walk.pastFailed ? { pastFailed: true } : {}),
        ...(state === "rejected" ? { note: "the service rejected it before" } : {}),
        walk,
      });
    }
  };

  const tasksOf = new Map<string, PlannedTask[]>();
  return {
    entries,
    lockTasks,
    slotKey,
    accounted,
    counts,
    accountedAll,
    everyAccountedSize: () => everyAccounted?.size,
    outputsOf,
    finished,
    unmatched,
    lockedCount,
    tasksOf,
    classify,
    /** Of the tasks classified so far, those reused from a paid task elsewhere. */
    reusedCount: reuse.count,
  };
};

type Classifier = ReturnType<typeof classifierOf>;

/**
 * Downstream jobs: their tasks exist for the upstream results the lockfile records.
 * Identity uses content hashes, not URLs, so they can be expanded here exactly; the rest
 * wait for their upstream tasks. A reviewed job's outputs go downstream once approved.
 */
const downstreamPass = (manifest: LoadedManifest, st: Classifier, reviews: DecisionIndex, retakes: readonly PlannedTask[]): PlanResult["review"] => {
  const { entries, classify, tasksOf, finished, outputsOf } = st;
  const reviewed = new Set(manifest.jobs.filter((j) => j.review).map((j) => j.id));
  const review: Record<string, { awaiting: number; approved: number; rejected: number } | { waitingOnReview: number }> = {};
  for (const id of reviewed) {
    // Every recorded output of a reviewed job, by decision (downstream or not).
    const c = { awaiting: 0, approved: 0, rejected: 0 };
    for (const up of tasksOf.get(id) ?? []) {
      const done = finished.get(up.id);
      if (!done) continue;
      const items = done[1].outputs
        .filter((o) => o.variant === "main" && (o.type === "image" || o.type === "video") && o.sha256)
        .map((o) => ({ job: id, task: done[0], index: o.index, type: o.type as "image", url: "", file: "", sha256: o.sha256!, vars: up.vars }));
      const g = gateItems(items, "outputs", reviews);
      c.awaiting += g.awaiting;
      c.approved += g.approved;
      c.rejected += g.rejected;
      // A rejected output is never used: no downstream task waits for it.
      if (g.rejected > 0) outputsOf.set(up.id, (outputsOf.get(up.id) ?? 0) - g.rejected);
    }
    review[id] = c;
  }
  for (const job of manifest.jobs) {
    if (!job.upstream) continue;
    let items: UpstreamItem[] = [];
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
          file: o.path ? itemFile(manifest.outputsDir, o.path, `https://upstream.invalid/${o.sha256}`) : "",
          sha256: o.sha256,
          vars: up.vars,
        });
      }
    }
    let onReview = 0;
    if (reviewed.has(job.upstream.job)) {
      const g = gateItems(items, job.upstream.mode, reviews);
      items = g.pass;
      onReview = g.held * manifest.downstreamPerItem(job.id);
      if (onReview > 0) review[job.id] = { waitingOnReview: onReview };
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
    const each = manifest.downstreamEstimate(job.id);
    if (onReview > 0) {
      entries.push({
        mark: "…",
        id: job.id,
        job: job.id,
        vars: {},
        count: onReview,
        note: `waiting on review of ${job.upstream.job} (omnibatch review)`,
        ...(each ? { estimate: { currency: each.currency, amount: formatAmount(times(amountOf(each.amount), onReview)) } } : {}),
      });
    }
    const waiting = Math.max(0, manifest.expectedDownstreamCount(job.id, outputsOf) + retakeDownstream(manifest, job, retakes, outputsOf) - made.length - onReview);
    if (waiting > 0) {
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
  return reviewed.size > 0 ? review : undefined;
};

/** `~`: a task without attempts whose matrix position holds other (older) tasks. */
const changedPass = (st: Classifier): void => {
  const { entries, lockTasks, slotKey, unmatched, accountedAll } = st;
  if (unmatched.length > 0) {
    const accounted = accountedAll();
    const leftover = new Map<string, string[]>();
    for (const id in lockTasks) {
      if (accounted.has(id)) continue;
      const t = lockTasks[id]!;
      // Already replaced by an earlier change: it stays `-`, superseded by what it records.
      if (t.pruned_at !== undefined || t.superseded_by !== undefined) continue;
      for (const dir of slotDirs(id, t)) {
        const key = slotKey(t.job, dir);
        const list = leftover.get(key);
        if (list) list.push(id);
        else leftover.set(key, [id]);
      }
    }
    const still: { task: PlannedTask; at: number }[] = [];
    for (const { task, at } of unmatched) {
      const older = [...new Set(leftover.get(slotKey(task.job, task.dir)) ?? [])].filter((id) => !accounted.has(id));
      if (older.length === 0) {
        if (entries[at]!.note === undefined) still.push({ task, at });
        continue;
      }
      for (const id of older) accounted.add(id);
      entries[at] = { ...entries[at]!, mark: "~", replaces: older.sort() };
    }
    sameRequestNotes(st, still);
  }
};

/**
 * `+` tasks at no recorded position whose request a record left over has (a renamed job,
 * with reuse off: otherwise reuse takes it): the note names that record and what changed
 * (changeReason.ts). Attempt 1 records only; the record is not accounted for (it stays `-`).
 */
const sameRequestNotes = (st: Classifier, still: readonly { task: PlannedTask; at: number }[]): void => {
  if (still.length === 0) return;
  const { entries, lockTasks } = st;
  const accounted = st.accountedAll();
  const byHash = new Map<string, string>();
  for (const id in lockTasks) {
    const t = lockTasks[id]!;
    if (t.attempt !== 1 || accounted.has(id) || t.pruned_at !== undefined || t.superseded_by !== undefined) continue;
    if (!byHash.has(t.request_hash)) byHash.set(t.request_hash, id);
  }
  if (byHash.size === 0) return;
  for (const { task, at } of still) {
    const id = byHash.get(task.requestHash);
    if (id === undefined || id === task.id) continue;
    // Its last line says the request is the same, which the note says first.
    const what = changeReason({ task, before: { id, record: lockTasks[id]! }, fields: [] }).slice(0, -1);
    if (what.length > 0) entries[at] = { ...entries[at]!, note: `same request as ${id}: ${what.join("; ")}` };
  }
};

/**
 * `-`: superseded when the manifest's task at its position is another one, else orphaned.
 * (Every record accounted for by the manifest's tasks: none is, and none is looked at.)
 */
const orphanPass = (st: Classifier): void => {
  const { entries, lockTasks, slotKey, accounted, counts, accountedAll, lockedCount } = st;
  let current: Map<string, string> | undefined;
  const candidates = (st.everyAccountedSize() ?? accounted.size + counts.own) < lockedCount ? Object.keys(lockTasks) : [];
  const all = candidates.length > 0 ? accountedAll() : accounted;
  for (const id of candidates) {
    if (all.has(id)) continue;
    const t = lockTasks[id]!;
    // Pruned: its files are gone and it is out of the reports; only its spend remains.
    if (t.pruned_at !== undefined) continue;
    if (!current) {
      current = new Map();
      for (const e of entries) {
        if (e.mark === "-" || e.mark === "…" || e.dir === undefined) continue;
        // By its default folder (the position in the matrix), also when it was placed in a folder of its own.
        current.set(slotKey(e.job, e.task?.dir ?? defaultFolderOf(e.dir, e.id)), e.id);
        current.set(slotKey(e.job, e.dir), e.id);
      }
    }
    const by = t.superseded_by ?? slotDirs(id, t).map((d) => current!.get(slotKey(t.job, d))).find((c) => c !== undefined && c !== id);
    entries.push({ mark: "-", id, job: t.job, vars: t.vars, dir: t.dir, state: t.state, ...(by !== undefined ? { supersededBy: by } : {}) });
  }
};

export const diffPlan = (manifest: LoadedManifest, lock: LockFile | undefined, options: DiffOptions = {}): PlanResult => {
  const reviews: DecisionIndex = options.reviews ?? new Map();
  const st = classifierOf(manifest, lock, options);
  const { entries, classify, tasksOf } = st;
  for (const task of manifest.tasks) {
    classify(task);
    const list = tasksOf.get(task.job);
    if (list) list.push(task);
    else tasksOf.set(task.job, [task]);
  }

  const retakes = retakePass(manifest, st, reviews);
  const review = downstreamPass(manifest, st, reviews, retakes);
  changedPass(st);
  orphanPass(st);
  const { jobs, total, estimate, waitingEstimate } = countEntries(entries, manifest.jobs.map((j) => j.id));
  return {
    manifest: manifest.file,
    lockfile: manifest.lockfilePath,
    lockfileFound: lock !== undefined,
    entries,
    jobs,
    total,
    estimate,
    waitingEstimate,
    ...(review ? { review } : {}),
    ...(st.reusedCount() > 0 ? { reused: st.reusedCount() } : {}),
    ...(retakes.length > 0 ? { retakes } : {}),
  };
};

/** Counts per job and in total, and the estimates, of these entries (as diffPlan makes them). */
export const countEntries = (
  entries: readonly PlanEntry[],
  jobIds: readonly string[],
): Pick<PlanResult, "jobs" | "total" | "estimate" | "waitingEstimate"> => {
  const jobs: Record<string, PlanCounts> = {};
  for (const j of jobIds) jobs[j] = emptyCounts();
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
  return { jobs, total, estimate, waitingEstimate };
};

/**
 * The plan's walk of each of `tasks` (the manifest's tasks, in its order, as diffPlan
 * classified them: their entries come first, in that order), for the engine to admit as
 * they are; undefined when the entries do not line up with the tasks (the engine then
 * walks each task itself, by the same walk).
 */
export const walksOf = (plan: Pick<PlanResult, "entries">, tasks: readonly Pick<PlannedTask, "id">[]): AttemptWalk[] | undefined => {
  const out: AttemptWalk[] = [];
  for (const e of plan.entries) {
    if (out.length === tasks.length) break;
    if (e.mark !== "+" && e.mark !== "=" && e.mark !== "~") continue;
    const walk = e.walk ?? (e.task ? newWalk(e.task) : undefined);
    if (walk === undefined || walk.planned.upstream !== undefined) continue;
    if (walk.planned.id !== tasks[out.length]!.id) return undefined;
    out.push(walk);
  }
  return out.length === tasks.length ? out : undefined;
};
