// One run at a time per lockfile: a folder `X.lock.json.running/` made with mkdir (atomic
// on every file system) holding an owner file {pid, host, started}, its mtime refreshed as
// a heartbeat. A lock whose heartbeat stopped, or whose pid is dead on this host, was left
// by a killed run and is taken over, under a second guard folder so two runs that both
// find it stale cannot both take it. The heartbeat beats in a worker thread of its own:
// a run whose event loop is busy for longer than the stale limit (a 100,000-task start on
// a loaded machine) is alive and keeps its lock; a frozen process (SIGSTOP, a suspended
// machine) stops every thread, so its heartbeat stops and the lock goes stale.

import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { mkdir, readFile, rename, rm, stat, utimes, writeFile } from "node:fs/promises";
import { hostname } from "node:os";
import { join } from "node:path";
import { Worker } from "node:worker_threads";
import { Deferred, Effect, Exit, Schedule, type Scope } from "effect";
import { LockfileBusy, LockfileWriteError } from "./LockfileError.js";

export interface RunLockHolder {
  readonly pid: number;
  readonly host: string;
  /** Unix ms. */
  readonly started: number;
  readonly token: string;
}

export interface RunLockOptions {
  /** A lock whose heartbeat is older than this is stale. Default 30 s. */
  readonly staleMs?: number;
  /** How often the holder refreshes its heartbeat. Default staleMs / 6. */
  readonly heartbeatMs?: number;
}

export interface RunLockStatus {
  readonly holder: RunLockHolder | undefined;
  /** Unix ms of the last heartbeat. */
  readonly heartbeat: number;
  readonly stale: boolean;
}

export const runLockPathOf = (lockfilePath: string): string => `${lockfilePath}.running`;

const DEFAULT_STALE_MS = 30_000;

const pidAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
};

const readHolder = async (dir: string): Promise<RunLockHolder | undefined> => {
  try {
    const data = JSON.parse(await readFile(join(dir, "owner.json"), "utf8")) as RunLockHolder;
    return typeof data.pid === "number" && typeof data.host === "string" ? data : undefined;
  } catch {
    return undefined;
  }
};

/** The owner file's token, read synchronously (before every flush: one small read, no awaits). */
const holderTokenSync = (dir: string): string | undefined => {
  try {
    const data = JSON.parse(readFileSync(join(dir, "owner.json"), "utf8")) as Partial<RunLockHolder>;
    return typeof data.token === "string" ? data.token : undefined;
  } catch {
    return undefined;
  }
};

/**
 * The heartbeat, run in a worker thread so that the run's own busy event loop cannot
 * starve it (plain CommonJS text: the worker loads no project module and no loader).
 * Shares with the run: [0] when the heartbeat last reached the lock folder (Unix ms),
 * [1] 1 once the lock is found lost. Each beat: the owner file must still name this run,
 * and the last beat must be within the stale limit (a beat after a freeze comes too
 * late: another run may be taking the lock over right now, and refreshing could hide
 * that from both); then the folder's mtime is refreshed.
 */
const HEARTBEAT_WORKER = `
const { workerData, parentPort } = require("node:worker_threads");
const { readFileSync, utimesSync } = require("node:fs");
const { join } = require("node:path");
const { dir, token, staleMs, every, shared } = workerData;
const state = new BigInt64Array(shared);
let timer;
const lose = () => {
  clearInterval(timer);
  if (Atomics.exchange(state, 1, 1n) === 0n) parentPort.postMessage("lost");
};
const beat = () => {
  if (Atomics.load(state, 1) !== 0n) return clearInterval(timer);
  let owner;
  try {
    owner = JSON.parse(readFileSync(join(dir, "owner.json"), "utf8")).token;
  } catch {}
  if (owner !== token) return lose();
  const now = Date.now();
  if (now - Number(Atomics.load(state, 0)) > staleMs) return lose();
  try {
    utimesSync(dir, now / 1000, now / 1000);
    if (BigInt(now) > Atomics.load(state, 0)) Atomics.store(state, 0, BigInt(now));
  } catch {}
};
timer = setInterval(beat, every);
`;

