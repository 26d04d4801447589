// What the service charged, in one currency, from billing entries: the one sum the
// budget, the plan's outlook and the run's spend use. Only cash counts (units are
// package quota); an entry without a currency counts as the asked currency; an amount
// that is negative or unreadable never lowers the sum (the client reports it as an
// anomaly). Pure.

import type { BillingEntry } from "../api/wire.js";
import { type Amount, amountOf, formatAmount, max, minus, sum, ZERO } from "./Money.js";

export const cashCharged = (billing: readonly BillingEntry[], currency: string): Amount =>
  sum(
    billing
      .filter((b) => b.charge_type === "cash" && (b.currency === undefined || b.currency === currency))
      .map((b) => max(amountOf(b.amount), ZERO)),
  );

/**
 * The account's currency as the charges show it: the one currency every cash entry that
 * names one names; undefined when none does, or when they name several. Image charges
 * come without a currency (they are in the account's): a record made before the first
 * video charge showed it keeps none, and is read in this one.
 */
export const accountCurrency = (billings: Iterable<readonly BillingEntry[]>): string | undefined => {
  let found: string | undefined;
  for (const billing of billings) {
    for (const b of billing) {
      if (b.charge_type !== "cash" || b.currency === undefined || b.currency === found) continue;
      if (found !== undefined) return undefined;
      found = b.currency;
    }
  }
  return found;
};

/** Cash charged per currency over many tasks' billing (decimal strings); `also` is listed at 0 when nothing was charged in it. */
export const cashByCurrency = (billings: Iterable<readonly BillingEntry[]>, also?: string): Record<string, string> => {
  const all = [...billings].flat();
  const currencies = new Set<string>();
  for (const b of all) if (b.charge_type === "cash" && b.currency) currencies.add(b.currency);
  if (also) currencies.add(also);
  const out: Record<string, string> = {};
  for (const c of [...currencies].sort()) out[c] = formatAmount(cashCharged(all, c));
  return out;
};

/** `after − before`, per currency of `after`, never below 0 (decimal strings). */
export const spendSince = (after: Readonly<Record<string, string>>, before: Readonly<Record<string, string>>): Record<string, string> => {
  const out: Record<string, string> = {};
  for (const [c, a] of Object.entries(after)) out[c] = formatAmount(max(minus(amountOf(a), amountOf(before[c])), ZERO));
  return out;
};
