// The run lock's decisions, apart from the files they are about (RunLock.ts does the I/O):
// when a lock or a takeover guard is stale, whether a taker may still act on a staleness
// it judged a while ago, and whether the lock it moved aside is the one it judged. No
// clock, no file system: every time and every fact read from disk is an argument.

/** Whole seconds (ext3, HFS+) or two (FAT, exFAT): the coarsest file-system mtime the rule allows for. */
export const COARSE_MTIME_MS = 2_000;

/**
 * How much older than the stale limit a heartbeat must look before it is stale: an mtime
 * cut to the file system's granularity looks up to COARSE_MTIME_MS older than the beat
 * that set it, and another host's clock may be that much ahead. A quarter of the limit
 * when that is less (tests run with limits of a second or so).
 */
export const staleMarginMs = (staleMs: number): number => Math.max(0, Math.min(COARSE_MTIME_MS, Math.floor(staleMs / 4)));

export interface HeartbeatSeen {
  /** Unix ms now, on the clock of the run that looks. */
  readonly now: number;
  /** Unix ms of the last heartbeat: the folder's mtime, as the file system keeps it. */
  readonly heartbeat: number;
  /**
   * Whether its owner's process is alive: known only when it names this host (false: it
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
