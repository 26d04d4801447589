// The run lock's decisions, apart from the files they are about (RunLock.ts does the I/O):
// when a lock or a takeover guard is stale, whether a taker may still act on a staleness
// it judged a while ago, whether the lock it moved aside is the one it judged, whether a
// late holder must count a takeover guard as a takeover under way, which leftover temp
// and aside folders (and which takeover guard) nobody can still use, and when a pid named
// in an owner file can be asked about at all (same host key, a pid kill() takes, its
// answer). No clock, no file system: every time and every fact read from disk is an argument.

/** Whole seconds (ext3, HFS+) or two (FAT, exFAT): the coarsest file-system mtime the rule allows for. */
export const COARSE_MTIME_MS = 2_000;

/**
 * How much older than the stale limit a heartbeat must look before it is stale: an mtime
 * cut to the file system's granularity looks up to COARSE_MTIME_MS older than the beat
 * that set it, and another host's clock may be that much ahead. A quarter of the limit
 * when that is less (tests run with limits of a second or so).
 */
export const staleMarginMs = (staleMs: number): number => Math.max(0, Math.min(COARSE_MTIME_MS, Math.floor(staleMs / 4)));

/**
 * Whether a pid read from an owner file can be asked about (kill(pid, 0)): a positive
 * whole number a kill() takes (int32). Anything else (a fraction, 2^31 or more, 0 or a
 * negative number, which name process groups, a string) tells nothing: liveness unknown.
 */
export const probeablePid = (pid: unknown): pid is number =>
  typeof pid === "number" && Number.isSafeInteger(pid) && pid > 0 && pid <= 0x7fff_ffff;

/**
 * What kill(pid, 0) answered, as liveness: no error, alive; EPERM, alive (another user's
 * process); ESRCH, dead (no such process); any other error proves nothing: unknown.
 */
export const livenessOfProbe = (errorCode: string | undefined): boolean | undefined =>
  errorCode === undefined || errorCode === "EPERM" ? true : errorCode === "ESRCH" ? false : undefined;

/**
 * Whether a pid in an owner file is one of this process's pid space, so its death here is
 * its death: the owner file's host key (hostname, boot id, pid namespace) equals ours
 * exactly. Two containers sharing a folder under one hostname differ in their pid
 * namespace; two machines of one name, in their boot id. An owner file without a key
 * (written by a build before the key) is judged as it was then, by its hostname; one
 * whose key is not a string, never.
 */
export const samePidSpace = (
  owner: { readonly host: string; readonly hostKey?: unknown },
  here: { readonly host: string; readonly hostKey: string },
): boolean => (owner.hostKey === undefined ? owner.host === here.host : owner.hostKey === here.hostKey);

export interface HeartbeatSeen {
  /** Unix ms now, on the clock of the run that looks. */
  readonly now: number;
  /** Unix ms of the last heartbeat: the folder's mtime, as the file system keeps it. */
  readonly heartbeat: number;
  /**
   * Whether its owner's process is alive: known only when it names this pid space, `samePidSpace` (false: it
   * is dead here, so nothing can refresh it); undefined when it names another host, or
   * names nothing readable.
   */
  readonly ownerAliveHere: boolean | undefined;
  readonly staleMs: number;
}

/**
 * A lock folder (or a takeover guard) nobody keeps alive any more: its owner is dead on
 * this host, or its heartbeat is older than the stale limit plus the margin. A heartbeat
 * "in the future" (the other host's clock ahead) is fresh.
 */
export const isStale = (seen: HeartbeatSeen): boolean =>
  seen.ownerAliveHere === false || seen.now - seen.heartbeat > seen.staleMs + staleMarginMs(seen.staleMs);

/**
 * Whether a taker that judged the lock stale `elapsedMs` ago (its own monotonic clock,
 * so a freeze counts) may still act on that judgement. Its guard looks stale to others
 * after the stale limit (less the margin, on a coarse or skewed clock), and then another
 * taker may replace it and take the lock over: past half the limit, it judges again
 * rather than act on what it saw before a freeze.
 */
export const judgementStillValid = (elapsedMs: number, staleMs: number): boolean => elapsedMs >= 0 && elapsedMs <= staleMs / 2;

/**
 * After moving the lock folder aside (an atomic rename: whatever was there), a taker owns
 * what it moved only if it is the lock it judged stale: the same owner token (both
 * absent: the same ownerless folder of an older version). Anything else is a lock another
 * run placed since (a taker that went first, the old holder's own folder replaced): it
 * must be put back, and the taker is refused.
 */
