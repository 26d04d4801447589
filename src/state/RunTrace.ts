// The run trace (`X.lock.json.lastrun`, local like the journal, never for git): which
// lockfile bytes the last run on this machine left, and when its creates could last have
// landed. It answers one question at the next run's start: "is this lockfile the one the
// last run left, or could it lack creates that run sent?" A lockfile restored from git
// (or replaced, or a lost journal) seconds after a create landed cannot know about it,
// and the service may not show that task to queries for a while (its visibility lag):
// the run then waits out that window with lookups before creating what it does not
// record (src/engine/Recovery.ts). Pure parts here; the store writes and reads the file.

/** What the trace file holds. */
export interface RunTrace {
  readonly v: 1;
  /** sha256 of the lockfile bytes the run last wrote in full (or found, before its first write). */
  readonly file: string;
  /** A journal was started over that file: its lines belong to the lockfile too. */
  readonly journal: boolean;
  /** When the run closed (its creates could have landed until then); null while it runs (or after a kill). */
  readonly until: number | null;
}

export const traceFileOf = (lockfilePath: string): string => `${lockfilePath}.lastrun`;

export const encodeTrace = (trace: RunTrace): string => `${JSON.stringify(trace)}\n`;

/** The trace in `text`, or undefined when absent or unreadable (then nothing is known). */
export const parseTrace = (text: string | undefined): RunTrace | undefined => {
  if (text === undefined) return undefined;
  try {
    const t = JSON.parse(text) as Partial<RunTrace>;
    if (t.v !== 1 || typeof t.file !== "string" || typeof t.journal !== "boolean") return undefined;
    if (t.until !== null && (typeof t.until !== "number" || !Number.isFinite(t.until))) return undefined;
    return { v: 1, file: t.file, journal: t.journal, until: t.until };
  } catch {
    return undefined;
  }
};

export interface FoundLockfile {
  /** sha256 of the lockfile's bytes now; undefined when there is no file. */
  readonly file: string | undefined;
  /** The base (file sha256) a journal found beside it names; undefined when there is none. */
  readonly journalBase: string | undefined;
}

/**
 * Until when the creates the lockfile may lack could have landed (ms), or undefined when
 * the lockfile is known to hold every create the last run sent: the trace names exactly
 * these file bytes (and, when that run started a journal, the journal over them is here).
 * No trace: nothing is known and nothing is assumed (a fresh clone, the first run, another
 * machine): undefined, as before this rule. A killed run (until null): up to `now`.
 */
export const mayLackCreatesUntil = (trace: RunTrace | undefined, found: FoundLockfile, now: number): number | undefined => {
  if (trace === undefined) return undefined;
  const sameFile = found.file === trace.file;
  const journalHere = !trace.journal || found.journalBase === trace.file;
  if (sameFile && journalHere) return undefined;
  return trace.until ?? now;
};
