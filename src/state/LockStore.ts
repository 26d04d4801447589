// The lockfile store the engine writes through: the whole lockfile in memory, every
// change made durable by appending the changed task lines to a journal (group commit:
// many puts, one write, one fsync), and the full file rewritten atomically only when the
// journal has grown past the file's size, at close, and at the first write over a
// version-1 or 2 file (which is then version 3). So the bytes written stay
// proportional to the changes, and a kill at any moment leaves a valid lockfile that
// holds every flushed change. A full write is streamed: task lines are encoded in
// chunks of about 1 MB, each written to the temp file before the next is made, so the
// file's whole text is never held (46 MB for 200,000 tasks). One run at a time per
// lockfile (RunLock).

import { type FileHandle, open, readFile, unlink } from "node:fs/promises";
import { dirname } from "node:path";
import { Context, Effect, Fiber, Layer, Queue, type Scope } from "effect";
import { type LockFile, type LockTask, LOCKFILE_VERSION } from "./LockFile.js";
import { DEFAULT_CHUNK_BYTES, encodeLockFileChunks, type KnownStringsOf } from "./LockfileText.js";
import { LockfileBusy, LockfileInvalid, LockfileWriteError } from "./LockfileError.js";
import { encodeJournalHeader, journalPathOf } from "./LockJournal.js";
import { loadLockState, type LockState, sha256Hex } from "./readLockFile.js";
import type { ForeignLine } from "./foreignLines.js";
import { acquireRunLock, type RunLockOptions } from "./RunLock.js";
import { encodeTrace, mayLackCreatesUntil, parseTrace, type RunTrace, traceFileOf } from "./RunTrace.js";
import { sameJson } from "./sameJson.js";
import { encodeTaskLine } from "./TaskLine.js";
import { type HeldRecord, TaskRecords } from "./TaskRecords.js";
import { fsyncDir, removeStaleTempFiles, writeFileAtomicChunks } from "./writeFileAtomic.js";
import { fsyncFd, writeFully, writeFullySync } from "../fs/durable.js";

export interface LockStoreStats {
  /** Bytes written to the lockfile and its journal since the store opened. */
  readonly bytesWritten: number;
  /** Write calls (journal appends and full-file writes). */
  readonly writes: number;
  readonly fsyncs: number;
  /** Full-file rewrites. */
  readonly compactions: number;
}

export interface LockStoreOptions extends RunLockOptions {
  /** Puts are made durable at most this long after they happen, even without flush. Default 200 ms. */
  readonly coalesceMs?: number;
  /** The journal is folded into the file once larger than max(file size, this). Default 64 KiB. */
  readonly minCompactBytes?: number;
  /** Keep the run trace (`X.lock.json.lastrun`, RunTrace.ts). Default true; off for `--emulate` (a fresh service each run). */
  readonly trace?: boolean;
  /** A full write encodes and writes about this many characters at a time. Default 1 MiB (tests make it small). */
  readonly chunkBytes?: number;
  /**
   * Strings the caller holds per task id (a run: its plan's ids and request hashes), made
   * once when the lockfile loads and dropped after: the loaded records use them where their
   * own values are equal, so each is held once (KnownStrings, TaskLine.ts).
   */
  readonly knownStrings?: () => KnownStringsOf;
  /**
   * `frozenSnapshot` decodes records as they are read once the store holds at least this
   * many as lines; below, it decodes each once, as `snapshot` does. Default `FROZEN_FROM`.
   */
  readonly frozenFrom?: number;
}

/**
 * From how many records held as lines `frozenSnapshot` decodes them as read. A run's end
 * reads each record in about twenty passes (plan diff, failure groups, the reports), so
 * decoding it at each read costs about twenty decodes where a snapshot costs one (about
 * 0.3 ms of CPU per task); a snapshot of 25,000 decoded records takes about 20 MB, one of
 * 200,000 about 150 MB at the highest point of the run.
 */
export const FROZEN_FROM = 25_000;