export const movedIsJudged = (judgedToken: string | undefined, movedToken: string | undefined): boolean => judgedToken === movedToken;

export interface GuardSeen {
  /** Unix ms: the guard folder's mtime (when its taker placed it). */
  readonly mtime: number;
  /** Whether its taker is alive: known only when its owner file names this host (see HeartbeatSeen). */
  readonly ownerAliveHere: boolean | undefined;
}

/**
 * Whether a holder whose heartbeat went late must count the takeover guard it found as a
 * takeover of its lock that may be under way (and stop). Not when there is none; not when
 * it was made before this holder took its lock (`holderStarted`: a run takes over only a
 * lock it judged stale before making its guard, so that guard was left by a run killed
 * mid-takeover of an older lock); not when its owner file names this host and a pid that no
 * longer exists: its taker died, and a dead taker moves nothing. Any other taker holds a
 * guard of its own from before its last staleness check, which the holder would see. An
 * ownerless or unreadable guard, or one of another host, may be a live taker's.
 */
export const takeoverMayBeUnderWay = (guard: GuardSeen | undefined, holderStarted: number): boolean =>
  guard !== undefined && guard.mtime >= holderStarted && guard.ownerAliveHere !== false;

/**
 * A folder the run lock's I/O makes beside the lock for an instant: a lock or guard made
 * under a temporary name (`tmp`, named after its maker's token) before its rename into
 * place, and a lock or guard moved aside (`aside`, named after its mover's token) before
 * its removal or its return. A run killed in that instant leaves it behind.
 */
export interface Leftover {
  readonly kind: "tmp" | "aside";
  /** Whether it is (or was) the lock itself or its takeover guard. */
  readonly of: "lock" | "guard";
  /** The maker's (tmp) or mover's (aside) token. */
  readonly token: string;
}

/**
 * Whether the takeover guard in place may be removed by a run that is not taking over
 * (the holder's heartbeat, the sweep of the next run): only when its taker is provably
 * dead here. A dead taker moves nothing, and its guard, left, would count as a takeover
 * under way for a late holder once its pid is reused. A guard whose taker may be alive
 * (alive here, another host's, unreadable, ownerless: maybe being made), or is merely old
 * (a frozen taker's; the next taker replaces it), is left as it is.
 */
export const guardOfDeadTaker = (guard: GuardSeen): boolean => guard.ownerAliveHere === false;

const LEFTOVER_TAIL = /^(takeover\.)?([0-9a-f]{16})\.(tmp|aside)$/;

/**
 * The leftover that the directory entry `entry` is, for the lock folder named `lockName`
 * (its base name, e.g. `m.lock.json.running`); undefined for anything else: only names
 * of the exact shape the run lock makes (a 16-hex-digit token) are ever considered.
 */
export const leftoverOf = (lockName: string, entry: string): Leftover | undefined => {
  if (!entry.startsWith(`${lockName}.`)) return undefined;
  const m = LEFTOVER_TAIL.exec(entry.slice(lockName.length + 1));
  if (m === null) return undefined;
  return { kind: m[3] as Leftover["kind"], of: m[1] ? "guard" : "lock", token: m[2]! };
};

export interface LeftoverSeen extends HeartbeatSeen {
  readonly leftover: Leftover;
  /** The token of the owner file inside, if one could be read. */
  readonly ownerToken: string | undefined;
}

/**
 * Whether a leftover is provably out of use, so it may be removed (moved aside, checked to
 * be the one judged, then removed). Whoever could still act on it is the run named inside:
 * for a temp folder its maker (counted only when the owner file names the folder's own
 * token), for an aside folder the lock or guard it was (its holder, its taker). It is out
 * of use by the lock's own staleness rule, on its mtime (never refreshed by anyone once it
 * is aside or unplaced): that run is dead on this host, or the folder is older than the
 * stale limit and its margin, as a lock or guard that would be taken over. Its maker or
 * mover, if alive but frozen that long, finds it gone and fails or leaves it (a putBack of
 * a stale lock, a rename that answers ENOENT), never removes anything else.
 */
export const leftoverUnused = (seen: LeftoverSeen): boolean =>
  isStale({
    now: seen.now,
    heartbeat: seen.heartbeat,
    staleMs: seen.staleMs,
    ownerAliveHere: seen.leftover.kind === "tmp" && seen.ownerToken !== seen.leftover.token ? undefined : seen.ownerAliveHere,
  });
