// What the service charged, in one currency, from billing entries: the one sum the
// budget, the plan's outlook and the run's spend use. Only cash counts (units are
// package quota); an entry without a currency counts as the asked currency; an amount
// that is negative or unreadable never lowers the sum (the client reports it as an
// anomaly). Pure.

import type { BillingEntry } from "../protocol/wire.js";
import { type Amount, amountOf, formatAmount, max, sum, ZERO } from "./Money.js";

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

/**
 * Cash charged per currency over many tasks' billing (decimal strings); `also` is listed
 * at 0 when nothing was charged in it. Charges that name no currency when none is known
 * at all (an image-only account, no budget or prices) are listed under "" (the account's
 * currency, unnamed): charged all the same.
 */
export const cashByCurrency = (billings: Iterable<readonly BillingEntry[]>, also?: string): Record<string, string> => {
  const all = [...billings].flat();
  const currencies = new Set<string>();
  let unnamed = false;
  for (const b of all) {
    if (b.charge_type !== "cash") continue;
    if (b.currency) currencies.add(b.currency);
    else unnamed = true;
  }
  if (also) currencies.add(also);
  if (unnamed && currencies.size === 0) currencies.add("");
  const out: Record<string, string> = {};
  for (const c of [...currencies].sort()) out[c] = formatAmount(cashCharged(all, c));
  return out;
};

/**
 * The record states (src/state/LockFile.ts TaskState) of a finished task, whose charge
 * was counted when it finished. States are taken as the lockfile's words here, so that
 * money, below the lockfile, needs nothing of it.
 */
const FINISHED: ReadonlySet<string> = new Set(["succeeded", "downloaded", "failed"]);

/**
 * The charges a record's change brings: the billing of the answer that finished the task
 * (succeeded or failed) when the record was not finished before. A finished task's
 * billing read again (its files fetched again) is no new charge; a task made again after
 * its record was reset (a new emulator, which charges again) is. The live view and the
 * summary's "this run" both count these.
 */
export const newCharges = (before: string | undefined, after: { readonly state: string; readonly billing: readonly BillingEntry[] }): readonly BillingEntry[] =>
  (after.state === "succeeded" || after.state === "failed") && !(before !== undefined && FINISHED.has(before)) ? after.billing : [];


