// Which recorded results `pull` copies: `--only JOB` and `--where key=value` (a matrix
// value, dotted for a row's column: `product.sku=A-1`). Pure, and kept apart so the
// selection module run and plan use can replace it.

import type { LockTask } from "../state/LockFile.js";

export interface WhereClause {
  readonly path: readonly string[];
  readonly value: string;
}

/** `key=value` clauses, or a message naming the one that is not. */
export const parseWhere = (clauses: readonly string[]): WhereClause[] | { readonly problem: string } => {
  const out: WhereClause[] = [];
  for (const clause of clauses) {
    const at = clause.indexOf("=");
    const key = at > 0 ? clause.slice(0, at).trim() : "";
    if (!key || key.split(".").some((s) => s === "")) return { problem: `--where '${clause}' must be key=value, e.g. style=studio or product.sku=A-1` };
    out.push({ path: key.split("."), value: clause.slice(at + 1).trim() });
  }
  return out;
};

const valueAt = (vars: unknown, path: readonly string[]): unknown => {
  let v = vars;
  for (const p of path) {
    if (v === null || typeof v !== "object") return undefined;
    v = (v as Record<string, unknown>)[p];
  }
  return v;
};

/** True when the task is of `only` (when given) and every clause matches its matrix values. */
export const selected = (task: Pick<LockTask, "job" | "vars">, only: readonly string[], where: readonly WhereClause[]): boolean =>
  (only.length === 0 || only.includes(task.job)) &&
  where.every((w) => {
    const v = valueAt(task.vars, w.path);
    return v !== undefined && v !== null && typeof v !== "object" && String(v) === w.value;
  });
