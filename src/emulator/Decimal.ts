// Money and units as exact integers of micro-units (1e-6), so that billing never
// drifts the way floating point would; formatted back to decimal strings for the wire.

const MICRO = 1_000_000n;

/** "0.35" -> 350000n; undefined when the text is not a plain non-negative decimal. */
export const parseDecimal = (text: string): bigint | undefined => {
  const m = /^(\d{1,12})(?:\.(\d{1,6}))?$/.exec(text);
  if (!m) return undefined;
  return BigInt(m[1]!) * MICRO + BigInt((m[2] ?? "").padEnd(6, "0"));
};

/** A number such as a discount (0.8) as micro-units, rounded to the nearest micro. */
export const microsOfNumber = (n: number): bigint => BigInt(Math.round(n * 1_000_000));

/** a * b where both are micro-units, rounded half up to micro-units. */
export const mulMicros = (a: bigint, b: bigint): bigint => (a * b + MICRO / 2n) / MICRO;

/** 350000n -> "0.35"; at least `minDecimals` decimals (2 for money, 0 for units). */
export const formatDecimal = (micros: bigint, minDecimals = 0): string => {
  const negative = micros < 0n;
  const abs = negative ? -micros : micros;
  const whole = abs / MICRO;
  let frac = (abs % MICRO).toString().padStart(6, "0").replace(/0+$/, "");
  if (frac.length < minDecimals) frac = frac.padEnd(minDecimals, "0");
  return `${negative ? "-" : ""}${whole}${frac ? `.${frac}` : ""}`;
};