export interface LockStoreService {
  /** The lockfile's path. */
  readonly path: string;
  readonly get: (id: string) => Effect.Effect<LockTask | undefined>;
  /** A snapshot of every task (a copy: later puts do not change it). */
  readonly all: Effect.Effect<ReadonlyMap<string, LockTask>>;
  /**
   * Every task, without a copy: the store's own map, which later puts change. For a
   * reader that is done before the next put (a run's start checks over 100,000 records
   * would otherwise copy them each time).
   */
  readonly view: Effect.Effect<ReadonlyMap<string, LockTask>>;
  /** How many puts changed a record since the store opened: equal counts, the same records. */
  readonly changes: Effect.Effect<number>;
  /** The whole lockfile as data, as it would be written now. */
  readonly snapshot: Effect.Effect<LockFile>;
  /**
   * `snapshot`, its records decoded only as they are read (TaskRecords `frozen`) when the
   * store holds many as lines (`frozenFrom`): later puts do not change it, and a pass over
   * every record holds one at a time. For the passes of a run's end (supersessions, failure
   * groups, reports), which keep no record: decoding every held line at once for them was
   * the highest RSS of a 200,000-task run.
   */
  readonly frozenSnapshot: Effect.Effect<LockFile>;
  /** The service the lockfile's header named when it was opened (undefined: none recorded, or no file). */
  readonly recordedService: string | undefined;
  /** The file's lines of another manifest when it was opened (foreignLines.ts): kept, told by the run. */
  readonly foreignLines: readonly ForeignLine[];
  /**
   * Names the service in the header from the next durable write on (which then rewrites
   * the whole file, once). Called only after the run has checked the recorded one (src/run/serviceCheck.ts).
   */
  readonly setService: (service: string) => Effect.Effect<void>;
  /** Records a task in memory and queues it for the next durable write (within coalesceMs). */
  readonly put: (id: string, task: LockTask) => Effect.Effect<void>;
  /** Replaces a task by f(current); no-op returning undefined when the id is unknown. */
  readonly update: (id: string, f: (task: LockTask) => LockTask) => Effect.Effect<LockTask | undefined>;
  /** Makes every put so far durable now (one append, one fsync for all of them). */
  readonly flush: Effect.Effect<void, LockfileWriteError>;
  /**
   * Confirms the run lock is still ours, now, writing nothing (LockfileWriteError when it
   * is not): before a create whose intent was made durable earlier leaves, as `flush`
   * confirms it around every write.
   */
  readonly confirmLock: Effect.Effect<void, LockfileWriteError>;
  /**
   * The same check, synchronous: undefined while the run lock is ours, else the error. For
   * the one moment no effect can reach: a create's request, right before its bytes are
   * written to a connected socket (OmniClient's `lastCheck`), so a run frozen after
   * `confirmLock` and thawed after a takeover still sends nothing.
   */
  readonly confirmLockNow: () => LockfileWriteError | undefined;
  /** Writes the full lockfile atomically and drops the journal. */
  readonly compact: Effect.Effect<void, LockfileWriteError>;
  readonly stats: Effect.Effect<LockStoreStats>;
  /**
   * Completes when the run lock is found lost (taken over by another run, or this run
   * stalled past its stale limit): from then on nothing can be written, and the run must
   * stop (RunLockLost). Never completes for a store without a lock.
   */
  readonly lockLost: Effect.Effect<void>;
  /**
   * The lockfile is not the one the last run on this machine left (restored from git,
   * replaced, its journal lost; RunTrace.ts): it may lack creates that landed until this
   * time (ms). Undefined: it holds every create that run sent, or nothing is known.
   */
  readonly mayLackCreatesUntil: number | undefined;
}

interface Disk {
  /** Appends journal lines and fsyncs; a new journal starts with its header. */
  readonly append: (text: string) => Promise<void>;
  /**
   * Replaces the file with the chunks' text, atomically; `mayReplace` is asked once the
   * new bytes are durable, before the rename (false: nothing replaced, resolves false).
   */
  readonly writeFull: (chunks: Iterable<string>, mayReplace: () => Promise<boolean>) => Promise<boolean>;
  /** Infinity when the journal must not be appended to (it could not be removed after a full write). */
  readonly journalBytes: () => number;
  readonly fileBytes: () => number;
  /** A file in the current format exists: journal lines may be appended to it. */
  readonly fileCurrent: () => boolean;
  readonly stats: () => LockStoreStats;
  /** The run closed cleanly: the trace says so (with the time), when this run wrote it. */
  readonly finish: () => Promise<void>;
  readonly close: () => Promise<void>;
}

/**
 * Writes the run trace. Not fsynced (it is on the path of a create's intent): a trace
 * lost to a power cut leaves the previous one, which names bytes the file no longer
 * has (so the next run waits, the safe side), or a journal that is still there.
 */
