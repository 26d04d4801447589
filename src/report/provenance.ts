// What made each result: the request as sent (prompt after label rewriting, settings,
// options; inputs as the manifest named them with their content hash, never the base64
// body), where in the manifest it came from, and the upstream file it was made from and
// the downstream files made from it. Pure: from the lockfile and, when the caller has
// it, the compiled manifest's planned tasks. Shared by results.jsonl, task.json,
// metadata.jsonl and report.html.

import type { BillingEntry } from "../protocol/wire.js";
import type { PlannedTask, SourcePos } from "../manifest/PlannedTask.js";
import type { LockFile, LockOutput } from "../state/LockFile.js";
import { Decimal } from "./Decimal.js";

export interface InputView {
  readonly field: string;
  readonly role: string;
  readonly name?: string;
  /** A local file, relative to the manifest; or, for an upstream result, relative to the outputs folder. */
  readonly path?: string;
  /** An input given by URL (an upstream result is shown by its file instead). */
  readonly url?: string;
  readonly sha256?: string;
  readonly element_id?: string;
  /** The upstream task and output this input is, when it is one. */
  readonly upstream?: { readonly task: string; readonly output: number };
  /** Where the input is declared: `file:line:col`. */
  readonly source?: string;
}

export interface RequestView {
  readonly prompt: string;
  readonly settings: Record<string, unknown>;
  readonly options: Record<string, unknown>;
  readonly inputs: readonly InputView[];
}

/** A file of another task this one is linked to (upstream or downstream). */
export interface LinkedFile {
  readonly task: string;
  readonly job: string;
  readonly output: number;
  readonly path?: string;
  readonly sha256?: string;
}

export const position = (pos: SourcePos): string => `${pos.file}:${pos.line}:${pos.col}`;

/** Where each downloaded file is, by content hash: upstream results named by URL are shown as files. */
export type FilesByHash = Pick<ReadonlyMap<string, { readonly task: string; readonly output: LockOutput }>, "get">;

export const filesByHash = (lock: LockFile): Map<string, { task: string; output: LockOutput }> => {
  const map = new Map<string, { task: string; output: LockOutput }>();
  // for...in, not Object.entries: a lockfile whose records are decoded as read (a run's end) holds one at a time.
  for (const id in lock.tasks) {
    for (const output of lock.tasks[id]!.outputs) if (output.sha256 && output.path && !map.has(output.sha256)) map.set(output.sha256, { task: id, output });
  }
  return map;
};

/**
 * `filesByHash`, made at its first look-up: only a request with an input given by URL
 * looks one up, and the map holds every downloaded output (200,000 of them, decoded, at
 * a large run's end).
 */
export const filesByHashWhenAsked = (lock: LockFile): FilesByHash => {
  let made: FilesByHash | undefined;
  return { get: (sha256) => (made ??= filesByHash(lock)).get(sha256) };
};

const IMAGE_NOT_SETTINGS = new Set(["prompt", "image_list", "element_list", "external_task_id", "watermark_info", "callback_url"]);

/** The request of a planned task, for people and reports: no base64, no callback URL. */
export const requestView = (task: PlannedTask, files?: FilesByHash): RequestView => {
  const inputs: InputView[] = (task.inputs ?? []).map((input) => {
    const isUrl = input.src !== undefined && /^https?:\/\//i.test(input.src);
    const upstream = isUrl && input.sha256 ? files?.get(input.sha256) : undefined;
    return {
      field: input.field,
      role: input.role,
      ...(input.name !== undefined ? { name: input.name } : {}),
      // An upstream result's URL is signed and expires: its file says more, for longer.
      ...(upstream ? { path: upstream.output.path } : isUrl && input.sha256 === undefined ? { url: input.src } : !isUrl && input.src !== undefined ? { path: input.src } : {}),
      ...(input.sha256 !== undefined ? { sha256: input.sha256 } : {}),
      ...(input.element_id !== undefined ? { element_id: input.element_id } : {}),
      ...(upstream ? { upstream: { task: upstream.task, output: upstream.output.index } } : {}),
      source: position(input.source),
    };
  });
  if (task.kind === "video") {
    const r = task.request;
    const prompt = r.contents.find((c) => c.type === "prompt");
    const { callback_url: _drop, ...options } = (r.options ?? {}) as Record<string, unknown>;
    return { prompt: prompt && "text" in prompt ? String(prompt.text ?? "") : "", settings: { ...r.settings }, options, inputs };
  }
  const r = task.request as unknown as Record<string, unknown>;
  const settings: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(r)) if (!IMAGE_NOT_SETTINGS.has(k)) settings[k] = v;
  const options: Record<string, unknown> = { external_task_id: r.external_task_id };
  if (r.watermark_info !== undefined) options.watermark_info = r.watermark_info;
  return { prompt: typeof r.prompt === "string" ? r.prompt : "", settings, options, inputs };
};

/** The file of `task` a downstream task was made from (`output: -1`: all its files). */
export const upstreamFiles = (lock: LockFile, up: { job: string; task: string; output: number }): LinkedFile[] => {
  const task = lock.tasks[up.task];
  const outs = (task?.outputs ?? []).filter((o) => o.variant === "main" && (up.output < 0 || o.index === up.output));
  if (outs.length === 0) return [{ task: up.task, job: up.job, output: up.output }];
  return outs.map((o) => ({ task: up.task, job: up.job, output: o.index, ...(o.path ? { path: o.path } : {}), ...(o.sha256 ? { sha256: o.sha256 } : {}) }));
};

/** Upstream task id -> the downstream tasks made from it and their main files. */
export const downstreamIndex = (lock: LockFile): Map<string, LinkedFile[]> => {
  const map = new Map<string, LinkedFile[]>();
  for (const id of Object.keys(lock.tasks).sort()) {
    const t = lock.tasks[id]!;
    if (!t.upstream) continue;
    const list = map.get(t.upstream.task) ?? [];
    const mains = t.outputs.filter((o) => o.variant === "main");
    if (mains.length === 0) list.push({ task: id, job: t.job, output: -1 });
    for (const o of mains) list.push({ task: id, job: t.job, output: o.index, ...(o.path ? { path: o.path } : {}), ...(o.sha256 ? { sha256: o.sha256 } : {}) });
    map.set(t.upstream.task, list);
  }
  return map;
};

/** What one task was charged, per currency ("0.35 USD", "2 image units"), exact. */
export const costLabel = (billing: readonly BillingEntry[]): string => {
  const sums = new Map<string, Decimal>();
  for (const e of billing) {
    const amount = Decimal.parse(e.amount);
    if (!amount) continue;
    const key =
      e.charge_type === "cash"
        ? `${e.currency ?? "?"}${e.cash_type === "test_balance" ? " (test quota)" : ""}`
        : `${e.package_type ?? "?"} units`;
    sums.set(key, (sums.get(key) ?? Decimal.zero).plus(amount));
  }
  return [...sums].map(([k, v]) => `${v.toString()} ${k}`).join(" + ");
};

/** Planned tasks by id; later lists win (downstream tasks expanded during a run). */
export const plannedById = (...lists: ReadonlyArray<readonly PlannedTask[] | undefined>): Map<string, PlannedTask> => {
  const map = new Map<string, PlannedTask>();
  for (const list of lists) for (const t of list ?? []) map.set(t.id, t);
  return map;
};