/** Who holds the run lock of `lockfilePath`, if anyone (status uses this; it changes nothing). */
export const inspectRunLock = async (
  lockfilePath: string,
  options: RunLockOptions = {},
  now: number = Date.now(),
): Promise<RunLockStatus | undefined> => {
  const dir = runLockPathOf(lockfilePath);
  let mtime: number;
  try {
    mtime = (await stat(dir)).mtimeMs;
  } catch {
    return undefined;
  }
  const holder = await readHolder(dir);
  const staleMs = options.staleMs ?? DEFAULT_STALE_MS;
  const deadHere = holder !== undefined && holder.host === hostname() && !pidAlive(holder.pid);
  return { holder, heartbeat: mtime, stale: deadHere || now - mtime > staleMs };
};

const describeHolder = (holder: RunLockHolder | undefined): string =>
  holder
    ? `pid ${holder.pid} on ${holder.host}, running since ${new Date(holder.started).toISOString()}`
    : "a run that is still starting";

const busy = (lockfilePath: string, holder: RunLockHolder | undefined): LockfileBusy =>
  new LockfileBusy({
    path: lockfilePath,
    holder: holder && { pid: holder.pid, host: holder.host, started: holder.started },
    message:
      `lockfile ${lockfilePath} is in use by another run (${describeHolder(holder)}). ` +
      `Wait for it to finish; a lock left by a killed run is taken over automatically once its ` +
      `heartbeat is older than 30 s (lock folder: ${runLockPathOf(lockfilePath)}).`,
  });

const mkdirOnce = async (dir: string): Promise<boolean> => {
  try {
    await mkdir(dir);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw error;
  }
};

const tryAcquire = async (lockfilePath: string, options: RunLockOptions): Promise<RunLockHolder | LockfileBusy> => {
  const dir = runLockPathOf(lockfilePath);
  const me: RunLockHolder = { pid: process.pid, host: hostname(), started: Date.now(), token: randomBytes(8).toString("hex") };
  // The lock folder appears with its owner already inside (made under a temporary name,
  // then renamed into place), so no run can ever see a lock without an owner: a run killed
  // while taking the lock leaves either nothing or a complete one. rename() replaces only
  // an empty folder (an ownerless lock from an older version); a held lock is never empty.
  const place = async (): Promise<boolean> => {
    const temp = `${dir}.${me.token}.tmp`;
    await mkdir(temp);
    try {
      await writeFile(join(temp, "owner.json"), `${JSON.stringify(me)}\n`);
      await rename(temp, dir);
      return true;
    } catch (error) {
      await rm(temp, { recursive: true, force: true });
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "ENOTEMPTY" || code === "EEXIST" || code === "ENOTDIR") return false;
      throw error;
    }
  };
  if (await place()) return me;
  const seen = await inspectRunLock(lockfilePath, options);
  if (seen && !seen.stale) return busy(lockfilePath, seen.holder);
  // Stale: take it over under a guard, re-checking inside that nobody else did first.
  const guard = `${dir}.takeover`;
  if (!(await mkdirOnce(guard))) {
    // A guard left by a run killed in the middle of a takeover. Replacing it must be done
    // by one run only: whoever makes the claim folder checks again, inside it, that the
    // guard is still the stale one (a run that replaced it did so while holding the claim).
    const staleMs = options.staleMs ?? DEFAULT_STALE_MS;
    const guardIsStale = () => stat(guard).then((s) => Date.now() - s.mtimeMs > staleMs, () => false);
    if (!(await guardIsStale())) return busy(lockfilePath, seen?.holder);
    const claimDir = `${guard}.claim`;
    if (!(await mkdirOnce(claimDir))) return busy(lockfilePath, seen?.holder);
    try {
      if (!(await guardIsStale())) return busy(lockfilePath, seen?.holder);
      await rm(guard, { recursive: true, force: true });
      if (!(await mkdirOnce(guard))) return busy(lockfilePath, seen?.holder);
    } finally {
      await rm(claimDir, { recursive: true, force: true });
    }
  }
  try {
    const again = await inspectRunLock(lockfilePath, options);
    if (again && (!again.stale || again.holder?.token !== seen?.holder?.token)) return busy(lockfilePath, again.holder);
    await rm(dir, { recursive: true, force: true });
    if (!(await place())) return busy(lockfilePath, (await inspectRunLock(lockfilePath, options))?.holder);
    return me;
  } finally {
    await rm(guard, { recursive: true, force: true });
  }
};

const writeError = (lockfilePath: string, what: string) => (cause: unknown) =>
  new LockfileWriteError({
    path: lockfilePath,
    cause,
    message: `cannot ${what} for ${lockfilePath}: ${(cause as Error)?.message ?? String(cause)}`,
  });