const writeTrace = async (lockfilePath: string, trace: RunTrace): Promise<void> => {
  const handle = await open(traceFileOf(lockfilePath), "w");
  try {
    await writeFully(handle, Buffer.from(encodeTrace(trace), "utf8"), "the run trace");
  } finally {
    await handle.close();
  }
};

const liveDisk = (
  path: string,
  manifestName: string,
  loaded: { file: { sha256?: string; bytes: number } | undefined; journalBytes: number; fileVersion: number },
  keepTrace: boolean,
): Disk => {
  const journalPath = journalPathOf(path);
  let journal: FileHandle | undefined;
  let file = loaded.file;
  // A version-1 or 2 file is replaced by a full version-3 write before any append.
  let fileVersion = loaded.fileVersion;
  // A journal left by a killed run may end in a torn line: never append after it; the
  // store folds it into the file first (Infinity forces that).
  let journalSize = loaded.journalBytes > 0 ? Number.POSITIVE_INFINITY : 0;
  let counters = { bytesWritten: 0, writes: 0, fsyncs: 0, compactions: 0 };
  // The run trace (RunTrace.ts) is rewritten by this run from its first write on: after
  // each full write (naming the new bytes) and before each new journal (saying one exists).
  let traced = false;
  const trace = async (journalToo: boolean) => {
    if (!keepTrace) return;
    traced = true;
    await writeTrace(path, { v: 1, file: file!.sha256!, journal: journalToo, until: null });
  };
  const closeJournal = async () => {
    const handle = journal;
    journal = undefined;
    await handle?.close();
  };
  return {
    append: async (text) => {
      if (file === undefined || fileVersion !== LOCKFILE_VERSION || !Number.isFinite(journalSize)) {
        throw new Error("the journal needs a full write first");
      }
      const fresh = journalSize === 0;
      // The file is hashed only when a run first changes something (a run with nothing
      // to do never pays for it); under the run lock it is still the file we loaded.
      if (fresh && file.sha256 === undefined) file = { ...file, sha256: sha256Hex(await readFile(path)) };
      // Before the journal exists: a trace naming the file alone would vouch for it without the journal's lines.
      if (fresh) await trace(true);
      if (!journal) journal = await open(journalPath, "a");
      const data = Buffer.from(fresh ? encodeJournalHeader(manifestName, file.sha256!) + text : text, "utf8");
      try {
        // The append lands in the page cache at once; only the fsync waits for the disk.
        writeFullySync(journal.fd, data, "the lockfile's journal");
        await fsyncFd(journal.fd);
      } catch (error) {
        // A fragment may now end the journal: never append after it; the next durable
        // write is a full, atomic one.
        journalSize = Number.POSITIVE_INFINITY;
        throw error;
      }
      if (fresh) await fsyncDir(dirname(path)); // the new journal's folder entry must survive too
      journalSize += data.byteLength;
      counters = {
        ...counters,
        bytesWritten: counters.bytesWritten + data.byteLength,
        writes: counters.writes + 1,
        fsyncs: counters.fsyncs + (fresh ? 2 : 1),
      };
    },
    writeFull: async (chunks, mayReplace) => {
      const written = await writeFileAtomicChunks(path, chunks, mayReplace);
      if (written === undefined) return false;
      // From here the file holds everything; the journal (naming the old file) is obsolete,
      // and is skipped on load even if removing it fails or is cut short.
      file = { sha256: written.sha256, bytes: written.bytes };
      fileVersion = LOCKFILE_VERSION;
      counters = {
        bytesWritten: counters.bytesWritten + written.bytes,
        writes: counters.writes + 1,
        fsyncs: counters.fsyncs + 2,
        compactions: counters.compactions + 1,
      };
      if (journalSize > 0 || journal) {
        journalSize = Number.POSITIVE_INFINITY;
        await closeJournal();
        await unlink(journalPath).catch((error: NodeJS.ErrnoException) => {
          if (error.code !== "ENOENT") throw error;
        });
        await fsyncDir(dirname(path));
        journalSize = 0;
        counters = { ...counters, fsyncs: counters.fsyncs + 1 };
      }
      await trace(false);
      return true;
    },
    journalBytes: () => journalSize,
    fileBytes: () => file?.bytes ?? 0,
    fileCurrent: () => file !== undefined && fileVersion === LOCKFILE_VERSION,
    stats: () => counters,
    finish: async () => {
      if (traced && file?.sha256 !== undefined) {
        await writeTrace(path, { v: 1, file: file.sha256, journal: journalSize > 0, until: Date.now() });
      }
    },
    close: closeJournal,
  };
};

