// The opaque A3 cursor: the creation-time window of the first query, the filters, and
// the position (creation order) of the last task returned. Tasks are listed in
// (create_time, id) order, so following cursors returns every task of the window once,
// even while new tasks are created (they fall after the window's end).

export interface CursorState {
  /** Window start and end (ms, start inclusive, end exclusive). */
  readonly start: number;
  readonly end: number;
  /** seq of the last task returned. */
  readonly after: number;
  readonly statuses: readonly string[];
  readonly kinds: readonly string[];
}

export const encodeCursor = (c: CursorState): string =>
  Buffer.from(JSON.stringify([1, c.start, c.end, c.after, c.statuses, c.kinds])).toString("base64url");

/** The state of a cursor, or undefined when it is not one this emulator made. */
export const decodeCursor = (text: string): CursorState | undefined => {
  if (!/^[A-Za-z0-9_-]{1,2000}$/.test(text)) return undefined;
  try {
    const v = JSON.parse(Buffer.from(text, "base64url").toString("utf8")) as unknown;
    if (!Array.isArray(v) || v.length !== 6 || v[0] !== 1) return undefined;
    const [, start, end, after, statuses, kinds] = v as [number, unknown, unknown, unknown, unknown, unknown];
    const isInt = (x: unknown): x is number => typeof x === "number" && Number.isSafeInteger(x);
    const isStrings = (x: unknown): x is string[] => Array.isArray(x) && x.every((s) => typeof s === "string");
    if (!isInt(start) || !isInt(end) || !isInt(after) || !isStrings(statuses) || !isStrings(kinds)) return undefined;
    return { start, end, after, statuses, kinds };
  } catch {
    return undefined;
  }
};