/**
 * Holds the run lock of `lockfilePath` for the scope: fails with LockfileBusy naming the
 * holder, heartbeats while held, releases on close. `lost` turns true if another run took
 * the lock over (our heartbeat stalled past the stale limit): the holder must stop writing.
 * `confirm` checks it now (owner file re-read, heartbeat age); the store calls it before
 * every write, so a run thawed after a takeover never flushes a create's intent.
 */
export const acquireRunLock = (
  lockfilePath: string,
  options: RunLockOptions = {},
): Effect.Effect<
  {
    readonly holder: RunLockHolder;
    readonly lost: () => boolean;
    readonly confirm: () => Promise<boolean>;
    /** Completes as soon as the lock is found lost (by the heartbeat or a confirm). */
    readonly whenLost: Effect.Effect<void>;
  },
  LockfileBusy | LockfileWriteError,
  Scope.Scope
> =>
  Effect.gen(function* () {
    const dir = runLockPathOf(lockfilePath);
    const acquired = yield* Effect.acquireRelease(
      Effect.tryPromise({ try: () => tryAcquire(lockfilePath, options), catch: writeError(lockfilePath, "take the run lock") }),
      (result) =>
        result instanceof LockfileBusy
          ? Effect.void
          : Effect.promise(async () => {
              // Only remove the lock if it is still ours.
              if ((await readHolder(dir))?.token === result.token) await rm(dir, { recursive: true, force: true });
            }),
    );
    if (acquired instanceof LockfileBusy) return yield* Effect.fail(acquired);
    const holder = acquired;
    const staleMs = options.staleMs ?? DEFAULT_STALE_MS;
    let lost = false;
    const lostSignal = yield* Deferred.make<void>();
    const markLost = () => {
      lost = true;
      Deferred.unsafeDone(lostSignal, Exit.void);
    };
    // Shared with the heartbeat's thread: when it last reached the lock folder, and whether the lock is lost.
    const shared = new SharedArrayBuffer(16);
    const state = new BigInt64Array(shared);
    Atomics.store(state, 0, BigInt(Date.now()));
    const lastBeat = () => Number(Atomics.load(state, 0));
    const every = Math.max(1, options.heartbeatMs ?? Math.floor(staleMs / 6));
    const loseNow = () => {
      Atomics.store(state, 1, 1n);
      markLost();
    };
    // The same beat on this thread too: it covers the worker's start-up (and a worker
    // that could not start in time); when this thread is busy the worker's beat goes on.
    const beat = Effect.promise(async () => {
      if (lost || Atomics.load(state, 1) !== 0n) return markLost();
      if (holderTokenSync(dir) !== holder.token) return loseNow();
      const now = Date.now();
      if (now - lastBeat() > staleMs) return loseNow();
      const ok = await utimes(dir, now / 1000, now / 1000).then(
        () => true,
        () => false,
      );
      // Never moves the shared time back (the worker may have beaten meanwhile).
      if (ok && now > lastBeat()) Atomics.store(state, 0, BigInt(now));
    });
    yield* Effect.forkScoped(Effect.repeat(beat, Schedule.spaced(`${every} millis`)));
    yield* Effect.acquireRelease(
      Effect.try({
        try: () => {
          // execArgv []: the worker needs no loader (tsx) and no profiler of the run's own.
          const worker = new Worker(HEARTBEAT_WORKER, { eval: true, execArgv: [], workerData: { dir, token: holder.token, staleMs, every, shared } });
          worker.on("message", () => markLost());
          // A heartbeat that died cannot keep the lock: the run stops writing, as after a takeover.
          worker.on("error", () => markLost());
          worker.unref();
          return worker;
        },
        catch: writeError(lockfilePath, "start the run lock's heartbeat"),
      }),
      (worker) => Effect.promise(() => worker.terminate().then(() => undefined, () => undefined)),
    );
    /**
     * Whether the lock is still ours, checked now (before every intent flush, so before
     * every create): false when the last heartbeat is older than the stale limit (the
     * process was frozen: SIGSTOP, a suspended laptop, a stalled VM; another run may have
     * taken over or be taking over) or the owner file names another run. Once false, always false.
     */
    const confirm = async (): Promise<boolean> => {
      if (lost || Atomics.load(state, 1) !== 0n) {
        markLost();
        return false;
      }
      if (Date.now() - lastBeat() > staleMs || holderTokenSync(dir) !== holder.token) loseNow();
      return !lost;
    };
    return { holder, lost: () => lost || Atomics.load(state, 1) !== 0n, confirm, whenLost: Deferred.await(lostSignal) };
  });
