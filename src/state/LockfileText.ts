// The lockfile's bytes, both ways. Version 3 (written) and 2 (read; the same layout, its
// task lines decoded by version 2's rules, TaskLine.ts): JSON Lines, a header line that
// changes only with the manifest's name, then one line per task in order of id, each
// after a blank line, so a run's diff has one line per task it changed and two branches
// that changed different tasks (neighbours included) merge in git without conflict.
// The header also names the service the tasks were created at (`service`, optional: files
// written before it was recorded have none and get it on their next write).
// Version 1 (read only): one pretty-printed JSON document. Pure; a damaged file is
// described with its line.

import type { LockFile, LockTask } from "./LockFile.js";
import { LOCKFILE_VERSION } from "./LockFile.js";
import { decodeTaskLine, encodeTaskLine, type KnownStrings, lineRuleProblem, type LineRules, type TaskLine } from "./TaskLine.js";
import { FOREIGN_NAMED, type ForeignLine, isForeign, unknownJobProblem } from "./foreignLines.js";
import { recordPathProblem } from "./recordPaths.js";
import { isPlainTaskLine } from "./taskLineCheck.js";
import { type HeldRecord, TaskRecords } from "./TaskRecords.js";
import { lockFileProblems, lockSchemaProblems } from "./validateLockFile.js";

/** The header line (no newline): the same bytes on every write while the name and the service stay. */
export const encodeHeader = (name: string, service?: string): string =>
  JSON.stringify({ lockfile_version: LOCKFILE_VERSION, name, ...(service !== undefined ? { service } : {}) });

/** Task lines per chunk of `encodeLockFileChunks` unless asked otherwise (about 1 MB of text). */
export const DEFAULT_CHUNK_BYTES = 1 << 20;

/**
 * The whole file (current version) for `tasks` (any order in; sorted by id out), as
 * chunks of about `chunkBytes` characters each, made one at a time as they are asked for:
 * a writer that writes each chunk before asking for the next holds one chunk, never the
 * file's text (46 MB for 200,000 tasks). The records are those of the call (the map may
 * change while the chunks are read: the chunks are still the file of that moment). The
 * chunks joined are exactly `encodeLockFile`'s text.
 */
export const encodeLockFileChunks = (
  name: string,
  tasks: ReadonlyMap<string, LockTask> | Readonly<Record<string, LockTask>> | TaskRecords,
  service?: string,
  chunkBytes = DEFAULT_CHUNK_BYTES,
): Iterable<string> => {
  // The store's records (TaskRecords) as held: a line kept for a record is written as it
  // is, and a downloaded record encoded here is kept as its line from now on (the write
  // makes it durable; the records are the call's, so a record put since is not replaced).
  const records = tasks instanceof TaskRecords ? tasks : undefined;
  const entries: [string, HeldRecord][] = records ? [...records.heldEntries()] : tasks instanceof Map ? [...tasks] : Object.entries(tasks);
  // Code-unit order: the same on every machine and locale.
  entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const header = `${encodeHeader(name, service)}\n`;
  return {
    *[Symbol.iterator]() {
      let chunk = header;
      for (let i = 0; i < entries.length; i++) {
        const [id, held] = entries[i]!;
        let line: string;
        if (typeof held === "string") line = records!.name === name ? held : encodeTaskLine(name, id, records!.decodeLine(held));
        else {
          line = encodeTaskLine(name, id, held);
          if (records !== undefined && records.name === name) records.keepLine(id, held, line);
        }
        chunk += `\n${line}\n`;
        // Each chunk is left for the collector once yielded (the entry stays: the records are the call's).
        if (chunk.length >= chunkBytes) {
          yield chunk;
          chunk = "";
        }
      }
      if (chunk.length > 0) yield chunk;
    },
  };
};

/** The whole file (current version) for `tasks` (any order in; sorted by id out), as one string. */
export const encodeLockFile = (
  name: string,
  tasks: ReadonlyMap<string, LockTask> | Readonly<Record<string, LockTask>>,
  service?: string,
): string => {
  const entries = tasks instanceof Map ? [...tasks] : Object.entries(tasks);
  // Code-unit order: the same on every machine and locale.
  entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const parts = new Array<string>(entries.length + 1);
  parts[0] = `${encodeHeader(name, service)}\n`;
  for (let i = 0; i < entries.length; i++) parts[i + 1] = `\n${encodeTaskLine(name, entries[i]![0], entries[i]![1])}\n`;
  return parts.join("");
};

