// billing.md (and the GitHub step summary): the billing summary as Markdown tables a
// person reads: totals per currency and cash type, units, per job, per state, failures,
// and results about to be deleted at the service.

import type { TaskState } from "../state/LockFile.js";
import type { BillingSummary, CashTotal, Charges, UnitTotal } from "./summarizeBilling.js";
import { Decimal } from "./Decimal.js";
import { neutralise } from "../api/neutralise.js";
import { markdownText } from "./markdownText.js";
import { isoTime } from "../protocol/UnixMs.js";

export interface DeletionWarning {
  readonly id: string;
  readonly job: string;
  /** Unix ms. */
  readonly deletesAt: number;
}

// Cells hold text from the service and from data files: shown, never obeyed (markdownText).
const cell = (text: string | number | undefined): string => (text === undefined ? "" : markdownText(text));

const row = (cells: readonly (string | number | undefined)[]): string => `| ${cells.map(cell).join(" | ")} |`;

const money = (amount: string): string => Decimal.of(amount).toString(2);

const cashLabel = (c: CashTotal): string =>
  `${c.currency} ${money(c.charged)}${c.cash_type === "balance" ? "" : ` (${c.cash_type})`}`;

const unitLabel = (u: UnitTotal): string => `${u.units} ${u.package_type} units`;

/** "USD 3.50; CNY 1.00 (test_balance); 4 video units", or "0". */
export const chargesLabel = (charges: Charges): string => {
  const parts = [...charges.cash.filter((c) => !Decimal.of(c.charged).isZero()).map(cashLabel), ...charges.units.map(unitLabel)];
  return parts.length === 0 ? "0" : parts.join("; ");
};

// Succeeded but not downloaded yet still counts as in flight: the run is not done with it.
// Per-task tables stop here: GitHub caps a step summary at 1 MiB, and results.jsonl has them all.
const MAX_ROWS = 100;

const IN_FLIGHT: readonly TaskState[] = ["submitting", "submitted", "processing", "succeeded"];

export const formatBillingMarkdown = (summary: BillingSummary, deletions: readonly DeletionWarning[] = []): string => {
  const lines: string[] = [`# omnibatch billing: ${markdownText(summary.name)}`, ""];
  const stateCounts = Object.entries(summary.states)
    .filter(([, n]) => n > 0)
    // A task not started yet is queued (the lockfile's state name `planned` is not for people).
    .map(([s, n]) => `${n} ${s === "planned" ? "queued" : s}`)
    .join(", ");
  lines.push(`${summary.tasks} tasks${stateCounts ? `: ${stateCounts}` : ""}.`, "");

  lines.push("## Charged", "");
  if (summary.cash.length === 0) lines.push("Nothing was charged to a balance.", "");
  else {
    lines.push(row(["currency", "cash type", "charged", "list price", "saving", "tasks"]), "|---|---|--:|--:|--:|--:|");
    for (const c of summary.cash) lines.push(row([c.currency, c.cash_type, money(c.charged), money(c.list_price), money(c.saving), c.tasks]));
    lines.push("");
  }
  if (summary.units.length > 0) {
    lines.push("## Resource package units", "", row(["package", "units", "tasks"]), "|---|--:|--:|");
    for (const u of summary.units) lines.push(row([u.package_type, u.units, u.tasks]));
    lines.push("");
  }

  lines.push("## Per job", "", row(["job", "tasks", "downloaded", "in flight", "queued", "failed", "charged"]), "|---|--:|--:|--:|--:|--:|---|");
  for (const j of summary.jobs) {
    const inFlight = IN_FLIGHT.reduce((n, s) => n + j.states[s], 0);
    lines.push(
      row([j.job, j.tasks, j.states.downloaded, inFlight, j.states.planned, j.states.failed + j.states.rejected, chargesLabel(j)]),
    );
  }
  lines.push("");

  if (summary.failed.length > 0) {
    lines.push("## Failed tasks", "", row(["task", "job", "state", "code", "reason", "charged"]), "|---|---|---|--:|---|---|");
    for (const f of summary.failed.slice(0, MAX_ROWS)) lines.push(row([f.id, f.job, f.state, f.code, f.reason, chargesLabel(f)]));
    if (summary.failed.length > MAX_ROWS) lines.push("", `... and ${summary.failed.length - MAX_ROWS} more failed tasks: see results.jsonl.`);
    lines.push("");
  }

  if (summary.reused) {
    const r = summary.reused;
    const before = Object.entries(r.paidBefore).map(([c, a]) => `${c} ${money(a)}`).join("; ");
    lines.push(
      "## Reused results",
      "",
      `${r.tasks} task(s) reused the results of a task with the same request paid for elsewhere: no charge here (not counted above)${before ? `; their sources cost ${before} when paid` : ""}.`,
      "",
      row(["task", "job", "from", "paid", "cost when paid"]),
      "|---|---|---|---|---|",
    );
    for (const t of r.list.slice(0, MAX_ROWS)) {
      lines.push(row([t.id, t.job, t.from, t.paid_at !== undefined ? (isoTime(t.paid_at) ?? "") : "", t.cost ? `${t.cost.currency} ${money(t.cost.amount)}` : ""]));
    }
    if (r.list.length > MAX_ROWS) lines.push("", `... and ${r.list.length - MAX_ROWS} more: see results.jsonl.`);
    lines.push("");
  }

  if (deletions.length > 0) {
    lines.push(
      "## Results nearing deletion",
      "",
      "The service deletes results 30 days after creation; these are not downloaded yet. Run `omnibatch run` again soon.",
      "",
      row(["task", "job", "deleted at the service"]),
      "|---|---|---|",
    );
    for (const d of deletions.slice(0, MAX_ROWS)) lines.push(row([d.id, d.job, isoTime(d.deletesAt) ?? "unknown"]));
    if (deletions.length > MAX_ROWS) lines.push("", `... and ${deletions.length - MAX_ROWS} more: see results.jsonl (nearing_deletion).`);
    lines.push("");
  }
  return `${lines.map(neutralise).join("\n").trimEnd()}\n`;
};
