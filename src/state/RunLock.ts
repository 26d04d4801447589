// One run at a time per lockfile: a folder `X.lock.json.running/` made with mkdir (atomic
// on every file system) holding an owner file {pid, host, hostKey, started}, its mtime refreshed as
// a heartbeat. A lock whose heartbeat stopped, or whose pid is dead on this host (same host key), was left
// by a killed run and is taken over (the rules: RunLockRules.ts), under a second guard
// folder holding the taker's owner file, so a holder thawed meanwhile sees a takeover under
// way. The takeover moves the stale lock aside with one rename and goes on only if what it
// moved is the lock it judged stale (else puts it back): a taker frozen past the stale
// limit, whose guard another taker replaced meanwhile, cannot remove a lock placed since.
// A holder whose own heartbeat went late (its event loop blocked past the stale limit)
// keeps the lock only when, after refreshing it, it finds no takeover under way (a guard
// whose taker died on this host is none) and the owner file still naming it (`reclaim`).
// The temp and aside folders a run killed mid-placement, mid-takeover or mid-release leaves
// are removed by the next run that takes the lock, once provably out of use (`sweepLeftovers`,
// after its heartbeat starts, for at most half the stale limit), and a takeover guard whose
// taker died here by the holder's heartbeat and that sweep (`removeDeadTakersGuard`).

import { randomBytes } from "node:crypto";
import { readFileSync, renameSync, rmSync, statSync, utimesSync } from "node:fs";
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import { hostname } from "node:os";
import { basename, dirname, join } from "node:path";
import { Deferred, Effect, Exit, Schedule, type Scope } from "effect";
import { LockfileBusy, LockfileWriteError } from "./LockfileError.js";
import {
  guardOfDeadTaker,
  isStale,
  judgementStillValid,
  leftoverOf,
  leftoverUnused,
  livenessOfProbe,
  movedIsJudged,
  probeablePid,
  samePidSpace,
  staleMarginMs,
  takeoverMayBeUnderWay,
} from "./RunLockRules.js";

export interface RunLockHolder {
  readonly pid: number;
  readonly host: string;
  /**
   * This process's pid space (`hostKeyHere`): hostname, boot id, pid namespace. Absent in
   * owner files of builds before it (then judged by `host`, RunLockRules.ts `samePidSpace`).
   */
  readonly hostKey?: string;
  /** Unix ms. */
  readonly started: number;
  readonly token: string;
}

export interface RunLockOptions {
  /** A lock whose heartbeat is older than this (and a margin, RunLockRules.ts) is stale. Default 30 s. */
  readonly staleMs?: number;
  /** How often the holder refreshes its heartbeat. Default staleMs / 6. */
  readonly heartbeatMs?: number;
  /** For tests: called at the named step of a takeover (a test freezes the process there with SIGSTOP). */
  readonly onTakeoverStep?: (step: "judged" | "moving" | "moved") => void;
}

export interface RunLockStatus {
  readonly holder: RunLockHolder | undefined;
  /** Unix ms of the last heartbeat. */
  readonly heartbeat: number;
  readonly stale: boolean;
}

export const runLockPathOf = (lockfilePath: string): string => `${lockfilePath}.running`;

/**
 * The folder a run holds while it takes a stale lock over (from before its last staleness
 * check until its owner is in place), with that run's owner file: stale, and replaced,
 * when its taker died (on this host: at once) or froze past the stale limit.
 */
const takeoverGuardOf = (lockDir: string): string => `${lockDir}.takeover`;

const DEFAULT_STALE_MS = 30_000;

/** Whether `pid` lives in this pid space: undefined (unknown) unless kill() can and does answer (RunLockRules.ts). */
const pidAlive = (pid: unknown): boolean | undefined => {
  if (!probeablePid(pid)) return undefined;
  try {
    process.kill(pid, 0);
    return livenessOfProbe(undefined);
  } catch (error) {
    return livenessOfProbe((error as NodeJS.ErrnoException).code);
  }
};

