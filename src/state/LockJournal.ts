// The lockfile's append-only journal (`X.lock.json.journal`): a header line then one task
// line per change (the same line the lockfile holds, TaskLine.ts), later lines winning.
// Appending costs the size of the change, not of the whole file; loading replays it over
// the file. A kill in the middle of an append leaves a last line without its newline:
// that torn tail is ignored. The header names the file the journal applies to (sha256 of
// its bytes): a journal left beside a newer file (killed between writing the file and
// removing the journal) holds nothing the file lacks, and replaying it would undo newer
// changes, so it is skipped. Older journals a killed older run left are still replayed:
// version 2 (task lines of lockfile version 2, decoded by its rules) and version 1
// (records `{id, task}` holding the whole in-memory task). The journal's version follows
// the lockfile's: journal 3 holds lines of lockfile version 3.

import type { LockTask } from "./LockFile.js";
import { stableJsonLine } from "./stableJson.js";
import { decodeTaskLine, encodeTaskLine, LINE_RULES, lineRuleProblem, type TaskLine } from "./TaskLine.js";
import { lockSchemaProblems } from "./validateLockFile.js";

/** Written; its task lines follow the rules of the same lockfile version. */
export const JOURNAL_VERSION = LINE_RULES;

export const journalPathOf = (lockfilePath: string): string => `${lockfilePath}.journal`;

export const encodeJournalHeader = (name: string, base: string): string =>
  `${stableJsonLine({ base, journal: JOURNAL_VERSION, name })}\n`;

/** One record; `name` is the one in the journal's header (task lines leave out what it determines). */
export const encodeJournalRecord = (name: string, id: string, task: LockTask): string => `${encodeTaskLine(name, id, task)}\n`;

export interface ReplayedJournal {
  /** The manifest name from the header. */
  readonly name: string;
  /** sha256 (hex) of the lockfile bytes the journal applies to. */
  readonly base: string | undefined;
  /** Last record per id, in order of appearance, checked against the schema. */
  readonly tasks: ReadonlyMap<string, LockTask>;
  /** Bytes of a torn last line that were ignored (0 when the journal ended cleanly). */
  readonly tornBytes: number;
}

/** Parses a journal's text; a string result says what is wrong with it (with its line). */
export const replayJournal = (text: string): ReplayedJournal | string => {
  const end = text.lastIndexOf("\n");
  // Everything after the last newline was cut off mid-append: never flushed, so never promised.
  const complete = end < 0 ? "" : text.slice(0, end);
  const tornBytes = Buffer.byteLength(text.slice(end + 1));
  if (complete === "") return { name: "", base: undefined, tasks: new Map(), tornBytes };
  const lines = complete.split("\n");
  let name = "";
  let base: string | undefined;
  let version = 0;
  const tasks = new Map<string, LockTask>();
  for (const [i, line] of lines.entries()) {
    let record: unknown;
    try {
      record = JSON.parse(line);
    } catch (error) {
      return `line ${i + 1} is not JSON (${(error as Error).message})`;
    }
    // A second header: two appends of one run wrote at once (a stop interrupting an append,
    // before the store made appends uninterruptible). Not replayed: the two batches could
    // land in either order, so a line after it may be older than one before it for the
    // same task, and replaying would undo the newer change.
    if (i > 0 && line === lines[0]) {
      return `line ${i + 1} repeats the header (line 1): two writes of one run ran at once, so its lines may not be in the order they were made`;
    }
    if (i === 0) {
      const header = record as { journal?: unknown; name?: unknown; base?: unknown };
      if ((header?.journal !== 1 && header?.journal !== 2 && header?.journal !== JOURNAL_VERSION) || typeof header.name !== "string" || typeof header.base !== "string") {
        return `line 1 is not a journal header of version 1 to ${JOURNAL_VERSION}`;
      }
      name = header.name;
      base = header.base;
      version = header.journal;
      continue;
    }
    let id: string;
    let task: LockTask;
    if (version === 1) {
      const entry = record as { id?: unknown; task?: unknown };
      if (typeof entry?.id !== "string" || entry.id === "") return `line ${i + 1} is not a task record {id, task}`;
      const problems = lockSchemaProblems("task", entry.task, 3);
      if (problems.length > 0) return `line ${i + 1} (task ${entry.id}) does not match the lockfile schema: ${problems.join("; ")}`;
      id = entry.id;
      task = entry.task as LockTask;
    } else {
      const rules = version === 2 ? 2 : LINE_RULES;
      const problems = lockSchemaProblems("taskLine", record, 3);
      const ruleProblem = problems.length > 0 ? undefined : lineRuleProblem(record as TaskLine, rules);
      if (ruleProblem !== undefined) problems.push(ruleProblem);
      if (problems.length > 0) return `line ${i + 1} does not match the lockfile schema: ${problems.join("; ")}`;
      ({ id, task } = decodeTaskLine(name, record as TaskLine, rules));
    }
    tasks.delete(id);
    tasks.set(id, task);
  }
  return { name, base, tasks, tornBytes };
};