const memoryDisk = (): Disk => {
  let counters = { bytesWritten: 0, writes: 0, fsyncs: 0, compactions: 0 };
  return {
    append: async (text) => {
      counters = { ...counters, bytesWritten: counters.bytesWritten + Buffer.byteLength(text), writes: counters.writes + 1 };
    },
    writeFull: async (chunks, mayReplace) => {
      let bytes = 0;
      for (const chunk of chunks) bytes += Buffer.byteLength(chunk);
      if (!(await mayReplace())) return false;
      counters = {
        ...counters,
        bytesWritten: counters.bytesWritten + bytes,
        writes: counters.writes + 1,
        compactions: counters.compactions + 1,
      };
      return true;
    },
    journalBytes: () => 0,
    fileBytes: () => Number.MAX_SAFE_INTEGER,
    fileCurrent: () => true,
    stats: () => counters,
    finish: async () => undefined,
    close: async () => undefined,
  };
};

/** The store over an in-memory map and a Disk; shared by the live and the memory layers. */
const makeService = (
  path: string,
  manifestName: string,
  initial: LockState | undefined,
  disk: Disk,
  options: LockStoreOptions,
  /** Whether the run lock is still ours, checked now (false: stop writing); synchronous. */
  lockHeldNow: () => boolean,
  lockLost: Effect.Effect<void> = Effect.never,
  lacksUntil: number | undefined = undefined,
): Effect.Effect<LockStoreService, never, Scope.Scope> =>
  Effect.gen(function* () {
    // The loaded Map itself: a run over 100,000 finished tasks copies no record. A
    // downloaded record is held as its line once encoded for a write (TaskRecords.ts).
    const tasks = new TaskRecords(manifestName, (initial?.tasks as Map<string, HeldRecord> | undefined) ?? new Map());
    // Changed since the last durable write; last put per id wins, so a task changed
    // three times between flushes is written once.
    let pending = new Map<string, LockTask>();
    // The file on disk differs from `tasks` (beyond the journal): compact at close.
    let dirty = initial === undefined || initial.name !== manifestName;
    // The service the header names; `headerStale`: it changed, and the file must be
    // rewritten whole (a journal append cannot change line 1) before the next append.
    let service = initial?.service;
    let headerStale = false;
    const writeLock = yield* Effect.makeSemaphore(1);
    const wake = yield* Queue.sliding<void>(1);
    const minCompact = options.minCompactBytes ?? 64 * 1024;

    const toLockFile = (frozen = false): LockFile => ({
      lockfile_version: LOCKFILE_VERSION,
      name: manifestName,
      ...(service !== undefined ? { service } : {}),
      tasks: frozen && tasks.linesHeld() >= (options.frozenFrom ?? FROZEN_FROM) ? tasks.frozen() : Object.fromEntries(tasks),
    });

    const failure = (what: string) => (cause: unknown) =>
      new LockfileWriteError({
        path,
        cause,
        message: `cannot ${what} ${path}: ${(cause as Error)?.message ?? String(cause)}. Flushed changes are safe; fix the cause and run again.`,
      });

    const lockLostError = () =>
      new LockfileWriteError({
        path,
        cause: undefined,
        lockLost: true,
        message: `the run lock of ${path} was taken over by another run, or this run stalled past the lock's stale limit (frozen, suspended) so another run may be taking it over; stopping writes and creates so the two runs do not overwrite each other or pay twice.`,
      });
    const lockHeld = async (): Promise<boolean> => lockHeldNow();
    const guardLock = Effect.flatMap(Effect.promise(lockHeld), (held) => (!held ? Effect.fail(lockLostError()) : Effect.void));
    const confirmLockNow = (): LockfileWriteError | undefined => (lockHeldNow() ? undefined : lockLostError());

    // A write, once begun, is not interruptible (compactNow, flushNow): an interrupted
    // write would give the write permit back while its disk side went on, and the next
    // write (the stop's flush, the closing compaction) would run beside it: a second
    // journal header (a journal the next run refuses), or an old batch appended over the
    // file a compaction just wrote. A stop waits for the write in flight instead.
    // A full write streams the records of its start (encodeLockFileChunks: puts made
    // while it writes wait in `pending` for the next write) into a temp file, and the lock
    // is checked again between the encoding and writing (long for a large lockfile: a block
    // past the stale limit lets another run take over and open the journal) and the
    // rename, so a run taken over meanwhile does not replace the file.
    const compactNow = Effect.uninterruptible(Effect.suspend(() => {
      const chunks = encodeLockFileChunks(manifestName, tasks, service, options.chunkBytes ?? DEFAULT_CHUNK_BYTES);
      const header = service;
      const batch = pending;
      pending = new Map();
      return Effect.tryPromise({ try: () => disk.writeFull(chunks, lockHeld), catch: failure("write") }).pipe(
        Effect.flatMap((replaced) => (replaced ? Effect.void : Effect.fail(lockLostError()))),
        Effect.tap(() =>
          Effect.sync(() => {
            // A setService during the write names a header the file does not have yet.
            if (service !== header) return;
            dirty = false;
            headerStale = false;
          }),
        ),
        Effect.tapError(() => Effect.sync(() => restore(batch))),
      );
    }));

    // After a failed write, the batch must be written again by the next flush
    // (unless a newer put of the same id is already waiting).
    const restore = (batch: ReadonlyMap<string, LockTask>) => {
      for (const [id] of batch) if (!pending.has(id)) pending.set(id, tasks.get(id)!);
    };

    const flushNow = Effect.uninterruptible(Effect.suspend(() => {
      if (pending.size === 0 && !headerStale) return Effect.void;
      if (!disk.fileCurrent() || headerStale) return compactNow;
      const batch = pending;
      let text = "";
      for (const [id, task] of batch) {
        // The journal's line (encodeJournalRecord) is the file's: a downloaded record is held as it from now on.
        const line = encodeTaskLine(manifestName, id, task);
        tasks.keepLine(id, task, line);
        text += `${line}\n`;
      }
      // Amortised: folding the journal in costs one file size, paid only after the
      // journal itself has cost as much.
      if (disk.journalBytes() + Buffer.byteLength(text) > Math.max(disk.fileBytes(), minCompact)) return compactNow;
      pending = new Map();
      return Effect.tryPromise({ try: () => disk.append(text), catch: failure("append to the journal of") }).pipe(
        Effect.tapError(() => Effect.sync(() => restore(batch))),
      );
    }));

    // Checked again once the write is durable: a run frozen (SIGSTOP) during the write's
    // fsync and thawed after a takeover would otherwise send the create whose intent it
    // just flushed. The check is a read of the small owner file. The steps from here to
    // the request's bytes on the socket (effects, a socket handed over later, a connect)
    // are closed by `confirmLockNow`, which the client runs right before the write.
    // Every flush confirms the lock, even one with nothing left to write: with several
    // create workers, one worker's flush writes the intents of all (group commit), and
    // the others' flushes, finding nothing pending, are still their last check before
    // their creates leave. A late heartbeat alone does not fail it (`reclaim`, RunLock.ts).
    const flush = writeLock.withPermits(1)(Effect.zipRight(guardLock, Effect.zipRight(flushNow, guardLock)));
    const compact = writeLock.withPermits(1)(
      Effect.zipRight(
        guardLock,
        Effect.suspend(() => (pending.size === 0 && !dirty && disk.journalBytes() === 0 ? Effect.void : compactNow)),
      ),
    );

    let changeCount = 0;
    const put = (id: string, task: LockTask) =>
      Effect.sync(() => {
        const current = tasks.get(id);
        if (current !== undefined && sameJson(current, task)) return;
        changeCount++;
        tasks.set(id, task);
        pending.set(id, task);
        Queue.unsafeOffer(wake, undefined);
      });

    // Background group commit: puts are durable within coalesceMs even if nobody flushes.
    // A failure here is retried by the next flush, which reports it.
    const coalesce = Effect.forever(
      Queue.take(wake).pipe(
        Effect.zipRight(Effect.sleep(`${options.coalesceMs ?? 200} millis`)),
        Effect.zipRight(Effect.ignore(flush)),
      ),
    );
    const coalescer = yield* Effect.forkDaemon(coalesce);

    yield* Effect.addFinalizer(() =>
      Fiber.interrupt(coalescer).pipe(
        Effect.zipRight(compact),
        // Only after the final write, and only while the lock is ours (compact checked it).
        Effect.zipRight(Effect.tryPromise({ try: () => disk.finish(), catch: failure("write the run trace of") })),
        // A finalizer cannot fail; stderr keeps stdout clean for --json.
        Effect.catchAll((error) =>
          Effect.sync(() =>
            process.stderr.write(`omnibatch: ${error.message} (the journal ${journalPathOf(path)} keeps what was flushed)\n`),
          ),
        ),
        Effect.zipRight(Effect.promise(() => disk.close())),
      ),
    );

    // A journal found at open (a killed run) is folded in at once, so later appends never
    // follow a torn line.
    if (disk.journalBytes() > 0) yield* Effect.ignore(compact);

    return {
      path,
      get: (id) => Effect.sync(() => tasks.get(id)),
      all: Effect.sync(() => new Map(tasks)),
      view: Effect.sync((): ReadonlyMap<string, LockTask> => tasks),
      changes: Effect.sync(() => changeCount),
      snapshot: Effect.sync(() => toLockFile()),
      frozenSnapshot: Effect.sync(() => toLockFile(true)),
      recordedService: initial?.service,
      foreignLines: initial?.foreign ?? [],
      setService: (next) =>
        Effect.sync(() => {
          if (next === service) return;
          service = next;
          headerStale = true;
          dirty = true;
        }),
      put,
      update: (id, f) =>
        Effect.suspend(() => {
          const current = tasks.get(id);
          if (current === undefined) return Effect.succeed(undefined);
          const next = f(current);
          return Effect.as(put(id, next), next);
        }),
      flush,
      confirmLock: guardLock,
      confirmLockNow,
      compact,
      stats: Effect.sync(disk.stats),
      lockLost,
      mayLackCreatesUntil: lacksUntil,
    } satisfies LockStoreService;
  });