const readOr = (read: () => string): string => {
  try {
    return read();
  } catch {
    return "-";
  }
};

let hostKey: string | undefined;
/**
 * This process's pid space, as the owner files record it: the hostname, the kernel's boot
 * id (another machine of the same name, or this one rebooted) and the inode of its pid
 * namespace (a container sharing the folder under the same hostname). Where /proc cannot
 * be read (not Linux), "-" in their place: the hostname alone, as before the key.
 */
const hostKeyHere = (): string =>
  (hostKey ??= [
    hostname(),
    readOr(() => readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim()),
    readOr(() => String(statSync("/proc/self/ns/pid").ino)),
  ].join("/"));

const holderOf = (text: string): RunLockHolder | undefined => {
  const data = JSON.parse(text) as RunLockHolder;
  return typeof data.pid === "number" && typeof data.host === "string" ? data : undefined;
};

const readHolder = async (dir: string): Promise<RunLockHolder | undefined> => {
  try {
    return holderOf(await readFile(join(dir, "owner.json"), "utf8"));
  } catch {
    return undefined;
  }
};

/**
 * The same read, synchronous: `confirm` runs twice per durable flush (so twice per
 * create), and an awaited readFile is four trips through the thread pool (open, fstat,
 * read, close) where this small file in the page cache takes microseconds.
 */
const readHolderSync = (dir: string): RunLockHolder | undefined => {
  try {
    return holderOf(readFileSync(join(dir, "owner.json"), "utf8"));
  } catch {
    return undefined;
  }
};

/** Whether the run an owner file names is alive: known only when it names this pid space (`samePidSpace`). */
const aliveHere = (holder: RunLockHolder | undefined): boolean | undefined =>
  holder === undefined || !samePidSpace(holder, { host: hostname(), hostKey: hostKeyHere() }) ? undefined : pidAlive(holder.pid);

/** The mtime of the folder at `dir` and the owner file in it; undefined when there is none. */
const lookAt = async (dir: string) => {
  let mtime: number;
  try {
    mtime = (await stat(dir)).mtimeMs;
  } catch {
    return undefined;
  }
  const holder = await readHolder(dir);
  return { holder, heartbeat: mtime, ownerAliveHere: aliveHere(holder) };
};

/** The staleness of the folder at `dir` (a lock or a takeover guard), by the pure rule; undefined when there is none. */
const inspectFolder = async (dir: string, staleMs: number, now?: number) => {
  const seen = await lookAt(dir);
  if (seen === undefined) return undefined;
  const { holder, heartbeat, ownerAliveHere } = seen;
  return { holder, heartbeat, stale: isStale({ now: now ?? Date.now(), heartbeat, ownerAliveHere, staleMs }) };
};

/** Who holds the run lock of `lockfilePath`, if anyone (status uses this; it changes nothing). */
export const inspectRunLock = async (
  lockfilePath: string,
  options: RunLockOptions = {},
  now: number = Date.now(),
): Promise<RunLockStatus | undefined> => inspectFolder(runLockPathOf(lockfilePath), options.staleMs ?? DEFAULT_STALE_MS, now);

const describeHolder = (holder: RunLockHolder | undefined): string =>
  holder
    ? `pid ${holder.pid} on ${holder.host}, running since ${new Date(holder.started).toISOString()}`
    : "a run that is still starting";

const busy = (lockfilePath: string, holder: RunLockHolder | undefined, staleMs: number): LockfileBusy =>
  new LockfileBusy({
    path: lockfilePath,
    holder: holder && { pid: holder.pid, host: holder.host, started: holder.started },
    message:
      `lockfile ${lockfilePath} is in use by another run (${describeHolder(holder)}). ` +
      `Wait for it to finish; a lock left by a killed run is taken over automatically once its ` +
      `heartbeat is older than ${Math.round((staleMs + staleMarginMs(staleMs)) / 1000)} s (lock folder: ${runLockPathOf(lockfilePath)}).`,
  });

