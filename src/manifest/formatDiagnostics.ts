// Turns diagnostics into the report a person reads: `file:line:col: severity: message`,
// the offending line with a caret under the column, grouped per file in order of
// position, then a count line.

import type { Diagnostic } from "./Diagnostic.js";

const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? "" : "s"}`;

/** Orders diagnostics by file (first appearance), then line, then column. */
export const sortDiagnostics = (diagnostics: readonly Diagnostic[]): Diagnostic[] => {
  const fileOrder = new Map<string, number>();
  for (const d of diagnostics) if (!fileOrder.has(d.file)) fileOrder.set(d.file, fileOrder.size);
  return [...diagnostics].sort(
    (a, b) =>
      fileOrder.get(a.file)! - fileOrder.get(b.file)! || a.line - b.line || a.col - b.col,
  );
};

const frame = (d: Diagnostic): string => {
  if (d.lineText === undefined) return "";
  // Tabs would shift the caret; show them as one space each so the caret lines up.
  const text = d.lineText.replace(/\t/g, " ").slice(0, 200);
  const gutter = String(d.line);
  const pad = " ".repeat(gutter.length);
  const caretCol = Math.max(1, Math.min(d.col, text.length + 1));
  return `\n ${gutter} | ${text}\n ${pad} | ${" ".repeat(caretCol - 1)}^`;
};

export const formatDiagnostic = (d: Diagnostic): string =>
  `${d.file}:${d.line}:${d.col}: ${d.severity}: ${d.message}${frame(d)}`;

/** The whole report; ends with a count such as "2 errors, 1 warning". */
export const formatDiagnostics = (diagnostics: readonly Diagnostic[]): string => {
  const sorted = sortDiagnostics(diagnostics);
  const blocks: string[] = [];
  let current: string | undefined;
  for (const d of sorted) {
    if (d.file !== current) {
      if (current !== undefined) blocks.push("");
      current = d.file;
    }
    blocks.push(formatDiagnostic(d));
  }
  const errors = diagnostics.filter((d) => d.severity === "error").length;
  const warnings = diagnostics.length - errors;
  blocks.push("", `${plural(errors, "error")}, ${plural(warnings, "warning")}`);
  return blocks.join("\n");
};
