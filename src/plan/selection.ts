// Runs of a chosen part (`run`/`plan` with --only, --where, --failed): which tasks a
// selection takes, which jobs it needs only as finished context, and what a plan looks
// like once cut down to it. Pure: the CLI parses the flags into a Selection, the engine
// asks `selectsTask` / `relevantJobs`, plan filters its entries with `selectPlan`.
// Tasks a selection does not take are never created, followed or dropped: the lockfile
// keeps them exactly as they were.

import * as BigDecimal from "effect/BigDecimal";
import { amountOf, formatAmount, times } from "../money/Money.js";
import { countEntries, type PlanEntry, type PlanResult } from "./diffPlan.js";
import type { AttemptWalk } from "./attempts.js";

export { countEntries };

/** One `--where key=value`: a dotted path into a task's matrix values. */
export interface WhereClause {
  /** As the user wrote it, e.g. `product.sku`. */
  readonly key: string;
  readonly path: readonly string[];
  readonly value: string;
}

export interface Selection {
  /** `--only`: these jobs' tasks; undefined = every job. */
  readonly only?: readonly string[];
  /** `--where`: every clause must hold (AND). */
  readonly where: readonly WhereClause[];
  /** `--failed`: only tasks whose latest attempt failed, each given one new attempt now. */
  readonly failed: boolean;
}

export interface SelectionJob {
  readonly id: string;
  readonly upstream?: { readonly job: string };
  /** The job's own matrix axes (for a for_each job, known before any of its tasks is). */
  readonly axes?: readonly string[];
}

export const noSelection: Selection = { where: [], failed: false };

export const isWholeRun = (s: Selection | undefined): boolean =>
  s === undefined || (s.only === undefined && s.where.length === 0 && !s.failed);

/** `key=value`, or why not. The value may contain `=`; the key is a dotted path. */
export const parseWhere = (text: string): WhereClause | string => {
  const at = text.indexOf("=");
  if (at <= 0) return `--where '${text}' must be key=value, e.g. --where style=studio or --where product.sku=A-1`;
  const key = text.slice(0, at).trim();
  const path = key.split(".");
  if (path.some((p) => p === "")) return `--where '${text}': '${key}' is not a key (dotted paths like product.sku are fine)`;
  return { key, path, value: text.slice(at + 1) };
};

/** `--only a,b --only c` -> [a, b, c] (in order, without repeats), or undefined when not given. */
export const parseOnly = (given: readonly string[] | undefined): string[] | undefined => {
  if (given === undefined || given.length === 0) return undefined;
  const jobs = given.flatMap((g) => g.split(",")).map((j) => j.trim()).filter((j) => j !== "");
  return [...new Set(jobs)];
};

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * The value at `path` in a task's vars. A downstream task's vars hold its upstream
 * task's under `item.vars`: a path not found in its own vars is looked up there (and
 * so on up the chain), so `product.sku` selects a clip made from an A-1 still.
 */
export const fieldOf = (vars: Readonly<Record<string, unknown>>, path: readonly string[]): { readonly found: boolean; readonly value?: unknown } => {
  for (let scope: unknown = vars, depth = 0; isRecord(scope) && depth < 16; depth++) {
    let v: unknown = scope;
    let ok = true;
    for (const p of path) {
      if (isRecord(v) && Object.prototype.hasOwnProperty.call(v, p)) v = v[p];
      else {
        ok = false;
        break;
      }
    }
    if (ok) return { found: true, value: v };
    const item = scope["item"];
    scope = isRecord(item) ? item["vars"] : undefined;
  }
  return { found: false };
};

const sameValue = (v: unknown, text: string): boolean =>
  (typeof v === "string" || typeof v === "number" || typeof v === "boolean" || typeof v === "bigint") && String(v) === text;

/** Every clause holds for these vars (a missing field does not hold). */
export const whereMatches = (vars: Readonly<Record<string, unknown>>, where: readonly WhereClause[]): boolean =>
  where.every((w) => {
    const f = fieldOf(vars, w.path);
    return f.found && sameValue(f.value, w.value);
  });

/** The jobs whose tasks the selection takes. */
export const selectedJobs = (s: Selection, jobs: readonly SelectionJob[]): ReadonlySet<string> =>
  new Set(s.only ?? jobs.map((j) => j.id));

/**
 * The selected jobs and every job upstream of one: upstream tasks that are done enter a
 * run as context (their results feed the selected tasks); nothing else of them runs.
 */
export const relevantJobs = (s: Selection, jobs: readonly SelectionJob[]): ReadonlySet<string> => {
  const byId = new Map(jobs.map((j) => [j.id, j]));
  const out = new Set<string>();
  for (const id of selectedJobs(s, jobs)) {
    for (let j = byId.get(id); j && !out.has(j.id); j = j.upstream ? byId.get(j.upstream.job) : undefined) out.add(j.id);
  }
  return out;
};

