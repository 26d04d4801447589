// A problem found in a manifest or one of its data files, with its place, and the one
// error every manifest check ends in (ManifestInvalid, exit 2). Printing lives in
// formatDiagnostics.ts; this file is only the data.

import * as Data from "effect/Data";

export interface Diagnostic {
  readonly severity: "error" | "warning";
  /** The file as shown to the user (relative to the working directory when inside it). */
  readonly file: string;
  /** 1-based. */
  readonly line: number;
  /** 1-based. */
  readonly col: number;
  readonly message: string;
  /** The source line the position is on, for the caret display. */
  readonly lineText?: string;
}

/** The manifest (or a data file it reads) is invalid; nothing was sent. Exit 2. */
export class ManifestInvalid extends Data.TaggedError("ManifestInvalid")<{
  readonly diagnostics: readonly Diagnostic[];
  /** The full formatted report: every problem with its line and caret, then a count. */
  readonly message: string;
}> {}
