// billing.csv: one row per billing entry of each task (a task without entries gets one
// row with empty charge columns, so every task appears), RFC 4180 quoting.

import type { LockFile } from "../state/LockFile.js";
import { neutralise } from "../api/neutralise.js";

const COLUMNS = [
  "external_task_id",
  "job",
  "state",
  "task_id",
  "charge_type",
  "cash_type",
  "currency",
  "package_type",
  "amount",
  "list_price",
  "vars",
] as const;

/** A CSV field: quoted when it holds a comma, quote or line break; quotes doubled. */
export const csvField = (value: string | number | undefined): string => {
  // Control characters and escapes from the service or data files are made inert.
  // Line breaks are kept (quoted, RFC 4180).
  const text = value === undefined ? "" : String(value).split("\n").map(neutralise).join("\n");
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
};

/** billing.csv's rows (each ending in CRLF, the header first), made one at a time as they are asked for. */
export function* billingCsvRows(lock: LockFile): Generator<string, void, undefined> {
  yield `${COLUMNS.join(",")}\r\n`;
  for (const id of Object.keys(lock.tasks).sort()) {
    const task = lock.tasks[id]!;
    const base = [id, task.job, task.state, task.task_id];
    const vars = JSON.stringify(task.vars);
    const entries = task.billing.length > 0 ? task.billing : [undefined];
    for (const e of entries) {
      yield `${[...base, e?.charge_type, e?.cash_type, e?.currency, e?.package_type, e?.amount, e?.list_price, vars].map(csvField).join(",")}\r\n`;
    }
  }
}

/** The whole of billing.csv as one string (writeReports writes it from `billingCsvRows` in chunks). */
export const formatBillingCsv = (lock: LockFile): string => [...billingCsvRows(lock)].join("");
