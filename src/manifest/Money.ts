// Decimal amounts for estimates, as integer millionths so sums do not drift
// (0.1 + 0.2 stays 0.3). Prices in a manifest have at most six decimals that matter.

export const toMicros = (n: number | string): number => Math.round(Number(n) * 1_000_000);

export const formatMicros = (micros: number): string => {
  const sign = micros < 0 ? "-" : "";
  const abs = Math.abs(Math.round(micros));
  const whole = Math.floor(abs / 1_000_000);
  const frac = String(abs % 1_000_000).padStart(6, "0").replace(/0+$/, "");
  return `${sign}${whole}${frac ? `.${frac}` : ""}`;
};