/** Job and matrix values (not the --failed part, which depends on the lockfile). */
export const selectsTask = (s: Selection, task: { readonly job: string; readonly vars: Readonly<Record<string, unknown>> }): boolean =>
  (s.only === undefined || s.only.includes(task.job)) && whereMatches(task.vars, s.where);

const MAX_KEY_DEPTH = 4;

/** Dotted keys of these vars (leaves with a plain value), e.g. `style`, `product.sku`; `item` is left out. */
export const keysOf = (vars: Readonly<Record<string, unknown>>, into: Set<string> = new Set()): Set<string> => {
  const walk = (v: unknown, prefix: string, depth: number) => {
    if (isRecord(v) && depth < MAX_KEY_DEPTH) {
      for (const [k, sub] of Object.entries(v)) walk(sub, prefix ? `${prefix}.${k}` : k, depth + 1);
    } else if (prefix) into.add(prefix);
  };
  for (const [k, v] of Object.entries(vars)) if (k !== "item") walk(v, k, 1);
  return into;
};

/**
 * Problems with the selection against the manifest: unknown jobs, and `--where` keys that
 * no task has (naming the keys there are). `knownKeys`: the dotted keys of the tasks
 * known now (keysOf over them). A key under one of a for_each job's own axes is accepted
 * as well, since its tasks may not exist yet.
 */
export const checkSelection = (s: Selection, jobs: readonly SelectionJob[], knownKeys: ReadonlySet<string>): string[] => {
  const problems: string[] = [];
  const ids = jobs.map((j) => j.id);
  for (const j of s.only ?? []) {
    if (!ids.includes(j)) problems.push(`--only: no job '${j}' in the manifest (jobs: ${ids.join(", ")})`);
  }
  // A for_each job's own axes: its tasks may not exist yet, so their keys are not known.
  const laterAxes = new Set(jobs.filter((j) => j.upstream).flatMap((j) => j.axes ?? []));
  for (const w of s.where) {
    const known = knownKeys.has(w.key) || laterAxes.has(w.path[0]!) || (w.path[0] === "item" && jobs.some((j) => j.upstream));
    if (!known) {
      const list = [...new Set([...knownKeys, ...laterAxes])].sort();
      const fields = [...knownKeys].filter((k) => k.startsWith(`${w.key}.`));
      problems.push(
        fields.length
          ? `--where: '${w.key}' is a data row, not a value: use one of its fields (${fields.sort().join(", ")})`
          : `--where: no task has the key '${w.key}' (keys: ${list.length ? list.join(", ") : "none, the manifest has no matrix"})`,
      );
    }
  }
  return problems;
};

/** The flags that make this selection, e.g. `--only clips --where style=studio --failed`. */
export const describeSelection = (s: Selection): string =>
  [
    ...(s.only ? [`--only ${s.only.join(",")}`] : []),
    ...s.where.map((w) => `--where ${w.key}=${w.value}`),
    ...(s.failed ? ["--failed"] : []),
  ].join(" ");


export interface SelectedPlan extends PlanResult {
  /** The selection it was cut down to. */
  readonly selection: Selection;
  /** Entries of the whole plan the selection leaves out (they stay as they are). */
  readonly notSelected: number;
  /** Why some selected work cannot happen in this run, in words (e.g. an upstream job not done). */
  readonly notes: readonly string[];
}

const DONE_STATES = new Set(["succeeded", "downloaded"]);

const isDone = (e: PlanEntry): boolean => e.mark === "=" && !e.inFlight && e.state !== undefined && DONE_STATES.has(e.state);

/** Upstream entries matching the --where clauses they have fields for (others are the downstream job's own). */
const matchesKnown = (e: PlanEntry, where: readonly WhereClause[]): boolean =>
  where.every((w) => !fieldOf(e.vars, w.path).found || whereMatches(e.vars, [w]));

/**
 * Waiting downstream work under --where: its share of the upstream tasks not done yet
 * that match (each is assumed to give as many tasks), said to be about that many.
 */
const narrowWaiting = (e: PlanEntry, entries: readonly PlanEntry[], where: readonly WhereClause[], up: string | undefined): PlanEntry => {
  const pending = entries.filter((u) => u.job === up && u.mark !== "-" && u.mark !== "…" && !isDone(u));
  const total = e.count ?? 0;
  if (pending.length === 0 || total === 0) return e;
  const share = pending.filter((u) => matchesKnown(u, where)).length / pending.length;
  const count = Math.round(total * share);
  const note = `${e.note ?? "waiting"}; about ${count} of ${total} match the --where values`;
  if (!e.estimate) return { ...e, count, note };
  const each = amountOf(e.estimate.amount);
  return { ...e, count, note, estimate: { currency: e.estimate.currency, amount: formatAmount(times(BigDecimal.unsafeDivide(each, BigDecimal.fromBigInt(BigInt(total))), count)) } };
};

/**
 * `diffPlan`'s `renewFailed` for a selection: with --failed, a selected task whose
 * attempts all failed gets one new attempt. The plan a selection is cut from is made with it.
 */
