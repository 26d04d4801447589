// Small readers of untrusted JSON values shared by the rule modules.

export const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** Length in Unicode code points: the spec counts characters, not bytes or UTF-16 units. */
export const codePointLength = (s: string): number => {
  // Without surrogate pairs (nearly every prompt) the UTF-16 length is the count.
  if (!/[\uD800-\uDFFF]/.test(s)) return s.length;
  let n = 0;
  for (const _ of s) n++;
  return n;
};

/** A short rendering of a wrong value for a message: `"abc"`, `7`, `an array`, `null`. */
export const describe = (v: unknown): string => {
  if (v === null) return "null";
  if (Array.isArray(v)) return "an array";
  if (typeof v === "string") return JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v);
  if (typeof v === "number" || typeof v === "boolean") return String(v);
  if (typeof v === "object") return "an object";
  return typeof v;
};
