// Exact decimal arithmetic for money and units: the service gives amounts as decimal
// strings, and totals must equal their exact sum (no float drift: 0.1 + 0.2 is 0.3).
// A value is an integer count of 10^-scale; scales align on addition.

const PATTERN = /^([+-]?)(\d+)(?:\.(\d+))?$/;

export class Decimal {
  private constructor(
    /** The value times 10^scale. */
    readonly units: bigint,
    /** Digits after the point. */
    readonly scale: number,
  ) {}

  static readonly zero = new Decimal(0n, 0);

  /** Parses "12", "-0.35", "+1.50"; undefined for anything else. */
  static parse(text: string): Decimal | undefined {
    const m = PATTERN.exec(text.trim());
    if (!m) return undefined;
    const fraction = m[3] ?? "";
    const units = BigInt(m[2]! + fraction);
    return new Decimal(m[1] === "-" ? -units : units, fraction.length);
  }

  /** Like parse, but a malformed value is an error naming it. */
  static of(text: string): Decimal {
    const value = Decimal.parse(text);
    if (value === undefined) throw new Error(`not a decimal number: ${JSON.stringify(text)}`);
    return value;
  }

  private rescale(scale: number): bigint {
    return this.units * 10n ** BigInt(scale - this.scale);
  }

  plus(other: Decimal): Decimal {
    const scale = Math.max(this.scale, other.scale);
    return new Decimal(this.rescale(scale) + other.rescale(scale), scale);
  }

  minus(other: Decimal): Decimal {
    return this.plus(new Decimal(-other.units, other.scale));
  }

  compare(other: Decimal): -1 | 0 | 1 {
    const scale = Math.max(this.scale, other.scale);
    const a = this.rescale(scale);
    const b = other.rescale(scale);
    return a < b ? -1 : a > b ? 1 : 0;
  }

  isZero(): boolean {
    return this.units === 0n;
  }

  /** Exact text with `scale` digits after the point (at least `minScale`, e.g. 2 for money). */
  toString(minScale = 0): string {
    const scale = Math.max(this.scale, minScale);
    const units = this.rescale(scale);
    const negative = units < 0n;
    const digits = (negative ? -units : units).toString().padStart(scale + 1, "0");
    const whole = digits.slice(0, digits.length - scale);
    const fraction = digits.slice(digits.length - scale);
    return `${negative ? "-" : ""}${whole}${scale > 0 ? `.${fraction}` : ""}`;
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
