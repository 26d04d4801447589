// The lockfile's append-only journal (`X.lock.json.journal`): a header line then one task
// line per change (the same line the lockfile holds, TaskLine.ts), later lines winning.
// Appending costs the size of the change, not of the whole file; loading replays it over
// the file. A kill in the middle of an append leaves a last line without its newline:
// that torn tail is ignored. The header names the file the journal applies to (sha256 of
// its bytes): a journal left beside a newer file (killed between writing the file and
// removing the journal) holds nothing the file lacks, and replaying it would undo newer
// changes, so it is skipped. That is checked before its content: a damaged obsolete
// journal is skipped too when the file covers every record in it (`recordCovered`), else
// refused and kept, so no change only it holds is dropped. Older journals a killed older
// run left are still replayed: version 2 (task lines of lockfile version 2, decoded by its
// rules) and version 1 (records `{id, task}` holding the whole in-memory task). The
// journal's version follows the lockfile's: journal 3 holds lines of lockfile version 3.

import type { LockTask } from "./LockFile.js";
import { sameJson } from "./sameJson.js";
import { stableJsonLine } from "./stableJson.js";
import { decodeTaskLine, encodeTaskLine, LINE_RULES, lineRuleProblem, type TaskLine } from "./TaskLine.js";
import { unknownJobProblem } from "./foreignLines.js";
import { recordPathProblem } from "./recordPaths.js";
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
  /** Last record per id, in order of appearance, checked against the schema (none when obsolete). */
  readonly tasks: ReadonlyMap<string, LockTask>;
  /** Bytes of a torn last line that were ignored (0 when the journal ended cleanly). */
  readonly tornBytes: number;
  /** Its header names other lockfile bytes than the file beside it: skipped (see `replayJournal`). */
  readonly obsolete: boolean;
}

/** The lockfile a journal lies beside: the sha256 of its bytes and its tasks. */
export interface JournalFile {
  readonly sha256: string;
  readonly tasks: ReadonlyMap<string, LockTask>;
}

/**
 * A journal record the file already holds: the same task, or a later state of it. A
 * run's full write holds each task's latest state, so a journal left beside the file it
 * was folded into (killed before removing it) holds only covered records; a record the
 * file lacks, or holds older (`updated_at`: the run's clock), is a change only the
 * journal has.
 */
export const recordCovered = (inFile: LockTask | undefined, record: LockTask): boolean =>
  inFile !== undefined && (inFile.updated_at >= record.updated_at || sameJson(inFile, record));

type Header = { readonly name: string; readonly base: string; readonly version: number };

const headerOf = (record: unknown): Header | undefined => {
  const header = record as { journal?: unknown; name?: unknown; base?: unknown };
  if ((header?.journal !== 1 && header?.journal !== 2 && header?.journal !== JOURNAL_VERSION) || typeof header.name !== "string" || typeof header.base !== "string") {
    return undefined;
  }
  return { name: header.name, base: header.base, version: header.journal };
};

/** One task record of a journal (line `n`, 1-based) by its version's rules, or what is wrong with it. */
const recordOf = (record: unknown, n: number, header: Header): { id: string; task: LockTask } | string => {
  if (header.version === 1) {
    const entry = record as { id?: unknown; task?: unknown };
    if (typeof entry?.id !== "string" || entry.id === "") return `line ${n} is not a task record {id, task}`;
    const problems = lockSchemaProblems("task", entry.task, 3);
    if (problems.length > 0) return `line ${n} (task ${entry.id}) does not match the lockfile schema: ${problems.join("; ")}`;
    const pathProblem = recordPathProblem(entry.task as LockTask);
    if (pathProblem !== undefined) return `line ${n} (task ${entry.id}): ${pathProblem}`;
    return { id: entry.id, task: entry.task as LockTask };
  }
  const rules = header.version === 2 ? 2 : LINE_RULES;
  const problems = lockSchemaProblems("taskLine", record, 3);
  const ruleProblem = problems.length > 0 ? undefined : lineRuleProblem(record as TaskLine, rules);
  if (ruleProblem !== undefined) problems.push(ruleProblem);
  if (problems.length > 0) return `line ${n} does not match the lockfile schema: ${problems.join("; ")}`;
  const jobProblem = unknownJobProblem(header.name, record as TaskLine);
  if (jobProblem !== undefined) return `line ${n}: ${jobProblem}`;
  const decoded = decodeTaskLine(header.name, record as TaskLine, rules);
  const pathProblem = recordPathProblem(decoded.task);
  if (pathProblem !== undefined) return `line ${n} (task ${decoded.id}): ${pathProblem}`;
  return decoded;
};

