// One text file the manifest check reads (the manifest or a data file), with the means
// to turn a character offset into line:col and to build a diagnostic that shows the line.

import type { Diagnostic } from "./Diagnostic.js";

export class SourceFile {
  /** Offsets where each line starts (0-based). */
  private readonly lineStarts: number[];

  constructor(
    /** Name shown to the user. */
    readonly display: string,
    readonly text: string,
  ) {
    this.lineStarts = [0];
    for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 10) this.lineStarts.push(i + 1);
  }

  /** 1-based line and column of a 0-based offset. */
  position(offset: number): { line: number; col: number } {
    const o = Math.max(0, Math.min(offset, this.text.length));
    let lo = 0;
    let hi = this.lineStarts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.lineStarts[mid]! <= o) lo = mid;
      else hi = mid - 1;
    }
    return { line: lo + 1, col: o - this.lineStarts[lo]! + 1 };
  }

  lineText(line: number): string {
    const start = this.lineStarts[line - 1];
    if (start === undefined) return "";
    const next = this.lineStarts[line];
    return this.text.slice(start, next === undefined ? undefined : next - 1).replace(/\r$/, "");
  }

  at(offset: number, message: string, severity: Diagnostic["severity"] = "error"): Diagnostic {
    const { line, col } = this.position(offset);
    return this.atLine(line, col, message, severity);
  }

  atLine(line: number, col: number, message: string, severity: Diagnostic["severity"] = "error"): Diagnostic {
    return { severity, file: this.display, line, col, message, lineText: this.lineText(line) };
  }
}
