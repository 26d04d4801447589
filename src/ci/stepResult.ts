// How a run's exit code reads to a scheduler (the GitHub Action's step): exit 3, work
// pending, is a green step with `pending: true` so the next scheduled run continues;
// 1, 2, 4 and 5 are red, each with one line saying why. Pure: the step script
// (actionStep.ts) feeds it what the run printed and acts on the answer.

import type { RunSummary } from "../engine/RunEvent.js";
import { withCurrency } from "../money/Money.js";

export interface StepResult {
  /** Whether the step ends green. */
  readonly ok: boolean;
  /** The step's own exit code: 0 when green, else the run's (never 0). */
  readonly exitCode: number;
  readonly pending: boolean;
  /** done | failed | pending | budget | refused | invalid | error */
  readonly outcome: string;
  /** One line for the log and the annotation. */
  readonly reason: string;
}

const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? "" : "s"}`;

/**
 * The line of the run's stderr that says what went wrong (`omnibatch: ...`), without the
 * prefix; when it introduces a list ("the manifest is invalid:"), with the list's first
 * `file:line:col` problem and its count line, so one line still says where.
 */
export const firstErrorLine = (stderr: string): string | undefined => {
  const lines = stderr.split(/\r?\n/).filter((l) => l.trim() !== "" && !l.startsWith("::"));
  const at = Math.max(0, lines.findIndex((l) => l.startsWith("omnibatch: ")));
  const line = lines[at]?.replace(/^omnibatch: /, "").trim();
  if (line === undefined || !line.endsWith(":")) return line;
  const rest = lines.slice(at + 1);
  const first = rest.find((l) => /:\d+:\d+: (error|warning): /.test(l));
  const count = rest.find((l) => /^\d+ errors?, \d+ warnings?$/.test(l.trim()));
  return first ? `${line} ${first.trim()}${count ? ` (${count.trim()})` : ""}` : line.slice(0, -1);
};

export const stepResult = (runExitCode: number, summary: RunSummary | undefined, stderr: string): StepResult => {
  const why = summary?.reason ? `: ${summary.reason}` : "";
  switch (runExitCode) {
    case 0:
      return { ok: true, exitCode: 0, pending: false, outcome: "done", reason: `all done (${plural(summary?.created ?? 0, "task")} created, ${plural(summary?.downloaded ?? 0, "file")} downloaded)` };
    case 3:
      if (summary?.outcome === "review") {
        return { ok: true, exitCode: 0, pending: true, outcome: "review", reason: `outputs await review${why}: a person is needed (omnibatch review, or edit the review file in a pull request), then run again` };
      }
      return { ok: true, exitCode: 0, pending: true, outcome: "pending", reason: `work pending${why}; the next run continues` };
    case 1:
      return {
        ok: false,
        exitCode: 1,
        pending: false,
        outcome: "failed",
        reason: `${plural(summary?.failures.length ?? 0, "task")} failed or rejected (see the warnings and results.jsonl)`,
      };
    case 2:
      return { ok: false, exitCode: 2, pending: false, outcome: "invalid", reason: `invalid: ${firstErrorLine(stderr) ?? "the manifest, the command line or the lockfile (see the log)"}` };
    case 4:
      return { ok: false, exitCode: 4, pending: false, outcome: "budget", reason: `the budget stopped submission${why}` };
    case 5:
      if (summary?.outcome === "charge") return { ok: false, exitCode: 5, pending: false, outcome: "refused", reason: summary.reason ?? "a charge that cannot be true was refused" };
      return { ok: false, exitCode: 5, pending: false, outcome: "refused", reason: `the account refused${why || `: ${firstErrorLine(stderr) ?? "see the log"}`}` };
    case 6: {
      // Lost results: named by job and matrix values (the run's log and billing.md list them all).
      const lost = summary?.lost ?? [];
      const names = lost.slice(0, 3).map((l) => `${l.job} ${Object.entries(l.vars).filter(([k]) => k !== "item").map(([k, v]) => `${k}=${typeof v === "object" ? JSON.stringify(v) : String(v)}`).join(" ")}`.trim());
      return {
        ok: false,
        exitCode: 6,
        pending: false,
        outcome: "lost",
        reason: `${plural(lost.length, "result")} lost: deleted at the service and not in the outputs folder${names.length ? ` (${names.join(", ")}${lost.length > 3 ? ", ..." : ""})` : ""}; their records stay in the lockfile; 'run --recreate-lost' makes them again, at a cost`,
      };
    }
    default:
      return {
        ok: false,
        exitCode: runExitCode === 0 ? 1 : runExitCode,
        pending: false,
        outcome: "error",
        reason: `omnibatch ended with exit ${runExitCode}${firstErrorLine(stderr) ? `: ${firstErrorLine(stderr)}` : ""}`,
      };
  }
};

/** Spend per currency as one line, e.g. `1.40 USD, 3.00 CNY`; `0` when nothing was charged. */
export const spendLine = (spend: Readonly<Record<string, string>> | undefined): string => {
  const parts = Object.entries(spend ?? {}).map(([currency, amount]) => withCurrency(amount, currency));
  return parts.length ? parts.join(", ") : "0";
};
