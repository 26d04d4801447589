// The rule of the gate, pure: what a person decided about one recorded output. A
// decision covers exactly the file it was made on (its sha256): the same output with
// different bytes awaits review again, so a decision never silently carries over.

import { type Decision, type ReviewEntry, type ReviewFile, outputKey } from "./ReviewFile.js";

export type ReviewState = Decision | "awaiting";

/** One recorded output of a reviewed job, as the lockfile has it. */
export interface RecordedOutput {
  readonly task: string;
  readonly output: number;
  readonly sha256: string;
}

/** The decisions indexed by output, for lookups per output. */
export type DecisionIndex = ReadonlyMap<string, ReviewEntry>;

export const indexDecisions = (file: ReviewFile): DecisionIndex => {
  const index = new Map<string, ReviewEntry>();
  for (const e of file.outputs) index.set(outputKey(e.task, e.output), e);
  return index;
};

export const reviewStateOf = (out: RecordedOutput, decisions: DecisionIndex): ReviewState => {
  const entry = decisions.get(outputKey(out.task, out.output));
  return entry !== undefined && entry.sha256 === out.sha256 ? entry.decision : "awaiting";
};

const compareEntries = (a: ReviewEntry, b: ReviewEntry): number =>
  a.task < b.task ? -1 : a.task > b.task ? 1 : a.output - b.output;

/** The file's entries in the order they are written: by task, then output index. */
export const sortEntries = (entries: readonly ReviewEntry[]): ReviewEntry[] => [...entries].sort(compareEntries);

/**
 * The file with these decisions made: each replaces any earlier entry for the same
 * output (one entry per output; an entry on an older file of it is no longer useful).
 */
export const withDecisions = (file: ReviewFile, made: readonly ReviewEntry[]): ReviewFile => {
  const byKey = new Map(file.outputs.map((e) => [outputKey(e.task, e.output), e] as const));
  for (const e of made) byKey.set(outputKey(e.task, e.output), e);
  return { version: 1, outputs: sortEntries([...byKey.values()]) };
};