export class LockStore extends Context.Tag("omnibatch/LockStore")<LockStore, LockStoreService>() {
  /**
   * Opens the lockfile at `path` for a run, for the scope: takes the run lock (LockfileBusy
   * names the holder), loads file + journal (LockfileInvalid leaves them untouched), and at
   * close writes the full file, drops the journal and releases the lock.
   */
  static open = (
    path: string,
    manifestName: string,
    options: LockStoreOptions = {},
  ): Effect.Effect<LockStoreService, LockfileInvalid | LockfileBusy | LockfileWriteError, Scope.Scope> =>
    Effect.gen(function* () {
      const lock = yield* acquireRunLock(path, options);
      const loaded = yield* Effect.tryPromise({
        try: async () => {
          await removeStaleTempFiles(path);
          const trace = options.trace === false ? undefined : parseTrace(await readFile(traceFileOf(path), "utf8").catch(() => undefined));
          const state = await loadLockState(path, { hash: trace !== undefined, ...(options.knownStrings ? { known: options.knownStrings() } : {}) });
          const lacksUntil = mayLackCreatesUntil(trace, { file: state.file?.sha256, journalBase: state.journalBase }, Date.now());
          return { ...state, lacksUntil };
        },
        catch: (error) =>
          error instanceof LockfileInvalid
            ? error
            : new LockfileWriteError({ path, cause: error, message: `cannot read ${path}: ${String(error)}` }),
      });
      const disk = liveDisk(path, manifestName, { ...loaded, fileVersion: loaded.lock?.fileVersion ?? LOCKFILE_VERSION }, options.trace !== false);
      return yield* makeService(path, manifestName, loaded.lock, disk, options, lock.confirmNow, lock.whenLost, loaded.lacksUntil);
    });

