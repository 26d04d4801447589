// Places in the manifest, as diagnostics: a path in the YAML (with an optional offset
// into a template string) or a line of a data file. The pure core reports through this,
// so it never handles offsets or file names itself.

import type { Document } from "yaml";
import type { Diagnostic } from "./Diagnostic.js";
import type { SourcePos } from "./PlannedTask.js";
import type { SourceFile } from "./SourceFile.js";
import { keyOffsetAt, offsetAt, scalarAt, type YamlPath } from "./YamlDocument.js";

/** A place: in the manifest (path, optionally a key or an offset in a string), or a data file line. */
export type Place =
  | { readonly path: YamlPath; readonly key?: string; readonly textOffset?: number }
  | { readonly data: SourceFile; readonly line: number; readonly col?: number };

export class Locator {
  constructor(
    readonly source: SourceFile,
    readonly doc: Document.Parsed,
  ) {}

  private offset(place: Extract<Place, { path: YamlPath }>): number {
    if (place.key !== undefined) return keyOffsetAt(this.doc, place.path, place.key);
    if (place.textOffset !== undefined) {
      const s = scalarAt(this.doc, place.path);
      if (s && s.oneLine && (s.type === "PLAIN" || s.type === "QUOTE_DOUBLE" || s.type === "QUOTE_SINGLE")) {
        return s.offset + (s.type === "PLAIN" ? 0 : 1) + place.textOffset;
      }
    }
    return offsetAt(this.doc, place.path);
  }

  diagnostic(place: Place, message: string, severity: Diagnostic["severity"] = "error"): Diagnostic {
    if ("data" in place) return place.data.atLine(place.line, place.col ?? 1, message, severity);
    return this.source.at(this.offset(place), message, severity);
  }

  pos(place: Place): SourcePos {
    if ("data" in place) return { file: place.data.display, line: place.line, col: place.col ?? 1 };
    const { line, col } = this.source.position(this.offset(place));
    return { file: this.source.display, line, col };
  }
}

/** Where a named thing is declared: its key in a mapping, or the list item itself. */
export const declarationPlace = (path: YamlPath): Place => {
  const last = path[path.length - 1];
  return typeof last === "string" ? { path: path.slice(0, -1), key: last } : { path };
};

/** Collects diagnostics, folding the same problem found in many tasks into one line. */
export class DiagnosticSink {
  private readonly entries = new Map<string, { diagnostic: Diagnostic; count: number; example?: string }>();

  constructor(readonly locator: Locator) {}

  /** `task` describes the task the problem was found in (a function: only called when needed). */
  add(place: Place, message: string, severity: Diagnostic["severity"] = "error", task?: string | (() => string | undefined)): void {
    const d = this.locator.diagnostic(place, message, severity);
    const key = `${d.file}\u0000${d.line}\u0000${d.col}\u0000${d.message}`;
    const found = this.entries.get(key);
    if (found) {
      found.count++;
      return;
    }
    const example = typeof task === "function" ? task() : task;
    this.entries.set(key, { diagnostic: d, count: 1, ...(example !== undefined ? { example } : {}) });
  }

  push(diagnostic: Diagnostic): void {
    const key = `${diagnostic.file}\u0000${diagnostic.line}\u0000${diagnostic.col}\u0000${diagnostic.message}`;
    if (!this.entries.has(key)) this.entries.set(key, { diagnostic, count: 1 });
  }

  get hasErrors(): boolean {
    for (const e of this.entries.values()) if (e.diagnostic.severity === "error") return true;
    return false;
  }

  get errorCount(): number {
    let n = 0;
    for (const e of this.entries.values()) if (e.diagnostic.severity === "error") n++;
    return n;
  }

  list(): Diagnostic[] {
    return [...this.entries.values()].map(({ diagnostic, count, example }) => {
      if (example === undefined) return diagnostic;
      const where = count > 1 ? ` [in ${count} tasks, first: ${example}]` : ` [task: ${example}]`;
      return { ...diagnostic, message: diagnostic.message + where };
    });
  }
}