const parseLine = (line: string, n: number): { record: unknown } | string => {
  try {
    return { record: JSON.parse(line) };
  } catch (error) {
    return `line ${n} is not JSON (${(error as Error).message})`;
  }
};

/**
 * Whether a damaged journal is all the same safe to skip as obsolete: every line after
 * the header is the header again or a record `file` covers. Undefined when it is; else
 * the first line that holds a change the file lacks (or cannot be read, so might).
 */
const uncoveredLine = (lines: readonly string[], header: Header, file: JournalFile): string | undefined => {
  for (let i = 1; i < lines.length; i++) {
    if (lines[i] === lines[0]) continue;
    const parsed = parseLine(lines[i]!, i + 1);
    if (typeof parsed === "string") return parsed;
    const entry = recordOf(parsed.record, i + 1, header);
    if (typeof entry === "string") return entry;
    if (!recordCovered(file.tasks.get(entry.id), entry.task)) return `line ${i + 1} (task ${entry.id}) holds a change the lockfile lacks`;
  }
  return undefined;
};

/**
 * Parses a journal's text; a string result says what is wrong with it (with its line).
 * `file`: the lockfile beside it. A journal whose header names other bytes than that
 * file's is obsolete (the file was rewritten after it) and skipped, as a valid one always
 * was. A damaged obsolete one (its header repeated by an older build's two writes at
 * once, say) is checked for obsolescence first: skipped when every record in it is one
 * the file covers (the usual case: a run killed between its full write and removing the
 * journal), and refused, kept for a person, only when it holds a change the file lacks.
 */
export const replayJournal = (text: string, file?: JournalFile): ReplayedJournal | string => {
  const end = text.lastIndexOf("\n");
  // Everything after the last newline was cut off mid-append: never flushed, so never promised.
  const complete = end < 0 ? "" : text.slice(0, end);
  const tornBytes = Buffer.byteLength(text.slice(end + 1));
  if (complete === "") return { name: "", base: undefined, tasks: new Map(), tornBytes, obsolete: false };
  const lines = complete.split("\n");
  const first = parseLine(lines[0]!, 1);
  if (typeof first === "string") return first;
  const header = headerOf(first.record);
  if (header === undefined) return `line 1 is not a journal header of version 1 to ${JOURNAL_VERSION}`;
  const replayed = replayRecords(lines, header);
  if (file === undefined || header.base === file.sha256) return typeof replayed === "string" ? replayed : { ...replayed, tornBytes };
  const skipped: ReplayedJournal = { name: header.name, base: header.base, tasks: new Map(), tornBytes, obsolete: true };
  if (typeof replayed !== "string") return skipped;
  const uncovered = uncoveredLine(lines, header, file);
  return uncovered === undefined
    ? skipped
    : `${replayed}; it names an older lockfile than the one beside it, but ${uncovered}, so it is kept`;
};

const replayRecords = (lines: readonly string[], header: Header): Omit<ReplayedJournal, "tornBytes"> | string => {
  const tasks = new Map<string, LockTask>();
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i]!;
    // A second header: two appends of one run wrote at once (a stop interrupting an append,
    // before the store made appends uninterruptible). Not replayed: the two batches could
    // land in either order, so a line after it may be older than one before it for the
    // same task, and replaying would undo the newer change.
    if (line === lines[0]) {
      return `line ${i + 1} repeats the header (line 1): two writes of one run ran at once, so its lines may not be in the order they were made`;
    }
    const parsed = parseLine(line, i + 1);
    if (typeof parsed === "string") return parsed;
    const entry = recordOf(parsed.record, i + 1, header);
    if (typeof entry === "string") return entry;
    tasks.delete(entry.id);
    tasks.set(entry.id, entry.task);
  }
  return { name: header.name, base: header.base, tasks, obsolete: false };
};