/** A parsed lockfile: its name, version on disk and tasks (a Map: loading copies nothing twice). */
export interface ParsedLockFile {
  readonly name: string;
  readonly version: 1 | LineRules;
  /** The service the header names (version 2 and later; absent in older files). */
  readonly service?: string;
  readonly tasks: Map<string, LockTask>;
  /** Lines of another manifest (foreignLines.ts), in order; absent when there are none. */
  readonly foreign?: readonly ForeignLine[];
}

const lineCol = (text: string, position: number): string => {
  const before = text.slice(0, position);
  const line = before.split("\n").length;
  return `line ${line}, column ${position - before.lastIndexOf("\n")}`;
};

const jsonProblem = (text: string, error: Error): string => {
  const position = /position (\d+)/.exec(error.message);
  const where = position ? ` at ${lineCol(text, Number(position[1]))}` : "";
  return `not valid JSON${where} (${error.message.split("\n")[0]})`;
};

/** Up to this many damaged lines are described (all are counted). */
const MAX_LINE_PROBLEMS = 5;

/** The caller's strings for a task id (KnownStrings, TaskLine.ts), or undefined. */
export type KnownStringsOf = (id: string) => KnownStrings | undefined;

/**
 * Parses a lockfile's text; a string result says what is wrong (with line numbers) and
 * is meant to follow "lockfile X is damaged: ". Versions 1, 2 and 3 are read. `known`:
 * strings the caller holds per id, shared by the decoded records where equal (versions 2
 * and 3; checking is the same with or without).
 */
export const parseLockFileText = (text: string, known?: KnownStringsOf): ParsedLockFile | string => {
  const firstEnd = text.indexOf("\n");
  const first = firstEnd < 0 ? text : text.slice(0, firstEnd);
  let header: unknown;
  try {
    header = JSON.parse(first);
  } catch {
    header = undefined; // a version-1 document spans lines
  }
  const version = (header as { lockfile_version?: unknown } | undefined)?.lockfile_version;
  if (typeof version === "number" && version > LOCKFILE_VERSION) {
    return `line 1: written by a newer omnibatch (lockfile_version ${version}; this one reads 1 to ${LOCKFILE_VERSION}): upgrade omnibatch`;
  }
  if (version === 2 || version === LOCKFILE_VERSION) return parseV2(text, header, version, known);
  return parseV1(text);
};

const parseV1 = (text: string): ParsedLockFile | string => {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    return jsonProblem(text, error as Error);
  }
  const problems = lockFileProblems(data);
  if (problems.length > 0) return `does not match the lockfile schema (version 1): ${problems.join("; ")}`;
  const lock = data as LockFile;
  const foreign: ForeignLine[] = [];
  for (const [id, task] of Object.entries(lock.tasks)) {
    const pathProblem = recordPathProblem(task);
    if (pathProblem !== undefined) return `does not match the lockfile format (version 1): task ${id}: ${pathProblem}`;
    // The line is looked up (a scan of the text) only for those the warning names.
    if (isForeign(lock.name, id, task.job)) foreign.push({ line: foreign.length < FOREIGN_NAMED ? lineOfKey(text, id) : 0, id, job: task.job });
  }
  return { name: lock.name, version: 1, tasks: new Map(Object.entries(lock.tasks)), ...(foreign.length > 0 ? { foreign } : {}) };
};

/** The line of a version-1 document on which the task `id` begins (its key), or 0. */
const lineOfKey = (text: string, id: string): number => {
  const at = text.indexOf(`${JSON.stringify(id)}:`);
  return at < 0 ? 0 : text.slice(0, at).split("\n").length;
};

