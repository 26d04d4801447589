// Writes the review file: atomically (a reader, or a run starting at that moment, sees
// the old decisions or the new ones), entries sorted by task and output, keys in a
// fixed order, one line each, so a pull request that edits it shows small diffs.

import { parse } from "yaml";
import { writeFileAtomic } from "../state/writeFileAtomic.js";
import type { ReviewEntry, ReviewFile } from "./ReviewFile.js";
import { sortEntries } from "./reviewDecision.js";

const HEADER = [
  "# omnibatch review decisions (https://omnibatch.dev/schemas/review.schema.json).",
  "# One entry per output: the task's external id, the output index and the sha256 of the",
  "# file decided on; a decision covers only that file. Edit by hand or with `omnibatch review`.",
];

/**
 * A YAML scalar for a string: plain when YAML reads it back as the same string, else
 * quoted (a sha256 of digits only, or `1e5...`, would read as a number).
 */
const scalar = (s: string): string => (/^[A-Za-z0-9][A-Za-z0-9_./-]*$/.test(s) && parse(s) === s ? s : JSON.stringify(s));

const entryLines = (e: ReviewEntry): string[] => [
  `  - task: ${scalar(e.task)}`,
  `    output: ${e.output}`,
  `    sha256: ${scalar(e.sha256)}`,
  `    decision: ${e.decision}`,
  `    at: ${JSON.stringify(e.at)}`,
  ...(e.job !== undefined ? [`    job: ${scalar(e.job)}`] : []),
  ...(e.file !== undefined ? [`    file: ${scalar(e.file)}`] : []),
];

/** The file's text. Pure: the same decisions always give the same bytes. */
export const formatReviewFile = (file: ReviewFile): string => {
  const entries = sortEntries(file.outputs);
  const lines = [...HEADER, "version: 1", entries.length ? "outputs:" : "outputs: []", ...entries.flatMap(entryLines)];
  return lines.join("\n") + "\n";
};

export const writeReviewFile = (path: string, file: ReviewFile): Promise<number> => writeFileAtomic(path, formatReviewFile(file));
