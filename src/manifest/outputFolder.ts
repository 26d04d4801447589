// Folder names for task results, made from matrix values or an `output` template:
// safe on every OS (no separators, no `..`, no control or reserved characters, no
// reserved Windows names), bounded in length, and always inside the outputs folder.

const MAX_SEGMENT = 60;
const WINDOWS_RESERVED = /^(con|prn|aux|nul|com[0-9]|lpt[0-9])(\..*)?$/i;

/**
 * Text that every step of folderSegment leaves as it is: letters, digits, `_`, `-` and
 * `.`, not starting with `.` or `-`, not ending with `.`, at most MAX_SEGMENT long (the
 * usual matrix value: one test instead of four replacements, once per task).
 */
const PLAIN_SEGMENT = /^[A-Za-z0-9_][A-Za-z0-9_.-]*$/;

/** One path segment from any text. Never empty, never `.` or `..`. */
export const folderSegment = (text: string): string => {
  if (text.length <= MAX_SEGMENT && PLAIN_SEGMENT.test(text) && text.charCodeAt(text.length - 1) !== 46 /* . */) {
    return WINDOWS_RESERVED.test(text) ? `_${text}` : text;
  }
  // Plain ASCII (the common case) needs no Unicode normalisation.
  let s = (/^[\x20-\x7e]*$/.test(text) ? text : text.normalize("NFC"))
    // Control characters, separators and characters Windows refuses.
    .replace(/[\u0000-\u001f\u007f<>:"/\\|?*]/g, "_")
    .replace(/\s+/g, "-")
    .replace(/^[.\-]+/, "")
    .replace(/[. ]+$/, "");
  if (s.length > MAX_SEGMENT) s = s.slice(0, MAX_SEGMENT).replace(/[. ]+$/, "");
  if (s === "" ) s = "_";
  if (WINDOWS_RESERVED.test(s)) s = `_${s}`;
  return s;
};

/** A relative folder from a template result: each `/`-separated part made safe. */
export const folderPath = (text: string): string => {
  const parts = text
    .split(/[\\/]+/)
    .map((p) => p.trim())
    .filter((p) => p !== "" && p !== "." && p !== "..")
    .map(folderSegment);
  return parts.length ? parts.slice(0, 8).join("/") : "_";
};

/** The text a value contributes to a folder name: a row contributes its first field. */
const nameOf = (value: unknown): string => {
  if (value === null || value === undefined) return "";
  if (typeof value !== "object") return String(value);
  if (Array.isArray(value)) return value.map(nameOf).join("-");
  const row = value as Record<string, unknown>;
  for (const key of ["id", "sku", "slug", "name", "key"]) {
    if (row[key] !== undefined && typeof row[key] !== "object") return String(row[key]);
  }
  const first = Object.values(row).find((v) => v !== null && typeof v !== "object");
  return first === undefined ? "" : String(first);
};

/** The default folder of a matrix combination: its values joined with `_`. */
export const comboFolder = (values: Readonly<Record<string, unknown>>): string => {
  // A loop, not entries/filter/map/filter: this runs once per task.
  const names: string[] = [];
  for (const k in values) {
    if (k === "item" || !Object.hasOwn(values, k)) continue;
    const name = nameOf(values[k]);
    if (name !== "") names.push(name);
  }
  return names.length ? folderSegment(names.length === 1 ? names[0]! : names.join("_")) : "task";
};

/** Matrix values in a line, for messages: `product=A-1 style=street`. */
export const describeVars = (values: Readonly<Record<string, unknown>>): string => {
  const parts = Object.entries(values).map(([k, v]) => {
    if (k === "item" && v && typeof v === "object") {
      const item = v as { task?: unknown; index?: unknown };
      return `item=${String(item.task)}${item.index !== undefined ? `#${String(item.index)}` : ""}`;
    }
    const text = nameOf(v);
    return `${k}=${text.length > 40 ? `${text.slice(0, 37)}...` : text}`;
  });
  return parts.length ? parts.join(" ") : "(no matrix)";
};