/**
 * Makes the folder `dir` appear with `owner` already inside (made under a temporary name,
 * then renamed into place), so nobody ever sees it without its owner: a run killed
 * meanwhile leaves either nothing or a complete one. False when a folder is there:
 * rename() replaces only an empty folder (an ownerless one of an older version).
 */
const placeWithOwner = async (dir: string, owner: RunLockHolder): Promise<boolean> => {
  const temp = `${dir}.${owner.token}.tmp`;
  await mkdir(temp);
  try {
    await writeFile(join(temp, "owner.json"), `${JSON.stringify(owner)}\n`);
    await rename(temp, dir);
    return true;
  } catch (error) {
    await rm(temp, { recursive: true, force: true });
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOTEMPTY" || code === "EEXIST" || code === "ENOTDIR") return false;
    throw error;
  }
};

interface MovedAside {
  readonly path: string;
  readonly owner: RunLockHolder | undefined;
}

/**
 * Moves whatever folder is at `dir` aside (one atomic rename), with the owner it names;
 * undefined when there is none (another run moved it first). Renaming rather than
 * removing is what lets a taker see what it took before it is gone: a lock placed by
 * another run since its judgement is put back (`putBack`), never destroyed.
 */
const moveAside = (dir: string, token: string): MovedAside | undefined => moveTo(dir, `${dir}.${token}.aside`);

