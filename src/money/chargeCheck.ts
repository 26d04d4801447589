// Charges that cannot be true: a service (or a proxy in front of it) answering a
// negative charge, one that is no decimal number, or one larger than any task costs.
// Such a charge is refused: never recorded, never added to spend, the budget or a
// report's sum; the run stops submitting and ends naming the task and the answer
// (src/engine/followAnswers.ts). Pure; imports nothing of the client (src/api reads it).

import * as BigDecimal from "effect/BigDecimal";
import { parseAmount, ZERO } from "./Money.js";

/**
 * The most one task can be charged, in any currency or in package units. The service's
 * dearest task (a 10 s 1080p video with audio) costs a few units of either currency; a
 * charge over this is no price but a broken or lying answer, and is refused like a
 * negative one.
 */
export const MAX_TASK_CHARGE = "10000";

const MAX = parseAmount(MAX_TASK_CHARGE)!;

/** Why an amount the service sent as a charge cannot be true, or undefined when it can. */
export const chargeProblem = (value: unknown): string | undefined => {
  if (value === undefined || value === null) return undefined;
  const text = typeof value === "number" ? String(value) : typeof value === "string" ? value : undefined;
  if (text === undefined) return "not a decimal number";
  const amount = parseAmount(text);
  if (amount === undefined) return "not a decimal number";
  if (BigDecimal.lessThan(amount, ZERO)) return "negative";
  if (BigDecimal.greaterThan(amount, MAX)) return `more than ${MAX_TASK_CHARGE} for one task`;
  return undefined;
};

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** The answer's text of a value, short: what a refusal names. */
const shown = (value: unknown): string => {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 40 ? `${text.slice(0, 40)}...` : text;
};

/**
 * The first charge of a task item (either answer shape: a video task's `billing` entries,
 * an image task's `final_unit_deduction` and `final_balance_deduction`) that cannot be
 * true: its path in the item, the value as the answer wrote it, and why. Such a charge is
 * never recorded nor added to any sum; the run refuses it (stops submitting and ends).
 */
export const impossibleCharge = (item: unknown): { readonly path: string; readonly value: string; readonly why: string } | undefined => {
  if (!isRecord(item)) return undefined;
  const check = (path: string, value: unknown) => {
    const why = chargeProblem(value);
    return why === undefined ? undefined : { path, value: shown(value), why };
  };
  if (Array.isArray(item["billing"])) {
    for (const [i, entry] of item["billing"].entries()) {
      if (!isRecord(entry)) continue;
      const found = check(`/billing/${i}/amount`, entry["amount"]) ?? check(`/billing/${i}/list_price`, entry["list_price"]);
      if (found) return found;
    }
  }
  const unit = check("/final_unit_deduction", item["final_unit_deduction"]);
  if (unit) return unit;
  const cash = item["final_balance_deduction"];
  if (isRecord(cash)) return check("/final_balance_deduction/quota", cash["quota"]) ?? check("/final_balance_deduction/list_price", cash["list_price"]);
  return undefined;
};
