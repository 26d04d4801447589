// Reads a lockfile as plan, status, report and the store see it: the file (version 1, 2
// or 3), with its pending journal replayed over it (read-only), checked against the schema.
// A damaged file is reported with its line, what is wrong and how to recover, and is
// never touched.

import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { type LockFile, type LockTask, LOCKFILE_VERSION } from "./LockFile.js";
import type { ForeignLine } from "./foreignLines.js";
import { lockfileInvalid, LockfileInvalid } from "./LockfileError.js";
import { type KnownStringsOf, parseLockFileText } from "./LockfileText.js";
import { journalPathOf, replayJournal } from "./LockJournal.js";

export const sha256Hex = (bytes: Uint8Array | string): string => createHash("sha256").update(bytes).digest("hex");

/** The raw contents found on disk: the file (with the sha256 of its bytes) and the journal. */
export interface LockFileTexts {
  /** sha256 of the file's bytes: needed only when there is a journal. */
  readonly file?: { readonly text: string; readonly sha256?: string };
  readonly journal?: string;
}

/** What file and journal hold together, as the store keeps it. */
export interface LockState {
  readonly name: string;
  /** Format version of the file on disk (the current one when there is only a journal). */
  readonly fileVersion: 1 | 2 | 3;
  /** The service the file's header names, when it names one. */
  readonly service?: string;
  readonly tasks: Map<string, LockTask>;
  /** The file's lines of another manifest (foreignLines.ts); absent when none. */
  readonly foreign?: readonly ForeignLine[];
}

/**
 * The lockfile the texts describe, or the reason it is invalid; undefined when there is
 * neither file nor journal. Pure: the core of readLockFile and of the store's load.
 */
export const parseLockState = (path: string, texts: LockFileTexts, known?: KnownStringsOf): LockState | undefined | LockfileInvalid => {
  const { file, journal: journalText } = texts;
  if (file === undefined && journalText === undefined) return undefined;
  let base: LockState | undefined;
  if (file !== undefined) {
    const parsed = parseLockFileText(file.text, known);
    if (typeof parsed === "string") return lockfileInvalid(path, parsed);
    base = {
      name: parsed.name,
      fileVersion: parsed.version,
      ...(parsed.service !== undefined ? { service: parsed.service } : {}),
      tasks: parsed.tasks,
      ...(parsed.foreign !== undefined ? { foreign: parsed.foreign } : {}),
    };
  }
  if (journalText === undefined) return base;
  const journalPath = journalPathOf(path);
  // Checked against the file first: a journal written for an older version of the file,
  // which has since been rewritten with everything the journal held, is skipped (replaying
  // it would undo newer changes), even when damaged if the file covers all it holds.
  const journal = replayJournal(journalText, file && base && { sha256: file.sha256 ?? sha256Hex(file.text), tasks: base.tasks });
  if (typeof journal === "string") return lockfileInvalid(journalPath, `journal ${journal}`);
  if (journal.obsolete) return base;
  const tasks = base?.tasks ?? new Map<string, LockTask>();
  for (const [id, task] of journal.tasks) tasks.set(id, task);
  return {
    name: base?.name ?? journal.name,
    fileVersion: base?.fileVersion ?? LOCKFILE_VERSION,
    ...(base?.service !== undefined ? { service: base.service } : {}),
    tasks,
    ...(base?.foreign !== undefined ? { foreign: base.foreign } : {}),
  };
};

const readIfPresent = async (path: string): Promise<string | undefined> => {
  try {
    return await readFile(path, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return undefined;
    throw lockfileInvalid(path, `cannot be read (${code ?? (error as Error).message})`);
  }
};

export interface LoadedLockState {
  readonly lock: LockState | undefined;
  /** Size of the file in bytes, and its sha256 when a journal had to be checked against it. */
  readonly file: { readonly bytes: number; readonly sha256?: string } | undefined;
  /** Size of the journal, 0 when there is none. */
  readonly journalBytes: number;
  /** The file sha256 the journal's header names (undefined: no journal, or no readable header). */
  readonly journalBase?: string;
}

const journalBaseOf = (text: string | undefined): string | undefined => {
  if (text === undefined) return undefined;
  try {
    const base = (JSON.parse(text.slice(0, Math.max(0, text.indexOf("\n")))) as { base?: unknown }).base;
    return typeof base === "string" ? base : undefined;
  } catch {
    return undefined;
  }
};

/**
 * Reads file and journal (changing nothing); rejects with LockfileInvalid when damaged.
 * `hash`: compute the file's sha256 even without a journal (the run trace compares it).
 * `known`: strings the caller holds per task id, shared by the records where equal (KnownStrings).
 */
export const loadLockState = async (
  path: string,
  options: { readonly hash?: boolean; readonly known?: KnownStringsOf } = {},
): Promise<LoadedLockState> => {
  const fileText = await readIfPresent(path);
  const journalText = await readIfPresent(journalPathOf(path));
  // Hashing a large file costs time: only done when a journal (or the run trace) must be matched to it.
  const sha256 = fileText !== undefined && (journalText !== undefined || options.hash === true) ? sha256Hex(fileText) : undefined;
  const result = parseLockState(
    path,
    {
      ...(fileText !== undefined ? { file: { text: fileText, ...(sha256 ? { sha256 } : {}) } } : {}),
      ...(journalText !== undefined ? { journal: journalText } : {}),
    },
    options.known,
  );
  if (result instanceof LockfileInvalid) throw result;
  return {
    lock: result,
    file: fileText === undefined ? undefined : { bytes: Buffer.byteLength(fileText), ...(sha256 ? { sha256 } : {}) },
    journalBytes: journalText === undefined ? 0 : Buffer.byteLength(journalText),
    ...(journalBaseOf(journalText) !== undefined ? { journalBase: journalBaseOf(journalText)! } : {}),
  };
};

/** The in-memory lockfile of a loaded state (tasks as a record, as plan, status and report read it). */
export const toLockFile = (state: LockState): LockFile => ({
  lockfile_version: LOCKFILE_VERSION,
  name: state.name,
  ...(state.service !== undefined ? { service: state.service } : {}),
  tasks: Object.fromEntries(state.tasks),
  ...(state.foreign !== undefined ? { foreign: state.foreign } : {}),
});

/**
 * The lockfile at `path` (journal applied), or undefined when there is none.
 * Rejects with LockfileInvalid (exit 2) when it is damaged or does not match the schema.
 */
export const readLockFile = async (path: string): Promise<LockFile | undefined> => {
  const { lock } = await loadLockState(path);
  return lock === undefined ? undefined : toLockFile(lock);
};