const moveTo = (from: string, path: string): MovedAside | undefined => {
  try {
    renameSync(from, path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
  return { path, owner: readHolderSync(path) };
};

/**
 * Puts a folder moved aside by mistake back. If another has been placed meanwhile, that
 * one stays and this one is left aside, never removed: its holder finds its owner file
 * gone at its next check and stops, and nothing of it is destroyed by a run that did
 * not judge it.
 */
const putBack = (moved: MovedAside, dir: string): void => {
  try {
    renameSync(moved.path, dir);
  } catch {
    // Left aside (see above).
  }
};

/** Removes the folder at `dir` if it is still the one `token` placed (a taker frozen past the stale limit may find another's there). */
const removeIfOurs = async (dir: string, token: string): Promise<void> => {
  const moved = moveAside(dir, token);
  if (moved === undefined) return;
  if (moved.owner?.token === token) await rm(moved.path, { recursive: true, force: true });
  else putBack(moved, dir);
};

/**
 * Replaces a takeover guard found stale (its taker died, or froze past the stale limit):
 * moved aside, checked to be the guard judged stale (else put back: another taker's, made
 * since), removed, and ours placed; false when any step finds another run ahead.
 */
const replaceStaleGuard = async (guard: string, me: RunLockHolder, staleMs: number): Promise<boolean> => {
  const seen = await inspectFolder(guard, staleMs);
  if (seen === undefined) return placeWithOwner(guard, me);
  if (!seen.stale) return false;
  const moved = moveAside(guard, me.token);
  if (moved === undefined) return false;
  if (!movedIsJudged(seen.holder?.token, moved.owner?.token)) {
    putBack(moved, guard);
    return false;
  }
  await rm(moved.path, { recursive: true, force: true });
  // The claim folder an older build made to replace a guard, left by its kill: never
  // consulted now, removed once stale so it does not lie beside the lockfile for ever.
  if ((await inspectFolder(`${guard}.claim`, staleMs))?.stale) await rm(`${guard}.claim`, { recursive: true, force: true });
  return placeWithOwner(guard, me);
};

const tryAcquire = async (lockfilePath: string, options: RunLockOptions): Promise<RunLockHolder | LockfileBusy> => {
  const dir = runLockPathOf(lockfilePath);
  const staleMs = options.staleMs ?? DEFAULT_STALE_MS;
  const me: RunLockHolder = { pid: process.pid, host: hostname(), hostKey: hostKeyHere(), started: Date.now(), token: randomBytes(8).toString("hex") };
  if (await placeWithOwner(dir, me)) return me;
  const seen = await inspectRunLock(lockfilePath, options);
  if (seen === undefined) return (await placeWithOwner(dir, me)) ? me : busy(lockfilePath, undefined, staleMs);
  if (!seen.stale) return busy(lockfilePath, seen.holder, staleMs);
  // Stale: take it over under a guard (so a holder thawed meanwhile sees a takeover under
  // way, `reclaim`), judging it stale again inside, then moving it aside and checking
  // that what was moved is the lock judged stale. The clock starts before the guard: the
  // guard looks stale to others a stale limit after it was made.
  const since = performance.now();
  const guard = takeoverGuardOf(dir);
  if (!(await placeWithOwner(guard, me)) && !(await replaceStaleGuard(guard, me, staleMs))) return busy(lockfilePath, seen.holder, staleMs);
  try {
    const again = await inspectRunLock(lockfilePath, options);
    if (again === undefined) return (await placeWithOwner(dir, me)) ? me : busy(lockfilePath, undefined, staleMs);
    if (!again.stale || again.holder?.token !== seen.holder?.token) return busy(lockfilePath, again.holder, staleMs);
    options.onTakeoverStep?.("judged");
    // Frozen or blocked since: the guard may have been replaced and the lock taken over.
    if (!judgementStillValid(performance.now() - since, staleMs)) return busy(lockfilePath, again.holder, staleMs);
    options.onTakeoverStep?.("moving");
    // The last look, synchronous and right before the rename (nothing of this run in
    // between): still in time, and the owner still the one judged stale. A taker frozen
    // before this point and thawed after another run took over answers busy here rather
    // than moving a healthy lock aside (and a run starting in that instant then taking
    // the empty place, which left the healthy holder's lock unput-back).
    if (!judgementStillValid(performance.now() - since, staleMs) || readHolderSync(dir)?.token !== again.holder?.token) {
      return busy(lockfilePath, readHolderSync(dir) ?? again.holder, staleMs);
    }
    const moved = moveAside(dir, me.token);
    if (moved === undefined) return busy(lockfilePath, undefined, staleMs);
    options.onTakeoverStep?.("moved");
    if (!movedIsJudged(again.holder?.token, moved.owner?.token)) {
      putBack(moved, dir);
      return busy(lockfilePath, moved.owner, staleMs);
    }
    await rm(moved.path, { recursive: true, force: true });
    if (!(await placeWithOwner(dir, me))) return busy(lockfilePath, (await inspectRunLock(lockfilePath, options))?.holder, staleMs);
    return me;
  } finally {
    await removeIfOurs(guard, me.token);
  }
};

/**
 * Removes the takeover guard of the lock folder `dir` when its taker is provably dead here
 * (RunLockRules.ts `guardOfDeadTaker`): moved aside under a name of its own (one rename),
 * checked to be the guard judged (else put back: a live taker's, made since) and removed.
 * Synchronous (a stat when there is none: the heartbeat calls it); never throws (a
 * failure leaves it as it is). True when it removed one.
 */
const removeDeadTakersGuard = (dir: string): boolean => {
  const guard = takeoverGuardOf(dir);
  try {
    const seen = statSync(guard, { throwIfNoEntry: false });
    if (seen === undefined) return false;
    const owner = readHolderSync(guard);
    if (!guardOfDeadTaker({ mtime: seen.mtimeMs, ownerAliveHere: aliveHere(owner) })) return false;
    const moved = moveTo(guard, `${guard}.${randomBytes(8).toString("hex")}.aside`);
    if (moved === undefined) return false;
    if (!movedIsJudged(owner?.token, moved.owner?.token)) {
      putBack(moved, guard);
      return false;
    }
    rmSync(moved.path, { recursive: true, force: true });
    return true;
  } catch {
    return false;
  }
};

/**
 * Removes the temp and aside folders beside the lock folder `dir` (RunLockRules.ts
 * `leftoverOf`) that runs killed mid-placement, mid-takeover or mid-release left, when
 * provably out of use (`leftoverUnused`: whoever could still act on one is dead here, or
 * it is older than the stale limit and its margin). Each is judged, then, within half the
 * stale limit, moved aside under a name of its own (one rename, so its maker or mover,
 * frozen and thawed, finds it gone rather than half removed), checked to be the folder
 * judged (else put back) and removed.
 * Best effort: a failure leaves it to the next run. No folder is begun past `until`
 * (performance.now()): the sweep runs after the heartbeat has started, and what it has not
 * reached by then is left for the next run. The takeover guard, if its taker died here,
 * goes first (`removeDeadTakersGuard`). Returns how many were removed.
 */
const sweepLeftovers = async (dir: string, staleMs: number, until: number): Promise<number> => {
  const parent = dirname(dir);
  const lockName = basename(dir);
  let removed = removeDeadTakersGuard(dir) ? 1 : 0;
  let entries: string[];
  try {
    entries = await readdir(parent);
  } catch {
    return removed;
  }
  for (const entry of entries) {
    if (performance.now() > until) break;
    const leftover = leftoverOf(lockName, entry);
    if (leftover === undefined) continue;
    try {
      const path = join(parent, entry);
      const since = performance.now();
      const seen = await lookAt(path);
      if (seen === undefined) continue;
      const unused = leftoverUnused({ leftover, ownerToken: seen.holder?.token, now: Date.now(), heartbeat: seen.heartbeat, ownerAliveHere: seen.ownerAliveHere, staleMs });
      if (!unused || !judgementStillValid(performance.now() - since, staleMs)) continue;
      const moved = moveTo(path, `${dir}.${randomBytes(8).toString("hex")}.aside`);
      if (moved === undefined) continue;
      if (!movedIsJudged(seen.holder?.token, moved.owner?.token)) {
        putBack(moved, path);
        continue;
      }
      await rm(moved.path, { recursive: true, force: true });
      removed += 1;
    } catch {
      // Left for the next run.
    }
  }
  return removed;
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
    /**
     * The same check, synchronous (it is: a read of the small owner file, and `reclaim`'s
     * utimes and stat when late), for the last moment before a create's bytes are written.
     */
    readonly confirmNow: () => boolean;
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
          : // Only the lock that is still ours: moved aside and checked, never removed by path
            // (a holder frozen between a read and a removal would remove the next owner's).
            Effect.promise(() => removeIfOurs(dir, result.token)),
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
    // When our heartbeat last reached the lock folder (this process's clock; the time
    // set, taken before the write, so never later than the mtime others see). Refreshed
    // here first: until then, `started` (taken before the lock was placed, so never later
    // than its mtime either).
    let lastBeat = holder.started;
    try {
      const now = new Date();
      utimesSync(dir, now, now);
      lastBeat = now.getTime();
    } catch {
      // The first beat tries again.
    }
    const guard = takeoverGuardOf(dir);
    const ours = () => readHolderSync(dir)?.token === holder.token;
    /**
     * Our heartbeat is older than the stale limit (the event loop was blocked, or the
     * process frozen): another run may have taken the lock over, or be taking it over now.
     * Being late proves neither. The lock is still ours, and stays ours for another stale
     * limit, when, in this order: (1) our heartbeat is refreshed, (2) no takeover guard
     * exists, (3) the owner file names us. A run that takes a stale lock over holds the
     * guard from before its last staleness check until its own owner is in place
     * (tryAcquire). So if (2) finds no guard, any takeover either ended before (2), and
     * then (3) finds its owner (or none: the folder removed), or starts after (2), and
     * then its staleness check comes after (1) and finds the lock fresh. All synchronous:
     * nothing of this run runs in between. A guard made before this run took its lock
     * (mtime older than our `started`) is not a takeover of our lock: a run takes over only
     * the lock it found stale before making its guard, and re-checks that owner under the
     * guard; such a guard was left by a run killed mid-takeover (kill -9, a second Ctrl-C)
     * and would otherwise fail every later late heartbeat for ever. Nor is a guard whose
     * owner file names this pid space (host key) and a pid that no longer exists: its taker died (killed
     * mid-takeover of our lock), and did not move our lock if (3) finds our owner; any
     * other taker holds its own guard from before its staleness check (one that replaces
     * the dead guard after (2) judges after (1), and finds the lock fresh). The rule:
     * RunLockRules.ts `takeoverMayBeUnderWay`. Any other failure (the folder gone, a guard
     * made since we started by a taker alive or unknown) counts as lost: the safe side. What this
     * cannot rule out: a taker frozen between its last time check and its move, whose
     * guard another taker replaced (and removed) meanwhile, thawing after (2) and moving
     * our lock aside. The owner file then names it before it reads the lockfile, and our
     * next `ours()` (every confirm, before and after each write) finds the lock lost:
     * it still never sees an intent we flush after that, and we send no create after it.
     */
    const reclaim = (): boolean => {
      const now = new Date();
      try {
        utimesSync(dir, now, now);
        const takeover = statSync(guard, { throwIfNoEntry: false });
        // Its owner read after its stat: a guard replaced in between is a live taker's (or unreadable), so lost.
        const seen = takeover && { mtime: takeover.mtimeMs, ownerAliveHere: aliveHere(readHolderSync(guard)) };
        if (takeoverMayBeUnderWay(seen, holder.started)) return false;
      } catch {
        return false;
      }
      if (!ours()) return false;
      lastBeat = now.getTime();
      return true;
    };
    // Synchronous (microseconds: a small file in the page cache, one utimes), so the
    // checks and the refresh see one moment, not two turns of a busy event loop apart.
    const beat = Effect.sync(() => {
      if (lost) return;
      if (Date.now() - lastBeat > staleMs) {
        if (!reclaim()) markLost();
        return;
      }
      if (!ours()) {
        markLost();
        return;
      }
      const now = new Date();
      try {
        utimesSync(dir, now, now);
        lastBeat = now.getTime();
      } catch {
        // The next beat tries again; a lock left unrefreshed goes stale and is checked as above.
      }
      // A guard left by a taker that died here (killed mid-takeover): removed now, before
      // its pid is reused and it would count as a takeover under way (`reclaim`).
      removeDeadTakersGuard(dir);
    });
    const every = options.heartbeatMs ?? Math.floor(staleMs / 6);
    yield* Effect.forkScoped(Effect.repeat(beat, Schedule.spaced(`${every} millis`)));
    // The leftovers of killed runs, swept while the heartbeat beats (the sweep's file
    // operations are asynchronous, so a slow one, a big folder or a slow network file
    // system, delays no beat) and begun for at most half the stale limit. Never fails.
    yield* Effect.promise(() => sweepLeftovers(dir, staleMs, performance.now() + staleMs / 2));
    /**
     * Whether the lock is still ours, checked now (before and after every write, and
     * before every create whose intent was written ahead): false when the owner file names
     * another run, or, after our heartbeat went older than the stale limit (blocked,
     * frozen: SIGSTOP, a suspended laptop, a stalled VM), when `reclaim` cannot prove that
     * nobody took over or is taking over. Once false, always false.
     */
    const confirmNow = (): boolean => {
      if (lost) return false;
      if (Date.now() - lastBeat > staleMs) {
        if (!reclaim()) markLost();
        return !lost;
      }
      if (!ours()) markLost();
      return !lost;
    };
    const confirm = async (): Promise<boolean> => confirmNow();
    return { holder, lost: () => lost, confirm, confirmNow, whenLost: Deferred.await(lostSignal) };
  });
