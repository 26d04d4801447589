// A problem found in a manifest or one of its data files, with its place, and the one
// error every manifest check ends in (ManifestInvalid, exit 2). Printing lives in
// formatDiagnostics.ts; this file is only the data.

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

/**
 * The manifest (or a data file it reads) is invalid; nothing was sent. Exit 2.
 *
 * The shape of a `Data.TaggedError` (an Error with `_tag`, `name` and the fields; ExitCode.ts
 * and Effect's `catchTag` go by the tag) without being one: `Data.TaggedError` brings the
 * core of Effect (about 45 modules) into every `omnibatch validate`, and this error is only
 * thrown by `loadManifest` (a Promise function) and caught, never yielded in an Effect.
 */
export class ManifestInvalid extends Error {
  readonly _tag = "ManifestInvalid" as const;
  readonly diagnostics: readonly Diagnostic[];
  constructor(args: {
    readonly diagnostics: readonly Diagnostic[];
    /** The full formatted report: every problem with its line and caret, then a count. */
    readonly message: string;
  }) {
    super(args.message);
    this.diagnostics = args.diagnostics;
  }
}
ManifestInvalid.prototype.name = "ManifestInvalid";
