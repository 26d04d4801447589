// The data report.html shows, as one plain object: per job its matrix axes, per task its
// state, cost, matrix values as labels, files, error and provenance, plus the run's
// totals against budget and estimate. Pure; the page (reportHtml.ts) embeds it as JSON.

import type { LockFile, LockTask } from "../state/LockFile.js";
import { chargesLabel } from "./billingMarkdown.js";
import { Decimal } from "./Decimal.js";
import { costLabel } from "./provenance.js";
import { type Provenance, resultLine } from "./resultsJsonl.js";
import type { LostResult } from "../outputs/scanResults.js";
import type { BillingSummary } from "./summarizeBilling.js";
import { recordedStanding, standingOf } from "./standing.js";

export interface ReportJob {
  readonly id: string;
  readonly kind: "video" | "image";
  /** Matrix axes in manifest order (a downstream job's include its upstream's, then `output`). */
  readonly axes: readonly string[];
  readonly tasks: number;
  readonly upstream?: string;
}

export interface ReportFile {
  readonly path: string;
  readonly type: string;
  readonly index: number;
}

export interface ReportTask {
  readonly id: string;
  readonly job: string;
  readonly state: LockTask["state"];
  /** current, superseded (replaced by a changed task) or orphaned (no longer in the manifest). */
  readonly standing: "current" | "superseded" | "orphaned";
  /** Axis -> the value as a short label. */
  readonly labels: Readonly<Record<string, string>>;
  readonly cost: string;
  /** Main image and video files, for the thumbnails. */
  readonly files: readonly ReportFile[];
  /** The task's record, as in results.jsonl (minus nothing a person would look for). */
  readonly record: Record<string, unknown>;
}

export interface ReportData {
  readonly name: string;
  readonly emulated: boolean;
  readonly generated_at: string;
  readonly spent: string;
  readonly budget?: string;
  readonly estimate?: string;
  /** States of the current and orphaned tasks (superseded ones are counted in `apart`). */
  readonly states: Readonly<Record<string, number>>;
  /** Superseded tasks (shown only when asked) and orphaned ones (shown, marked). */
  readonly apart: { readonly superseded: number; readonly orphaned: number };
  readonly jobs: readonly ReportJob[];
  readonly tasks: readonly ReportTask[];
  /** Results recorded but lost (not here, deleted at the service), named. */
  readonly lost?: readonly LostResult[];
}

/** A matrix value as a short label: a data row shows its id-like field and its name. */
export const valueLabel = (value: unknown): string => {
  if (value === null || value === undefined) return "";
  if (typeof value !== "object") return String(value);
  if (Array.isArray(value)) return value.map(valueLabel).join(", ");
  const row = value as Record<string, unknown>;
  const id = ["id", "sku", "slug", "key"].map((k) => row[k]).find((v) => v !== undefined && typeof v !== "object");
  const name = row.name !== undefined && typeof row.name !== "object" ? String(row.name) : undefined;
  if (id !== undefined) return name !== undefined && name !== String(id) ? `${String(id)} ${name}` : String(id);
  if (name !== undefined) return name;
  const first = Object.values(row).find((v) => v !== null && typeof v !== "object");
  return first === undefined ? JSON.stringify(value) : String(first);
};

/** Axis -> label of a task's values; a downstream task shows its upstream's values and which output. */
export const taskLabels = (vars: Readonly<Record<string, unknown>>): Record<string, string> => {
  const out: Record<string, string> = {};
  const item = vars.item as { vars?: Record<string, unknown>; index?: unknown } | undefined;
  if (item && typeof item === "object") {
    for (const [k, v] of Object.entries(item.vars ?? {})) out[k] = valueLabel(v);
    if (typeof item.index === "number") out.output = String(item.index + 1);
  }
  for (const [k, v] of Object.entries(vars)) if (k !== "item") out[k] = valueLabel(v);
  return out;
};

const TILE_TYPES = new Set(["image", "video"]);

export interface ReportDataInput {
  readonly lock: LockFile;
  readonly prov: Provenance;
  readonly summary: BillingSummary;
  readonly now: number;
  readonly emulated: boolean;
  readonly budget?: { readonly max: string; readonly currency: string };
  readonly lost?: readonly LostResult[];
}

/** The report's data but its tasks, the ids of its tasks in order, and each task's row made on demand. */
export interface ReportFrame {
  /** Every field of ReportData before `tasks`, in ReportData's order. */
  readonly head: Omit<ReportData, "tasks" | "lost">;
  readonly ids: readonly string[];
  readonly row: (id: string) => ReportTask;
  readonly lost?: readonly LostResult[];
}

