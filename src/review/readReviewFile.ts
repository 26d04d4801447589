// Reads a review file, checked against schemas/review.schema.json with every problem
// reported as `file:line:col` (the manifest's YAML reader and schema diagnostics are
// reused). A missing file is an empty one: nothing has been reviewed yet.

import type { ValidateFunction } from "ajv";
import * as Data from "effect/Data";
import type { Diagnostic } from "../manifest/Diagnostic.js";
import { schemaDiagnostics } from "../manifest/checkSchema.js";
import { formatDiagnostics } from "../manifest/formatDiagnostics.js";
import { readRegularFileSync } from "../manifest/readRegularFile.js";
import { SourceFile } from "../manifest/SourceFile.js";
import { contentStart, offsetAt, parseYaml } from "../manifest/YamlDocument.js";
import { emptyReviewFile, outputKey, type ReviewFile } from "./ReviewFile.js";
import * as compiled from "./reviewSchema.generated.js";

/** A review file larger than this is not one omnibatch wrote (about 200 bytes an entry). */
export const MAX_REVIEW_FILE_BYTES = 64 * 1024 * 1024;

/** The review file is unreadable or does not match its schema. Exit 2. */
export class ReviewFileInvalid extends Data.TaggedError("ReviewFileInvalid")<{
  readonly diagnostics: readonly Diagnostic[];
  readonly message: string;
}> {}

const validator = (): ValidateFunction => (compiled as unknown as { all: { review: ValidateFunction } }).all.review;

const invalid = (display: string, diagnostics: readonly Diagnostic[]): ReviewFileInvalid =>
  new ReviewFileInvalid({
    diagnostics,
    message: `the review file ${display} is invalid (fix it by hand, or delete it to review again):\n\n${formatDiagnostics(diagnostics)}`,
  });

/** The decisions in `text`, or ReviewFileInvalid with every problem. Pure. */
export const parseReviewFile = (text: string, display: string): ReviewFile => {
  const source = new SourceFile(display, text);
  const parsed = parseYaml(source);
  if (parsed.diagnostics.some((d) => d.severity === "error")) throw invalid(display, parsed.diagnostics);
  // An empty file (or only comments) holds no decisions.
  if (parsed.value === null || parsed.value === undefined) return emptyReviewFile;
  if (typeof parsed.value !== "object" || Array.isArray(parsed.value)) {
    throw invalid(display, [source.at(contentStart(parsed.doc), "a review file is a mapping with version and outputs at the top level")]);
  }
  const problems = schemaDiagnostics(validator(), parsed.value, parsed.doc, source, "the review file");
  if (problems.length) throw invalid(display, problems);
  const file = parsed.value as ReviewFile;
  const seen = new Map<string, number>();
  const duplicates: Diagnostic[] = [];
  file.outputs.forEach((e, i) => {
    const key = outputKey(e.task, e.output);
    const first = seen.get(key);
    if (first === undefined) seen.set(key, i);
    else {
      const at = source.position(offsetAt(parsed.doc, ["outputs", first]));
      duplicates.push(
        source.at(
          offsetAt(parsed.doc, ["outputs", i]),
          `outputs[${i}]: a second decision for output ${e.output} of ${e.task} (the first is at line ${at.line}); keep one`,
        ),
      );
    }
  });
  if (duplicates.length) throw invalid(display, duplicates);
  return { version: 1, outputs: file.outputs };
};

/** The decisions in the file at `path` (empty when there is none). */
export const readReviewFile = (path: string, display: string = path): ReviewFile => {
  const read = readRegularFileSync(path, MAX_REVIEW_FILE_BYTES);
  if (!read.ok) {
    if (read.reason === "does not exist") return emptyReviewFile;
    throw invalid(display, [{ severity: "error", file: display, line: 1, col: 1, message: `the review file ${read.reason}` }]);
  }
  return parseReviewFile(read.bytes.toString("utf8"), display);
};
