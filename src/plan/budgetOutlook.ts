// The plan against the budget: what the lockfile has spent, what the plan's work left
// is estimated to cost, and which tasks would not run if the estimates hold. The
// budget counts every charge the lockfile records (earlier runs included), as the
// run does. Pure, exact decimals (BigDecimal): the same arithmetic the run's budget uses.

import * as BigDecimal from "effect/BigDecimal";
import { cashCharged } from "../money/charges.js";
import { amountOf, formatAmount, ZERO } from "../money/Money.js";
import type { LockFile } from "../state/LockFile.js";
import type { PlanResult } from "./diffPlan.js";

export interface BudgetOutlook {
  readonly currency: string;
  readonly max: string;
  /** Charged so far, in the budget's currency, by every task the lockfile records. */
  readonly spent: string;
  /** Estimate of the work left (tasks to create and waiting downstream tasks) that has a price. */
  readonly estimated: string;
  /** Tasks left to create (including expected downstream ones). */
  readonly tasks: number;
  /** Per job, tasks that would not run once the budget is reached, in the order the run creates them. */
  readonly wouldNotRun: Readonly<Record<string, number>>;
  /** Per job, tasks left whose cost cannot be counted (no price for their kind and resolution). */
  readonly unpriced: Readonly<Record<string, number>>;
}

const decimal = amountOf;
const format = (d: BigDecimal.BigDecimal): string => formatAmount(d);
const charged = cashCharged;

const bump = (into: Record<string, number>, job: string, n: number): void => {
  if (n > 0) into[job] = (into[job] ?? 0) + n;
};

export const budgetOutlook = (
  plan: PlanResult,
  lock: LockFile | undefined,
  budget: { readonly max: string; readonly currency: string },
): BudgetOutlook => {
  const { currency } = budget;
  let spent = ZERO;
  for (const id in lock?.tasks ?? {}) spent = BigDecimal.sum(spent, charged(lock!.tasks[id]!.billing, currency));
  const max = decimal(budget.max);
  let left = BigDecimal.max(BigDecimal.subtract(max, spent), ZERO);
  let estimated = ZERO;
  let tasks = 0;
  const wouldNotRun: Record<string, number> = {};
  const unpriced: Record<string, number> = {};
  for (const e of plan.entries) {
    if (e.mark !== "+" && e.mark !== "~" && e.mark !== "…") continue;
    const count = e.mark === "…" ? (e.count ?? 0) : 1;
    tasks += count;
    if (!e.estimate || e.estimate.currency !== currency) {
      bump(unpriced, e.job, count);
      continue;
    }
    const cost = decimal(e.estimate.amount);
    estimated = BigDecimal.sum(estimated, cost);
    if (count === 0) continue;
    const each = BigDecimal.unsafeDivide(cost, BigDecimal.fromBigInt(BigInt(count)));
    // How many of these fit in what is left (all of them when they cost nothing).
    const fit = BigDecimal.isZero(each)
      ? count
      : Math.min(count, Math.floor(BigDecimal.unsafeToNumber(BigDecimal.floor(BigDecimal.unsafeDivide(left, each), 0))));
    bump(wouldNotRun, e.job, count - fit);
    left = BigDecimal.max(BigDecimal.subtract(left, BigDecimal.multiply(each, BigDecimal.fromBigInt(BigInt(fit)))), ZERO);
  }
  return { currency, max: format(max), spent: format(spent), estimated: format(estimated), tasks, wouldNotRun, unpriced };
};

/** One sentence, e.g. `budget 15 USD: 7.68 spent, 8.52 estimated for 26 tasks: about 4 clips would not be made`. */
export const describeOutlook = (o: BudgetOutlook): string => {
  if (o.tasks === 0) return `budget ${o.max} ${o.currency}: ${o.spent} spent (every charge in the lockfile counts); nothing left to create`;
  const head = `budget ${o.max} ${o.currency}: ${o.spent} spent (every charge in the lockfile counts), ${o.estimated} estimated for ${o.tasks} task(s) left`;
  const cut = Object.entries(o.wouldNotRun);
  const tail = cut.length
    ? `: about ${cut.map(([job, n]) => `${n} ${job} task(s)`).join(" and ")} would not be made`
    : ": everything left fits";
  return head + tail;
};
