// The matrix of a job as a CI matrix: the cartesian product of its axes, minus the
// combinations an `exclude` entry matches, then `include` entries either extended onto
// the combinations they fit or added as combinations of their own. Pure.

export interface Axis {
  readonly name: string;
  readonly values: readonly unknown[];
}

export interface Combination {
  readonly values: Readonly<Record<string, unknown>>;
  /**
   * Where it came from: its position in the product (decode with axisIndices), or the
   * include entry that added it.
   */
  readonly origin: { readonly product: number } | { readonly include: number };
}

/** The index into each axis of the product position `product` (last axis fastest). */
export const axisIndices = (axes: readonly Axis[], product: number): number[] => {
  const out = axes.map(() => 0);
  let rest = product;
  for (let a = axes.length - 1; a >= 0; a--) {
    const n = axes[a]!.values.length;
    out[a] = rest % n;
    rest = Math.floor(rest / n);
  }
  return out;
};

/** A scalar from a CSV (text) and the same value written in YAML (number) match. */
const scalarEquals = (a: unknown, b: unknown): boolean =>
  a === b || (a !== null && b !== null && typeof a !== "object" && typeof b !== "object" && String(a) === String(b));

/** `pattern` matches `value` when equal, or, for objects, when every key it gives matches. */
export const matches = (value: unknown, pattern: unknown): boolean => {
  if (pattern !== null && typeof pattern === "object" && !Array.isArray(pattern)) {
    if (value === null || typeof value !== "object" || Array.isArray(value)) return false;
    return Object.entries(pattern).every(([k, p]) => matches((value as Record<string, unknown>)[k], p));
  }
  if (Array.isArray(pattern)) {
    return Array.isArray(value) && value.length === pattern.length && pattern.every((p, i) => matches(value[i], p));
  }
  return scalarEquals(value, pattern);
};

/** Number of combinations before exclude/include: the guard against runaway products. */
export const productSize = (axes: readonly Axis[]): number =>
  axes.reduce((n, a) => n * a.values.length, 1);

export const expandMatrix = (
  axes: readonly Axis[],
  include: readonly Record<string, unknown>[] = [],
  exclude: readonly Record<string, unknown>[] = [],
): Combination[] => {
  const combos: { values: Record<string, unknown>; origin: Combination["origin"] }[] = [];
  const axisNames = new Set(axes.map((a) => a.name));
  // Entries read once, not once per combination.
  const excludes = exclude.map((e) => Object.entries(e));
  if (axes.length > 0 && productSize(axes) > 0) {
    const idx = axes.map(() => 0);
    let position = 0;
    for (;;) {
      const values: Record<string, unknown> = {};
      for (let a = 0; a < axes.length; a++) values[axes[a]!.name] = axes[a]!.values[idx[a]!];
      const excluded = excludes.length > 0 && excludes.some((e) => e.every(([k, p]) => k in values && matches(values[k], p)));
      if (!excluded) combos.push({ values, origin: { product: position } });
      position++;
      // Odometer: the last axis turns fastest, so tasks come in the order people read.
      let a = axes.length - 1;
      while (a >= 0) {
        idx[a]!++;
        if (idx[a]! < axes[a]!.values.length) break;
        idx[a] = 0;
        a--;
      }
      if (a < 0) break;
    }
  } else if (axes.length === 0 && include.length === 0) {
    combos.push({ values: {}, origin: { product: 0 } });
  }
  const original = combos.length;
  include.forEach((entry, i) => {
    let fitted = false;
    for (let c = 0; c < original; c++) {
      const combo = combos[c]!;
      const fits = Object.entries(entry).every(([k, v]) => !axisNames.has(k) || matches(combo.values[k], v));
      if (!fits) continue;
      fitted = true;
      for (const [k, v] of Object.entries(entry)) if (!axisNames.has(k)) combo.values[k] = v;
    }
    if (!fitted) combos.push({ values: { ...entry }, origin: { include: i } });
  });
  return combos;
};
