// The reports' view of the one money type (src/money/Money.ts, Effect's BigDecimal):
// amounts keep the scale the service wrote them with, so billing files show its figures
// digit for digit ("1.0" stays "1.0"), and sums are exact (0.1 + 0.2 is 0.3).

import * as BigDecimal from "effect/BigDecimal";
import { type Amount, formatAtScale, parseAmount, ZERO } from "../money/Money.js";

export class Decimal {
  private constructor(readonly amount: Amount) {}

  static readonly zero = new Decimal(ZERO);

  /** Parses "12", "-0.35", "+1.50"; undefined for anything else. */
  static parse(text: string): Decimal | undefined {
    const amount = parseAmount(text);
    return amount === undefined ? undefined : new Decimal(amount);
  }

  /** Like parse, but a malformed value is an error naming it. */
  static of(text: string): Decimal {
    const value = Decimal.parse(text);
    if (value === undefined) throw new Error(`not a decimal number: ${JSON.stringify(text)}`);
    return value;
  }

  plus(other: Decimal): Decimal {
    return new Decimal(BigDecimal.sum(this.amount, other.amount));
  }

  minus(other: Decimal): Decimal {
    return new Decimal(BigDecimal.subtract(this.amount, other.amount));
  }

  compare(other: Decimal): -1 | 0 | 1 {
    return BigDecimal.Order(this.amount, other.amount);
  }

  isZero(): boolean {
    return BigDecimal.isZero(this.amount);
  }

  /** Exact text at the amount's scale, at least `minScale` digits after the point (2 for money). */
  toString(minScale = 0): string {
    return formatAtScale(this.amount, minScale);
  }

  toJSON(): string {
    return this.toString();
  }

  /** The exact sum of decimal strings. */
  static sum(values: Iterable<string | Decimal>): Decimal {
    let total = Decimal.zero;
    for (const v of values) total = total.plus(typeof v === "string" ? Decimal.of(v) : v);
    return total;
  }
}
