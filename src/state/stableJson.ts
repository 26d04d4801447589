// The lockfile's byte format: keys sorted at every level, 2-space indentation, a trailing
// newline. Identical data gives identical bytes, so git diffs stay small.

/** `value` with object keys sorted at every level and undefined members left out. */
export const sortKeys = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === "object") {
    const sorted: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) {
      const v = (value as Record<string, unknown>)[key];
      if (v === undefined) continue;
      // An own `__proto__` (JSON.parse makes one from text the service sent) stays a
      // member: assigned, it would set the copy's prototype and vanish from the output.
      if (key === "__proto__") Object.defineProperty(sorted, key, { value: sortKeys(v), enumerable: true, writable: true, configurable: true });
      else sorted[key] = sortKeys(v);
    }
    return sorted;
  }
  return value;
};

/** Pretty, key-sorted JSON with a trailing newline (the lockfile and report format). */
export const stableJson = (value: unknown): string => `${JSON.stringify(sortKeys(value), null, 2)}\n`;

/** Compact, key-sorted JSON on one line (journal records, results.jsonl). */
export const stableJsonLine = (value: unknown): string => JSON.stringify(sortKeys(value));
