// The pull-request view of a plan: the plan as printed, then the estimate (tasks to
// create, plus downstream tasks still waiting) against the manifest's budget, as the
// Markdown the action appends to the job summary. Pure.

import * as BigDecimal from "effect/BigDecimal";
import { neutralise } from "../api/neutralise.js";
import { type Amount, amountOf, formatAmount, plus } from "../money/Money.js";
import { markdownCode, markdownText } from "../report/markdownText.js";

export interface PlanFigures {
  readonly manifest: string;
  /** `omnibatch plan` output, as printed. */
  readonly planText: string;
  readonly toCreate: number;
  readonly estimate: Readonly<Record<string, string>>;
  readonly waitingEstimate: Readonly<Record<string, string>>;
  readonly budget?: { readonly max: string; readonly currency: string };
}

export interface PlanVerdict {
  /** Estimate (to create + waiting) per currency, decimal strings. */
  readonly total: Readonly<Record<string, string>>;
  /** Undefined when there is no budget or no estimate in its currency. */
  readonly overBudget: boolean | undefined;
}

export const planVerdict = (f: PlanFigures): PlanVerdict => {
  const sums = new Map<string, Amount>();
  for (const part of [f.estimate, f.waitingEstimate]) {
    for (const [currency, amount] of Object.entries(part)) {
      const before = sums.get(currency);
      sums.set(currency, before === undefined ? amountOf(amount) : plus(before, amountOf(amount)));
    }
  }
  const total = Object.fromEntries([...sums].map(([c, m]) => [c, formatAmount(m)]));
  const inBudgetCurrency = f.budget ? sums.get(f.budget.currency) : undefined;
  return {
    total,
    overBudget: f.budget && inBudgetCurrency !== undefined ? BigDecimal.greaterThan(inBudgetCurrency, amountOf(f.budget.max)) : undefined,
  };
};

const money = (r: Readonly<Record<string, string>>): string => {
  const parts = Object.entries(r).map(([c, a]) => markdownText(`${a} ${c}`));
  return parts.length ? parts.join(", ") : "none (no prices for these tasks)";
};

export const planSummaryMarkdown = (f: PlanFigures): string => {
  const v = planVerdict(f);
  const verdict =
    v.overBudget === undefined
      ? f.budget
        ? "no estimate in the budget's currency"
        : "no budget in the manifest"
      : v.overBudget
        ? "**over the budget**: a run stops submitting at the budget (exit 4)"
        : "within the budget";
  // A fence longer than any run of backticks in the plan (its values are the manifest's): nothing in it closes the block.
  const fence = "`".repeat(Math.max(3, ...(f.planText.match(/`+/g) ?? []).map((run) => run.length + 1)));
  return [
    `### omnibatch plan: ${markdownCode(f.manifest)}`,
    "",
    `${f.toCreate} task(s) to create. Merging this makes the next scheduled run create them.`,
    "",
    "| | amount |",
    "|---|---|",
    `| estimate, tasks to create | ${money(f.estimate)} |`,
    `| estimate, downstream tasks waiting | ${money(f.waitingEstimate)} |`,
    `| estimate, total | ${money(v.total)} |`,
    `| budget | ${f.budget ? markdownText(`${f.budget.max} ${f.budget.currency}`) : "none"} |`,
    "",
    `Estimate against budget: ${verdict}. Estimates come from the manifest's prices; the service's charges may differ.`,
    "",
    "<details><summary>The plan</summary>",
    "",
    fence,
    f.planText.trimEnd().split("\n").map(neutralise).join("\n"),
    fence,
    "",
    "</details>",
    "",
    "",
  ].join("\n");
};
