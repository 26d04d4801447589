// What the service charged, in one currency, from billing entries: the one sum the
// budget, the plan's outlook and the run's spend use. Only cash counts (units are
// package quota); an entry without a currency counts as the asked currency; an amount
// that is negative or unreadable never lowers the sum (the client reports it as an
// anomaly). Pure.

import type { BillingEntry } from "../api/wire.js";
import { type Amount, amountOf, max, sum, ZERO } from "./Money.js";

export const cashCharged = (billing: readonly BillingEntry[], currency: string): Amount =>
  sum(
    billing
      .filter((b) => b.charge_type === "cash" && (b.currency === undefined || b.currency === currency))
      .map((b) => max(amountOf(b.amount), ZERO)),
  );
