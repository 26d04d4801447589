// The head of a run's CI step summary ($GITHUB_STEP_SUMMARY), written before the billing
// tables: the outcome first (done / stopped with work pending, run again / budget stop /
// failures / refused), the totals per job over the whole plan, elapsed time, spend this
// run and in all against the budget, and the failures grouped by reason, each named by
// its job and matrix values, with the downstream work they leave unmade. Pure.

import { markdownText } from "./markdownText.js";
import type { JobCounts, RunSummary } from "../engine/RunEvent.js";
import { withCurrency } from "../money/Money.js";

type Input = Pick<RunSummary, "outcome" | "reason" | "jobs" | "spend" | "spendThisRun" | "budget" | "failureGroups" | "failures" | "elapsedMs" | "emulated" | "created" | "downloaded"> & {
  readonly name: string;
};

const HEADLINE: Record<RunSummary["outcome"], string> = {
  done: "✅ done: every task finished and its results are on disk",
  pending: "⏳ stopped with work pending: run again to continue",
  budget: "🛑 budget stop: submission stopped at the budget; raise it or accept the rest unmade",
  failed: "❌ finished with failures",
  refused: "❌ the account refused: nothing more was submitted",
  charge: "❌ the service answered a charge that cannot be true: refused (counted nowhere); nothing more was submitted",
  review: "👀 review needed: everything that could be made is made; outputs await a person's decision (omnibatch review), then run again",
  lost: "⚠️ results lost: recorded results are neither on disk nor at the service (deleted there); see the lost results below",
};

// Cells and sentences hold text from the service and from data files: shown, never obeyed (markdownText).
const cell = markdownText;
const row = (cells: readonly (string | number)[]): string => `| ${cells.map(cell).join(" | ")} |`;

const duration = (ms: number): string => {
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  return m < 60 ? `${m}m ${String(s % 60).padStart(2, "0")}s` : `${Math.floor(m / 60)}h ${String(m % 60).padStart(2, "0")}m`;
};

/** The per-job columns after `tasks` and `done`, in order (a new count is one entry). */
const COLUMNS: ReadonlyArray<readonly [keyof JobCounts, string]> = [
  ["inFlight", "in flight"],
  ["queued", "queued"],
  ["failed", "failed"],
  ["rejected", "rejected"],
];

/** Tasks listed per failure group before "and N more". */
const LIST = 5;

export const formatRunStepSummary = (s: Input): string => {
  const out: string[] = [`# omnibatch run: ${cell(s.name)}: ${HEADLINE[s.outcome]}`, ""];
  if (s.reason && s.outcome !== "failed") out.push(`Why: ${cell(s.reason)}.`, "");
  if (s.emulated) out.push("> **Emulated run** (`--emulate`): nothing was sent to the service and nothing was charged.", "");

  out.push(row(["job", "tasks", "done", ...COLUMNS.map(([, label]) => label)]), `|---|--:|--:|${COLUMNS.map(() => "--:|").join("")}`);
  for (const [job, c] of Object.entries(s.jobs)) out.push(row([job, c.total, c.done, ...COLUMNS.map(([k]) => c[k] ?? 0)]));
  out.push("");

  const spend = Object.entries(s.spend);
  const money = spend.length
    ? spend.map(([c, a]) => cell(s.spendThisRun ? `${withCurrency(s.spendThisRun[c] ?? "0", c)} this run, ${withCurrency(a, c)} in all` : `${withCurrency(a, c)} in all`)).join("; ")
    : "nothing charged";
  out.push(
    `- **Elapsed:** ${duration(s.elapsedMs)} (${s.created} created, ${s.downloaded} file(s) downloaded by this run)`,
    `- **Spend:** ${money}${s.emulated && spend.length ? " (emulated, not real)" : ""}`,
    ...(s.budget ? [`- **Budget:** ${cell(s.budget.max)} ${cell(s.budget.currency)} (it counts every charge in the lockfile, earlier runs included)`] : []),
    "",
  );

  const groups = s.failureGroups?.groups ?? [];
  if (groups.length > 0) {
    const n = groups.reduce((k, g) => k + g.tasks.length, 0);
    out.push(`## Failures (${n}), by reason`, "", row(["reason", "code", "tasks", "which"]), "|---|--:|--:|---|");
    for (const g of groups) {
      const which = g.tasks.slice(0, LIST).map((t) => `${t.what}${t.again ? " (tried again next run)" : ""}`);
      if (g.tasks.length > LIST) which.push(`and ${g.tasks.length - LIST} more (results.jsonl)`);
      out.push(row([g.reason, g.code ?? "", g.tasks.length, which.join("; ")]));
    }
    const cut = Object.entries(s.failureGroups?.notMade ?? {});
    for (const [job, k] of cut) out.push("", `**${k} ${cell(job)} task(s) will not be made** (their upstream task failed).`);
    out.push("");
  } else if (s.failures.length > 0) {
    out.push(`## Failures (${s.failures.length})`, "", row(["task", "job", "code", "reason"]), "|---|---|--:|---|");
    for (const f of s.failures.slice(0, 50)) out.push(row([f.id, f.job, f.code ?? "", f.message]));
    out.push("");
  }
  return `${out.join("\n")}\n`;
};