export const renewFailedOf = (s: Pick<Selection, "failed">, selects: (task: { readonly job: string; readonly vars: Readonly<Record<string, unknown>> }) => boolean) =>
  s.failed ? { renewFailed: selects } : {};

/**
 * Does the selection keep this entry of the whole plan (made with `renewFailedOf`)? Its
 * job is selected, its matrix values match every --where and, with --failed, it is a new
 * attempt of a failed task; waiting downstream work (`…`) only when its upstream job runs
 * too, never with --failed. What `plan` shows of a selection and what a run's start counts.
 */
export const keepsEntry = (s: Selection, jobs: readonly SelectionJob[]): ((e: PlanEntry) => boolean) => {
  const chosen = selectedJobs(s, jobs);
  const byId = new Map(jobs.map((j) => [j.id, j]));
  return (e) => {
    if (e.mark === "-") return false;
    if (e.mark === "…") {
      const up = byId.get(e.job)?.upstream?.job;
      return !s.failed && chosen.has(e.job) && up !== undefined && chosen.has(up);
    }
    // --failed: a new attempt of a task whose latest attempt failed, or one to create past a failed attempt (the run takes it: attempts.ts).
    return selectsTask(s, e) && (!s.failed || (e.mark === "+" && (e.state === "failed" || e.pastFailed === true)));
  };
};

/**
 * The plan cut down to a selection. A task is kept when its job is selected, its matrix
 * values match every --where and, with --failed, it is a new attempt of a failed task.
 * A selected job whose upstream job is not selected gets tasks only from the upstream
 * results that already exist: a note says how many that is. Waiting downstream work
 * (`…`) stays only when its upstream job runs too (and never with --failed).
 */
export const selectPlan = (plan: PlanResult, s: Selection, jobs: readonly SelectionJob[]): SelectedPlan => {
  const chosen = selectedJobs(s, jobs);
  const byId = new Map(jobs.map((j) => [j.id, j]));
  const kept: PlanEntry[] = [];
  let notSelected = 0;
  const keeps = keepsEntry(s, jobs);
  for (const e of plan.entries) {
    const keep = keeps(e);
    if (keep && e.mark === "…" && s.where.length) kept.push(narrowWaiting(e, plan.entries, s.where, byId.get(e.job)?.upstream?.job));
    else if (keep) kept.push(e);
    else notSelected += e.mark === "…" ? (e.count ?? 0) : 1;
  }
  const notes: string[] = [];
  if (s.only) {
    for (const id of s.only) {
      const up = byId.get(id)?.upstream?.job;
      if (up === undefined || chosen.has(up)) continue;
      // Upstream tasks matching the --where clauses they have fields for.
      const ofUp = plan.entries.filter((e) => e.job === up && e.mark !== "-" && (e.mark === "…" || matchesKnown(e, s.where)));
      const total = ofUp.reduce((n, e) => n + (e.mark === "…" ? (e.count ?? 0) : 1), 0);
      const done = ofUp.filter(isDone).length;
      if (done < total) {
        notes.push(`${id} needs ${up}: ${done} of ${total} ${up} task(s) are done; ${id} is made only from those; run ${up} first (--only ${up}) or drop --only`);
      }
    }
  }
  // Reused tasks (issue 31) counted again over the part: the whole plan's count is not the part's.
  const { reused: _whole, ...rest } = plan;
  const reused = plan.reused ? kept.filter((e) => e.reused).length : 0;
  return {
    ...rest,
    ...(reused > 0 ? { reused } : {}),
    entries: kept,
    ...countEntries(kept, Object.keys(plan.jobs)),
    selection: s,
    notSelected,
    notes,
  };
};

/** What a run of a chosen part does with the attempt a task's walk reached: follow it (and create it when it needs that), let it in as context, or leave it. */
export type Admission = "take" | "context" | "skip";

/**
 * The engine's admission of a walked task (at the start, from the plan's walks, and mid-run:
 * downstream tasks, from the same walk), under a selection (undefined: the whole run,
 * every task taken). Taken: the selection selects the task and, with --failed, the walk
 * passed a failed attempt to an attempt not downloaded (to create, or in flight from an
 * interrupted --failed run). Otherwise a task of a job the selection needs (relevantJobs)
 * whose attempt is downloaded enters as context, its files checked (its results feed the
 * selected tasks); anything else is left as the lockfile has it.
 */
export const admissionOf = (
  s: { readonly selects: (task: { readonly job: string; readonly vars: Readonly<Record<string, unknown>> }) => boolean; readonly failed: boolean; readonly relevantJobs: ReadonlySet<string> } | undefined,
  walk: Pick<AttemptWalk, "planned" | "task" | "record" | "pastFailed">,
): Admission => {
  if (s === undefined) return "take";
  const downloaded = walk.record?.state === "downloaded";
  if (s.selects(walk.planned) && (!s.failed || (walk.pastFailed && !downloaded))) return "take";
  return downloaded && s.relevantJobs.has(walk.task.job) ? "context" : "skip";
};
