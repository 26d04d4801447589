// What a task costs: list price from the account's table (by kind, resolution and
// duration), the discounted amount, and the units of a resource package. Pure and exact
// (micro-units), decided at create time so a later config change does not rewrite history.

import type { BillingEntry } from "../protocol/wire.js";
import { formatDecimal, microsOfNumber, mulMicros, parseDecimal } from "./Decimal.js";
import type { EmulatorConfig } from "./EmulatorConfig.js";

export interface Charge {
  readonly mode: "cash" | "unit";
  readonly cashType: "balance" | "test_balance";
  readonly currency: "USD" | "CNY";
  readonly packageType: "video" | "image";
  readonly listMicros: bigint;
  readonly amountMicros: bigint;
  readonly unitMicros: bigint;
}

export type PricedTask =
  | { readonly kind: "video"; readonly resolution: string; readonly durationSec: number }
  | { readonly kind: "image"; readonly resolution: string; readonly count: number };

const rate = (table: Readonly<Record<string, string>>, key: string): bigint => parseDecimal(table[key] ?? "0") ?? 0n;

export const priceOf = (task: PricedTask, billing: EmulatorConfig["billing"]): Charge => {
  const quantity = BigInt(task.kind === "video" ? task.durationSec : task.count);
  const overrideKey = task.kind === "video" ? `video/${task.resolution}/${task.durationSec}` : `image/${task.resolution}`;
  const override = billing.prices.overrides[overrideKey];
  const listMicros =
    override !== undefined ? (parseDecimal(override) ?? 0n) : rate(billing.prices[task.kind], task.resolution) * quantity;
  return {
    mode: billing.mode,
    cashType: billing.cash_type,
    currency: billing.currency,
    packageType: task.kind,
    listMicros,
    amountMicros: mulMicros(listMicros, microsOfNumber(billing.discount)),
    unitMicros: rate(billing.units[task.kind], task.resolution) * quantity,
  };
};

/** What the charge takes from the account's balance (money in cash mode, units in unit mode). */
export const costOf = (c: Charge): bigint => (c.mode === "cash" ? c.amountMicros : c.unitMicros);

/** The `billing` entries of a succeeded video task. */
export const videoBilling = (c: Charge): BillingEntry[] =>
  c.mode === "cash"
    ? [
        {
          charge_type: "cash",
          cash_type: c.cashType,
          amount: formatDecimal(c.amountMicros, 2),
          currency: c.currency,
          list_price: formatDecimal(c.listMicros, 2),
        },
      ]
    : [{ charge_type: "unit", amount: formatDecimal(c.unitMicros), package_type: c.packageType }];

/** `final_unit_deduction` and `final_balance_deduction` of a succeeded image task. */
export const imageBilling = (c: Charge): { final_unit_deduction: string; final_balance_deduction: { quota: string; list_price: string } } =>
  c.mode === "cash"
    ? {
        final_unit_deduction: "0",
        final_balance_deduction: { quota: formatDecimal(c.amountMicros, 2), list_price: formatDecimal(c.listMicros, 2) },
      }
    : { final_unit_deduction: formatDecimal(c.unitMicros), final_balance_deduction: { quota: "0", list_price: "0" } };