const standingIn = (prov: Provenance, id: string, task: LockTask): ReportTask["standing"] =>
  (prov.standing ? standingOf(prov.standing, id) : recordedStanding(task) === "superseded" ? "superseded" : "current") as ReportTask["standing"];

/**
 * One pass over the tasks for what the page shows above them (jobs and their axes,
 * counts, the estimate), keeping no task's row: a writer makes each row as it writes it
 * (report.html of 200,000 tasks), `reportData` all of them.
 */
export const reportFrame = (input: ReportDataInput): ReportFrame => {
  const { lock, prov } = input;
  // Manifest order where the manifest is at hand (matrix order), otherwise by id.
  const order = new Map<string, number>();
  let n = 0;
  for (const id of prov.planned?.keys() ?? []) order.set(id, n++);
  const ids = Object.keys(lock.tasks)
    // Pruned tasks' records went with their files; their spend stays in `spent`.
    .filter((id) => lock.tasks[id]!.pruned_at === undefined)
    .sort((a, b) => (order.get(a) ?? Infinity) - (order.get(b) ?? Infinity) || (a < b ? -1 : a > b ? 1 : 0));
  const jobs = new Map<string, { id: string; kind: "video" | "image"; axes: string[]; tasks: number; upstream?: string }>();
  // Jobs with a task from an upstream output other than the first: their `output` axis says something.
  const manyOutputs = new Set<string>();
  const estimates = new Map<string, Decimal>();
  const states: Record<string, number> = {};
  const apart = { superseded: 0, orphaned: 0 };
  for (const id of ids) {
    const task = lock.tasks[id]!;
    const labels = taskLabels(task.vars);
    let job = jobs.get(task.job);
    if (!job) {
      job = { id: task.job, kind: task.kind, axes: [], tasks: 0, ...(task.upstream ? { upstream: task.upstream.job } : {}) };
      jobs.set(task.job, job);
    }
    const standing = standingIn(prov, id, task);
    if (standing !== "superseded") {
      job.tasks += 1;
      states[task.state] = (states[task.state] ?? 0) + 1;
    } else apart[standing] += 1;
    for (const axis of Object.keys(labels)) if (!job.axes.includes(axis)) job.axes.push(axis);
    if (labels.output !== undefined && labels.output !== "1") manyOutputs.add(task.job);
    // The record's estimate (resultLine): the planned task's, else what an earlier results.jsonl said.
    const planned = prov.planned?.get(id);
    const estimate = planned ? planned.estimate : prov.earlier?.get(id)?.estimate;
    if (estimate && standing !== "superseded") estimates.set(estimate.currency, (estimates.get(estimate.currency) ?? Decimal.zero).plus(Decimal.of(estimate.amount)));
  }
  // A downstream job whose upstream tasks each made one file: `output` says nothing there.
  for (const job of jobs.values()) {
    if (job.axes.includes("output") && !manyOutputs.has(job.id)) job.axes = job.axes.filter((a) => a !== "output");
  }
  const row = (id: string): ReportTask => {
    const task = lock.tasks[id]!;
    const { billing: _billing, times, nearing_deletion, ...record } = resultLine(id, task, input.now, prov);
    return {
      id,
      job: task.job,
      state: task.state,
      standing: standingIn(prov, id, task),
      labels: taskLabels(task.vars),
      cost: costLabel(task.billing),
      files: task.outputs
        .filter((o) => o.variant === "main" && TILE_TYPES.has(o.type) && o.path !== undefined)
        .map((o) => ({ path: o.path!, type: o.type, index: o.index })),
      record: {
        ...record,
        times: Object.fromEntries(Object.entries(times).filter(([, v]) => v !== undefined)),
        ...(nearing_deletion ? { nearing_deletion } : {}),
      },
    };
  };
  return {
    head: {
      name: lock.name,
      emulated: input.emulated,
      generated_at: new Date(input.now).toISOString(),
      spent: chargesLabel(input.summary),
      ...(input.budget ? { budget: `${input.budget.max} ${input.budget.currency}` } : {}),
      ...(estimates.size ? { estimate: [...estimates].map(([c, v]) => `${v.toString()} ${c}`).join(" + ") } : {}),
      states,
      apart,
      jobs: [...jobs.values()],
    },
    ids,
    row,
    ...(input.lost && input.lost.length > 0 ? { lost: input.lost } : {}),
  };
};

/** The report's data with every task's row (the review page; writeReports streams the rows instead). */
export const reportData = (input: ReportDataInput): ReportData => {
  const frame = reportFrame(input);
  return { ...frame.head, tasks: frame.ids.map(frame.row), ...(frame.lost ? { lost: frame.lost } : {}) };
};