  /** The live layer: LockStore.open for the layer's lifetime. */
  static layer = (path: string, manifestName: string, options: LockStoreOptions = {}) =>
    Layer.scoped(LockStore, LockStore.open(path, manifestName, options));

  /** A store in memory only (no files, no lock), for tests of code that uses the store. */
  static memory = (manifestName: string, initial?: LockFile, options: Pick<LockStoreOptions, "frozenFrom"> = {}) =>
    Layer.scoped(
      LockStore,
      makeService(
        `(memory:${manifestName})`,
        manifestName,
        {
          name: initial?.name ?? manifestName,
          fileVersion: LOCKFILE_VERSION,
          ...(initial?.service !== undefined ? { service: initial.service } : {}),
          tasks: new Map(Object.entries(initial?.tasks ?? {})),
        },
        memoryDisk(),
        options,
        () => true,
      ),
    );

  /** Runs `use` with a store open on `path` and closes it after (Promise-friendly for tests and scripts). */
  static use = <A, E>(
    path: string,
    manifestName: string,
    use: (store: LockStoreService) => Effect.Effect<A, E>,
    options: LockStoreOptions = {},
  ): Effect.Effect<A, E | LockfileInvalid | LockfileBusy | LockfileWriteError> =>
    Effect.scoped(Effect.flatMap(LockStore.open(path, manifestName, options), use));
}
