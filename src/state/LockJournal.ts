// The lockfile's append-only journal (`X.lock.json.journal`): NDJSON, a header line then
// one full task record per line, later lines winning. Appending costs the size of the
// change, not of the whole file; loading replays it over the file. A kill in the middle
// of an append leaves a last line without its newline: that torn tail is ignored. The
// header names the file the journal applies to (sha256 of its bytes): a journal left
// beside a newer file (killed between writing the file and removing the journal) holds
// nothing the file lacks, and replaying it would undo newer changes, so it is skipped.

import type { LockTask } from "./LockFile.js";
import { stableJsonLine } from "./stableJson.js";

export const JOURNAL_VERSION = 1;

export const journalPathOf = (lockfilePath: string): string => `${lockfilePath}.journal`;

export const encodeJournalHeader = (name: string, base: string): string =>
  `${stableJsonLine({ base, journal: JOURNAL_VERSION, name })}\n`;

export const encodeJournalRecord = (id: string, task: LockTask): string => `${stableJsonLine({ id, task })}\n`;

export interface ReplayedJournal {
  /** The manifest name from the header. */
  readonly name: string;
  /** sha256 (hex) of the lockfile bytes the journal applies to. */
  readonly base: string | undefined;
  /** Last record per id, in order of appearance. */
  readonly tasks: ReadonlyMap<string, unknown>;
  /** Bytes of a torn last line that were ignored (0 when the journal ended cleanly). */
  readonly tornBytes: number;
}

/** Parses a journal's text; a string result says what is wrong with it. Tasks are not schema-checked here. */
export const replayJournal = (text: string): ReplayedJournal | string => {
  const end = text.lastIndexOf("\n");
  // Everything after the last newline was cut off mid-append: never flushed, so never promised.
  const complete = end < 0 ? "" : text.slice(0, end);
  const tornBytes = Buffer.byteLength(text.slice(end + 1));
  if (complete === "") return { name: "", base: undefined, tasks: new Map(), tornBytes };
  const lines = complete.split("\n");
  let name = "";
  let base: string | undefined;
  const tasks = new Map<string, unknown>();
  for (const [i, line] of lines.entries()) {
    let record: unknown;
    try {
      record = JSON.parse(line);
    } catch (error) {
      return `line ${i + 1} is not JSON (${(error as Error).message})`;
    }
    if (i === 0) {
      const header = record as { journal?: unknown; name?: unknown; base?: unknown };
      if (header?.journal !== JOURNAL_VERSION || typeof header.name !== "string" || typeof header.base !== "string") {
        return `line 1 is not a journal header of version ${JOURNAL_VERSION}`;
      }
      name = header.name;
      base = header.base;
      continue;
    }
    const entry = record as { id?: unknown; task?: unknown };
    if (typeof entry?.id !== "string" || entry.id === "" || typeof entry.task !== "object" || entry.task === null) {
      return `line ${i + 1} is not a task record {id, task}`;
    }
    tasks.delete(entry.id);
    tasks.set(entry.id, entry.task);
  }
  return { name, base, tasks, tornBytes };
};
