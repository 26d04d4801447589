// What changed between the request a task was sent with and the request of the task that
// replaces it (`~` in plan), field by field, as a person reads it:
// `prompt: "…red mug…" → "…blue mug…"`, `settings.duration: 5 → 10`, an input's file or
// content. The old request comes from the record the reports keep (results.jsonl); the
// external id and callback are not part of what a person changed. Pure.

import type { PlanResult } from "../plan/diffPlan.js";
import type { LockFile } from "../state/LockFile.js";
import type { PlannedTask } from "../manifest/PlannedTask.js";
import { changeReason } from "../plan/changeReason.js";
import { filesByHash, type InputView, type RequestView, requestView } from "./provenance.js";

/** Around the first difference of two texts: at most `width` characters of each, ellipsis where cut. */
export const excerpts = (a: string, b: string, width = 60): [string, string] => {
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  const from = Math.max(0, start - Math.floor(width / 3));
  const cut = (s: string) => `${from > 0 ? "…" : ""}${s.slice(from, from + width)}${s.length > from + width ? "…" : ""}`;
  return [cut(a), cut(b)];
};

const show = (v: unknown): string => (v === undefined ? "(none)" : typeof v === "string" ? JSON.stringify(v) : JSON.stringify(v));

/** Leaves of an object as dotted paths (`camera_control.config.zoom`). */
const leaves = (value: unknown, prefix: string, into: Map<string, unknown>): Map<string, unknown> => {
  if (value !== null && typeof value === "object" && !Array.isArray(value)) {
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) leaves(v, prefix ? `${prefix}.${k}` : k, into);
  } else if (prefix) into.set(prefix, value);
  return into;
};

const NOT_CHOSEN = new Set(["options.external_task_id", "options.callback_url"]);

const inputLabel = (i: InputView): string => `${i.field}${i.name ? ` @${i.name}` : ` (${i.role})`}`;
const inputWhat = (i: InputView | undefined): string =>
  i === undefined ? "(none)" : i.path ?? i.url ?? (i.element_id !== undefined ? `element ${i.element_id}` : "(inline)");

export const requestChanges = (before: RequestView, after: RequestView): string[] => {
  const out: string[] = [];
  if (before.prompt !== after.prompt) {
    const [a, b] = excerpts(before.prompt, after.prompt);
    out.push(`prompt: ${JSON.stringify(a)} → ${JSON.stringify(b)}`);
  }
  for (const part of ["settings", "options"] as const) {
    const old = leaves(before[part], part, new Map());
    const now = leaves(after[part], part, new Map());
    for (const key of [...new Set([...old.keys(), ...now.keys()])].sort()) {
      if (NOT_CHOSEN.has(key)) continue;
      if (JSON.stringify(old.get(key)) !== JSON.stringify(now.get(key))) out.push(`${key}: ${show(old.get(key))} → ${show(now.get(key))}`);
    }
  }
  const oldInputs = new Map(before.inputs.map((i) => [i.field, i] as const));
  const newInputs = new Map(after.inputs.map((i) => [i.field, i] as const));
  for (const field of [...new Set([...oldInputs.keys(), ...newInputs.keys()])]) {
    const a = oldInputs.get(field);
    const b = newInputs.get(field);
    const label = inputLabel((b ?? a)!);
    if (inputWhat(a) !== inputWhat(b)) out.push(`${label}: ${inputWhat(a)} → ${inputWhat(b)}`);
    else if (a?.sha256 !== b?.sha256) out.push(`${label}: ${inputWhat(b)} changed (sha256 ${a?.sha256?.slice(0, 12) ?? "-"} → ${b?.sha256?.slice(0, 12) ?? "-"})`);
  }
  return out;
};

/** The recorded requests of a results.jsonl text, by task id (lines without one are skipped; a damaged line too). */
export const recordedRequests = (text: string): Map<string, RequestView> => {
  const out = new Map<string, RequestView>();
  for (const line of text.split("\n")) {
    if (!line.trim()) continue;
    try {
      const r = JSON.parse(line) as { id?: unknown; request?: RequestView };
      if (typeof r.id === "string" && r.request && typeof r.request.prompt === "string") out.set(r.id, r.request);
    } catch {
      // A damaged line says nothing about its request.
    }
  }
  return out;
};

/**
 * For each changed task (`~`) of a plan: why it is a new task, in words (changeReason.ts:
 * the manifest's name, the job's id, the take, the request's fields from the recorded
 * request of the task it replaces, an input's content). `hashAt`: a task's request hash
 * at another attempt (the manifest's `withAttempt`), for a replaced record of a later attempt.
 */
export const planChanges = (
  plan: PlanResult,
  lock: LockFile | undefined,
  resultsJsonl: string,
  hashAt?: (task: PlannedTask, attempt: number) => string,
): Map<string, readonly string[]> => {
  const out = new Map<string, readonly string[]>();
  const changed = plan.entries.filter((e) => e.mark === "~" && e.task && e.replaces?.length);
  if (changed.length === 0) return out;
  const recorded = recordedRequests(resultsJsonl);
  const files = lock ? filesByHash(lock) : undefined;
  for (const e of changed) {
    const task = e.task!;
    // The replaced task whose request was recorded, else the first one the lockfile has.
    const id = e.replaces!.find((r) => recorded.has(r) && lock?.tasks[r]) ?? e.replaces!.find((r) => lock?.tasks[r]);
    const record = id === undefined ? undefined : lock!.tasks[id]!;
    const old = id === undefined ? undefined : recorded.get(id);
    const fields = old ? requestChanges(old, requestView(task, files)) : undefined;
    out.set(
      e.id,
      record === undefined
        ? [`what changed is not known: the lockfile has no record of ${e.replaces!.join(", ")}`]
        : changeReason({ task, before: { id: id!, record }, fields, ...(hashAt ? { hashAt: (a: number) => hashAt(task, a) } : {}) }),
    );
  }
  return out;
};
