// Ask before spending: on a terminal, `run` against a real service shows what it is
// about to create and what that is estimated to cost (with the budget and what the
// lockfile has spent), and waits for a yes before the first create. `--yes`, a run
// without a terminal (CI) and an `--emulate` run (nothing is charged) never ask.
// `spendQuestion` is pure (the text); `askYesNo` is the small effectful part.

import type { RecreatePlan } from "../run/recreatePlan.js";
import { createInterface } from "node:readline";
import type { BudgetOutlook } from "../manifest/budgetOutlook.js";
import { describeOutlook } from "../manifest/budgetOutlook.js";
import type { PlanResult } from "../manifest/diffPlan.js";

const money = (m: Readonly<Record<string, string>>): string =>
  Object.entries(m)
    .map(([c, a]) => `${a} ${c}`)
    .join(", ");

const perJob = (plan: PlanResult, marks: readonly ("+" | "~" | "…")[]): string =>
  Object.entries(plan.jobs)
    .map(([job, c]) => [job, marks.reduce((n, m) => n + c[m], 0)] as const)
    .filter(([, n]) => n > 0)
    .map(([job, n]) => `${job} ${n}`)
    .join(", ");

/** The question, or undefined when the plan creates nothing (nothing to ask). */
export const spendQuestion = (plan: PlanResult, outlook: BudgetOutlook | undefined): string | undefined => {
  const now = plan.total["+"] + plan.total["~"];
  const later = plan.total["…"];
  if (now + later === 0) return undefined;
  const lines = [`This run will create ${now} task(s) now${now ? ` (${perJob(plan, ["+", "~"])})` : ""}`];
  if (later) lines.push(`and about ${later} downstream task(s) as upstream results arrive (${perJob(plan, ["…"])}).`);
  const estimate = money(plan.estimate);
  const waiting = money(plan.waitingEstimate);
  if (estimate || waiting) {
    lines.push(`Estimated cost: ${estimate || "0"} now${waiting ? `, ${waiting} downstream` : ""} (from the manifest's prices).`);
  } else {
    lines.push("No estimate: the manifest has no prices for these tasks.");
  }
  if (outlook) lines.push(`${describeOutlook(outlook)}.`);
  return `${lines.join("\n")}\nContinue? [y/N] `;
};

/** Reads one answer line; yes only for y/yes (any case). End of input counts as no. */
export const askYesNo = (
  question: string,
  input: NodeJS.ReadableStream,
  output: NodeJS.WritableStream,
): Promise<boolean> =>
  new Promise((resolve) => {
    const rl = createInterface({ input, output, terminal: false });
    let answered = false;
    output.write(question);
    rl.once("line", (line) => {
      answered = true;
      rl.close();
      resolve(/^\s*y(es)?\s*$/i.test(line));
    });
    rl.once("close", () => {
      if (!answered) resolve(false);
    });
  });

/** The text `run --recreate-lost` shows (and, on a terminal, asks about), or undefined when nothing is lost. Pure. */
export const recreateQuestion = (plan: RecreatePlan, ask: boolean): string | undefined => {
  if (plan.tasks.length === 0) return undefined;
  const results = plan.tasks.reduce((n, t) => n + t.results, 0);
  const lines = [`--recreate-lost: ${results} lost result(s) of ${plan.tasks.length} task(s) are made again, as new attempts with new ids:`];
  if (plan.downstream > 0) lines[0] = lines[0]!.replace(/:$/, `, and ${plan.downstream} lost downstream task(s) from their new results:`);
  for (const t of plan.tasks.slice(0, 20)) lines.push(`  ${t.name}${t.estimate ? `  ~${t.estimate.amount} ${t.estimate.currency}` : ""}`);
  if (plan.tasks.length > 20) lines.push(`  ... and ${plan.tasks.length - 20} more`);
  const estimate = money(plan.estimate);
  lines.push(
    `Estimated cost: ${estimate || "unknown"}${plan.unpriced > 0 && estimate ? ` (and ${plan.unpriced} task(s) the manifest has no price for)` : ""}; downstream tasks made from the new results come on top.`,
  );
  return `${lines.join("\n")}\n${ask ? "Pay to make them again? [y/N] " : ""}`;
};
