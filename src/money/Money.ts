// The one money type: exact decimal amounts (Effect's BigDecimal) for everything the
// product adds up: the manifest's prices and estimates, the budget, the plan's outlook,
// the live view's spend and the billing reports. Amounts arrive as decimal strings (the
// service, the lockfile) or as the manifest's YAML numbers; they never pass through
// floating-point arithmetic. The emulator keeps its own micro-unit arithmetic on purpose
// (src/emulator/Decimal.ts): an independent implementation to check this one against.

import * as BigDecimal from "effect/BigDecimal";
import * as Option from "effect/Option";

export type Amount = BigDecimal.BigDecimal;

export const ZERO: Amount = BigDecimal.fromBigInt(0n);

const PLAIN = /^[+-]?\d+(\.\d+)?$/;

/** A plain decimal string ("12", "-0.35", "1.50"); undefined for anything else (exponents, NaN, hex, empty). */
export const parseAmount = (text: string): Amount | undefined => {
  const trimmed = text.trim();
  return PLAIN.test(trimmed) ? Option.getOrUndefined(BigDecimal.fromString(trimmed)) : undefined;
};

/** An amount that may be absent or unreadable: zero then (callers that must know use parseAmount). */
export const amountOf = (text: string | undefined): Amount => (text === undefined ? ZERO : (parseAmount(text) ?? ZERO));

/**
 * A price written in the manifest as a YAML number (0.07): its shortest decimal text is
 * what the user wrote, so the amount is exact; non-finite numbers are undefined.
 */
export const fromPrice = (n: number | string): Amount | undefined => {
  if (typeof n === "string") return parseAmount(n);
  if (!Number.isFinite(n)) return undefined;
  // String(1e-7) is "1e-7": BigDecimal reads the exponent exactly.
  return Option.getOrUndefined(BigDecimal.fromString(String(n)));
};

export const times = (a: Amount, k: number | bigint): Amount => BigDecimal.multiply(a, BigDecimal.fromBigInt(BigInt(k)));

export const plus = (a: Amount, b: Amount): Amount => BigDecimal.sum(a, b);

export const minus = (a: Amount, b: Amount): Amount => BigDecimal.subtract(a, b);

export const sum = (amounts: Iterable<Amount>): Amount => BigDecimal.sumAll(amounts);

/** Plain text, trailing zeros dropped, at least `minScale` digits after the point (2 for money in reports). */
export const formatAmount = (a: Amount, minScale = 0): string => {
  const text = BigDecimal.format(BigDecimal.normalize(a));
  const point = text.indexOf(".");
  const digits = point < 0 ? 0 : text.length - point - 1;
  if (digits >= minScale) return text;
  return `${text}${point < 0 ? "." : ""}${"0".repeat(minScale - digits)}`;
};

/** The larger of two amounts. */
/** `0.5 USD`, or `0.5` for the account's unnamed currency ("": image charges name none). */
export const withCurrency = (amount: string, currency: string): string => (currency ? `${amount} ${currency}` : amount);

export const max = (a: Amount, b: Amount): Amount => BigDecimal.max(a, b);

/**
 * Text at the amount's own scale, as the service wrote it ("1.0" stays "1.0", sums keep
 * the longest scale of their parts), with at least `minScale` digits after the point:
 * reports show the service's figures digit for digit.
 */
export const formatAtScale = (a: Amount, minScale = 0): string => {
  const scale = Math.max(a.scale, minScale, 0);
  const units = a.value * 10n ** BigInt(scale - a.scale);
  const negative = units < 0n;
  const digits = (negative ? -units : units).toString().padStart(scale + 1, "0");
  const whole = digits.slice(0, digits.length - scale);
  const fraction = digits.slice(digits.length - scale);
  return `${negative ? "-" : ""}${whole}${scale > 0 ? `.${fraction}` : ""}`;
};