/** The number of the first line of `text` whose task id is `id` (a line that parses, with that id). */
const firstLineOf = (text: string, id: string): number => {
  let lineNo = 0;
  let start = 0;
  while (start < text.length) {
    lineNo++;
    const end = text.indexOf("\n", start);
    const line = end < 0 ? text.slice(start) : text.slice(start, end);
    start = end < 0 ? text.length : end + 1;
    if (lineNo === 1 || !line.includes(id)) continue;
    try {
      if ((JSON.parse(line) as { id?: unknown } | null)?.id === id) return lineNo;
    } catch {
      // not this one
    }
  }
  return lineNo;
};

/** Version 2 and later: a header line, then task lines decoded by the header's version's rules. */
const parseV2 = (text: string, header: unknown, version: LineRules, known?: KnownStringsOf): ParsedLockFile | string => {
  const headerProblems = lockSchemaProblems("header", header);
  if (headerProblems.length > 0) return `line 1 is not a lockfile header: ${headerProblems.join("; ")}`;
  const { name, service } = header as { name: string; service?: string };
  const tasks = new Map<string, LockTask>();
  const foreign: ForeignLine[] = [];
  const problems: string[] = [];
  let damaged = 0;
  const problem = (line: number, what: string) => {
    damaged++;
    if (problems.length < MAX_LINE_PROBLEMS) problems.push(`line ${line}: ${what}`);
  };
  let lineNo = 1;
  let start = text.indexOf("\n") + 1;
  while (start > 0 && start < text.length) {
    lineNo++;
    const end = text.indexOf("\n", start);
    const line = end < 0 ? text.slice(start) : text.slice(start, end);
    start = end < 0 ? text.length : end + 1;
    if (line.length === 0 || line.trim() === "") continue;
    if (/^(<{7}|={7}|>{7}|\|{7})/.test(line)) {
      problem(lineNo, "a git merge conflict marker: resolve the conflict (keep one line per task id) and remove the markers");
      continue;
    }
    let data: unknown;
    try {
      data = JSON.parse(line);
    } catch (error) {
      problem(lineNo, `not valid JSON (${(error as Error).message.split("\n")[0]})`);
      continue;
    }
    // The usual line is checked by hand (taskLineCheck.ts); any other by the schema, which explains.
    const lineProblems = isPlainTaskLine(data) ? [] : lockSchemaProblems("taskLine", data, 3);
    const ruleProblem = lineProblems.length > 0 ? undefined : lineRuleProblem(data as TaskLine, version);
    if (ruleProblem !== undefined) lineProblems.push(ruleProblem);
    if (lineProblems.length > 0) {
      const id = (data as { id?: unknown } | null)?.id;
      problem(lineNo, `${typeof id === "string" ? `task ${id}: ` : ""}${lineProblems.join("; ")}`);
      continue;
    }
    const jobProblem = unknownJobProblem(name, data as TaskLine);
    if (jobProblem !== undefined) {
      problem(lineNo, jobProblem);
      continue;
    }
    const { id, task } = decodeTaskLine(name, data as TaskLine, version, known?.((data as TaskLine).id));
    // Paths that would lead out of the outputs folder or store prefix (recordPaths.ts).
    const pathProblem = recordPathProblem(task);
    if (pathProblem !== undefined) {
      problem(lineNo, `task ${id}: ${pathProblem}`);
      continue;
    }
    // A second map of every id to its line cost 0.1 s and several MB at 100,000 tasks:
    // the first line is looked for only when an id comes again (a damaged file). One
    // lookup per line: an id seen before leaves the size as it was (the file is then
    // reported damaged, whatever the map holds).
    const size = tasks.size;
    tasks.set(id, task);
    if (tasks.size === size) {
      problem(lineNo, `task ${id} appears again (first on line ${firstLineOf(text, id)})`);
      continue;
    }
    // A line of another manifest (foreignLines.ts): kept, and told with its line.
    if (isForeign(name, id, task.job)) foreign.push({ line: lineNo, id, job: task.job });
  }
  if (damaged > 0) {
    const more = damaged > problems.length ? `; ... and ${damaged - problems.length} more damaged line(s)` : "";
    return `does not match the lockfile format (version ${version}): ${problems.join("; ")}${more}`;
  }
  return { name, version, ...(service !== undefined ? { service } : {}), tasks, ...(foreign.length > 0 ? { foreign } : {}) };
};
