// Reads the rows of a matrix axis from a data file beside the manifest (CSV, JSON,
// JSONL or YAML). Every problem points into the data file itself, at the line of the
// bad row.

import { isSeq } from "yaml";
import type { Diagnostic } from "./Diagnostic.js";
import { parseCsv } from "./parseCsv.js";
import { readRegularFileSync } from "./readRegularFile.js";
import { SourceFile } from "./SourceFile.js";
import { parseYaml } from "./YamlDocument.js";

export interface DataRows {
  readonly source: SourceFile;
  readonly rows: unknown[];
  /** 1-based line of each row in the data file. */
  readonly lines: number[];
}

const PROTO_KEY = "a row may not use the key '__proto__' (JavaScript reserves it; its value would be lost): rename it";

/**
 * Whether `value` has an own key `__proto__` at any depth (JSON.parse and the YAML reader
 * keep such a key; a template could not name it, and copying the row would lose it).
 * Walked with a list, not recursion: a data file's nesting is not ours to bound.
 */
export const holdsProtoKey = (value: unknown): boolean => {
  const pending: unknown[] = [value];
  while (pending.length > 0) {
    const v = pending.pop();
    if (v === null || typeof v !== "object") continue;
    if (!Array.isArray(v) && Object.hasOwn(v, "__proto__")) return true;
    for (const child of Object.values(v)) pending.push(child);
  }
  return false;
};

/** Largest data file read (a guard, far above any real catalogue). */
const MAX_BYTES = 256 * 1024 * 1024;

export const readDataFile = (absolute: string, display: string): { ok: true; data: DataRows } | { ok: false; diagnostics: Diagnostic[]; reason?: string } => {
  // Only a regular file, its size bound checked while reading: a FIFO or a device named
  // here (a CSV cell can name any path) must neither block nor be read forever.
  const read = readRegularFileSync(absolute, MAX_BYTES);
  if (!read.ok) return { ok: false, diagnostics: [], reason: read.reason };
  const text = read.bytes.toString("utf8");
  const source = new SourceFile(display, text);
  const lower = absolute.toLowerCase();
  if (lower.endsWith(".csv")) {
    const parsed = parseCsv(text);
    if (Array.isArray(parsed)) return { ok: false, diagnostics: parsed.map((p) => source.atLine(p.line, p.col, p.message)) };
    return { ok: true, data: { source, rows: parsed.rows, lines: parsed.lines } };
  }
  if (lower.endsWith(".jsonl") || lower.endsWith(".ndjson")) {
    const rows: unknown[] = [];
    const lines: number[] = [];
    const diagnostics: Diagnostic[] = [];
    const all = (text.charCodeAt(0) === 0xfeff ? text.slice(1) : text).split("\n");
    all.forEach((raw, i) => {
      const l = raw.replace(/\r$/, "");
      if (l.trim() === "") return;
      try {
        rows.push(JSON.parse(l));
        lines.push(i + 1);
      } catch (error) {
        diagnostics.push(source.atLine(i + 1, 1, `not valid JSON: ${(error as Error).message.replace(/ in JSON at position \d+.*$/s, "")}`));
      }
    });
    rows.forEach((row, i) => {
      if (holdsProtoKey(row)) diagnostics.push(source.atLine(lines[i]!, 1, PROTO_KEY));
    });
    return diagnostics.length ? { ok: false, diagnostics } : { ok: true, data: { source, rows, lines } };
  }
  // JSON is a subset of YAML, and the YAML reader keeps positions: one reader for both.
  const parsed = parseYaml(source);
  if (parsed.diagnostics.some((d) => d.severity === "error")) return { ok: false, diagnostics: parsed.diagnostics };
  const contents = parsed.doc.contents;
  if (!isSeq(contents) || !Array.isArray(parsed.value)) {
    return { ok: false, diagnostics: [source.at(0, "expected a list of rows at the top of the file")] };
  }
  const lines = contents.items.map((item) => source.position((item as unknown as { range?: [number] }).range?.[0] ?? 0).line);
  const rows = parsed.value as unknown[];
  const reserved = rows.flatMap((row, i) => (holdsProtoKey(row) ? [source.atLine(lines[i]!, 1, PROTO_KEY)] : []));
  if (reserved.length > 0) return { ok: false, diagnostics: reserved };
  return { ok: true, data: { source, rows, lines } };
};
