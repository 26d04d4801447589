// The one `Range: bytes=...` form a browser's video element sends when it seeks, read
// against the file's size (RFC 9110 §14): the review page's media are served in parts so
// a clip can be scrubbed, from a folder or a store alike. Pure.

/** Inclusive byte offsets, as Content-Range writes them. */
export interface ByteRange {
  readonly start: number;
  readonly end: number;
}

/**
 * What to send for a Range header and a file of `size` bytes: `undefined` for the whole
 * file (no header, another unit, several ranges or a malformed one: a server may ignore
 * those), a range, or "unsatisfiable" (416) when it starts at or past the end.
 */
export const parseRange = (header: string | undefined, size: number): ByteRange | "unsatisfiable" | undefined => {
  if (header === undefined) return undefined;
  const m = /^\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*$/i.exec(header);
  if (!m) return undefined;
  const [, from = "", to = ""] = m;
  if (from === "" && to === "") return undefined;
  if (from === "") {
    // The last N bytes.
    const suffix = Number(to);
    if (!Number.isSafeInteger(suffix)) return undefined;
    if (suffix === 0 || size === 0) return "unsatisfiable";
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(from);
  const last = to === "" ? Infinity : Number(to);
  if (!Number.isSafeInteger(start) || (to !== "" && !Number.isSafeInteger(last)) || last < start) return undefined;
  if (start >= size) return "unsatisfiable";
  return { start, end: Math.min(last, size - 1) };
};
