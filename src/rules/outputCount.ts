// How many images an image create makes: the one rule every part uses (expansion, plan,
// downstream counts, slot accounting). From the spec (B1): `n` 1 to 9, default 1, for a
// single result; `series_amount` 2 to 9, default 4, for a series; `auto` lets the service
// pick the count, which can take up to 9 slots: expected at the default, at most 9.
// A value that is not a whole number here (a template not filled yet, a mistake the
// rules report elsewhere) counts as the default. Pure.

export const IMAGE_DEFAULT_N = 1;
export const SERIES_DEFAULT_AMOUNT = 4;
export const MAX_IMAGES_PER_TASK = 9;

export interface ImageCountFields {
  readonly result_type?: unknown;
  readonly n?: unknown;
  readonly series_amount?: unknown;
}

export interface ImageOutputs {
  /** What to plan for: estimates, downstream counts. */
  readonly expected: number;
  /** The most it can make: slots to hold. */
  readonly atMost: number;
}

const whole = (v: unknown, fallback: number): number =>
  typeof v === "number" && Number.isInteger(v) && v >= 1 && v <= MAX_IMAGES_PER_TASK ? v : fallback;

export const imageOutputs = (f: ImageCountFields): ImageOutputs => {
  if (f.result_type === "series") {
    if (f.series_amount === "auto") return { expected: SERIES_DEFAULT_AMOUNT, atMost: MAX_IMAGES_PER_TASK };
    const amount = whole(f.series_amount, SERIES_DEFAULT_AMOUNT);
    return { expected: amount, atMost: amount };
  }
  const n = whole(f.n, IMAGE_DEFAULT_N);
  return { expected: n, atMost: n };
};
