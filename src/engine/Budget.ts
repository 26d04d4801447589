// The budget check: may one more task start without the run's spending passing
// `budget.max`? Spending counts what the service charged (cash, in the budget's
// currency) plus the estimate of every task still running, plus the next one.
// Exact decimals (BigDecimal), never floats. Pure.

import { BigDecimal } from "effect";
import type { BillingEntry } from "../protocol/wire.js";
import { cashCharged } from "../money/charges.js";
import { amountOf, formatAmount, sum, ZERO } from "../money/Money.js";

export interface BudgetLimit {
  readonly max: string;
  readonly currency: string;
}

const decimal = amountOf;

/** Cash charged in `currency` by these billing entries. Entries without a currency count as the budget's. */
export const chargedIn = cashCharged;

export interface Spending {
  /** Charged so far (finished tasks). */
  readonly charged: BigDecimal.BigDecimal;
  /** Estimates of the tasks sent and not yet charged. */
  readonly inFlight: BigDecimal.BigDecimal;
}

export const spending = (
  charged: Iterable<readonly BillingEntry[]>,
  inFlightEstimates: Iterable<{ currency: string; amount: string } | undefined>,
  currency: string,
): Spending => ({
  charged: sum([...charged].map((b) => chargedIn(b, currency))),
  inFlight: sum(
    [...inFlightEstimates].filter((e) => e !== undefined && e.currency === currency).map((e) => decimal(e!.amount)),
  ),
});

/** True when starting a task with this estimate would pass the budget. */
export const wouldExceed = (
  limit: BudgetLimit,
  spent: Spending,
  next: { currency: string; amount: string } | undefined,
): boolean => {
  const nextCost = next !== undefined && next.currency === limit.currency ? decimal(next.amount) : ZERO;
  const total = sum([spent.charged, spent.inFlight, nextCost]);
  return BigDecimal.greaterThan(total, decimal(limit.max));
};

/** Already at or past the limit, whatever comes next (a task without an estimate still costs). */
export const isExhausted = (limit: BudgetLimit, spent: Spending): boolean =>
  BigDecimal.greaterThanOrEqualTo(BigDecimal.sum(spent.charged, spent.inFlight), decimal(limit.max));

export const formatMoney = (amount: BigDecimal.BigDecimal): string => formatAmount(amount);
