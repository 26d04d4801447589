// Cues that lend slots (issue 13, "with callbacks"): a callback saying a video ended is
// only a cue (anyone can post one), so it never records anything; but it may lend that
// task's slot to the next waiting create at once. The service is the judge: if the slot
// was not really free, the create answers 1303 and nothing was created (spec: "any 1xxx
// answer means the task was not created"), the slot goes back, and lending pauses. The
// cued task's state is recorded only from a later query, which can then wait and cover
// several ends at once. Bounds: a task lends its slot at most once, so forged cues cost
// at most one refused create per task in flight; each refusal doubles the pause. Pure.

/** A task in flight, as the lending rule sees it. */
export interface Lender {
  /** In flight with a task id (a task whose create's outcome is unknown never lends). */
  readonly inflight: boolean;
  /** A callback said it ended (not yet answered by a query). */
  readonly cued: boolean;
  /** Its slot is lent now. */
  readonly lent: boolean;
  /** It lent its slot before (each task lends at most once). */
  readonly lentOnce: boolean;
  /** Slots it holds by our count. */
  readonly holding: number;
}

/** Whether `lender` may lend its slots to a create needing `slots`, at `now`, with lending paused until `pausedUntil`. */
export const mayLend = (lender: Lender, slots: number, pausedUntil: number, now: number): boolean =>
  lender.inflight && lender.cued && !lender.lent && !lender.lentOnce && lender.holding >= slots && now >= pausedUntil;

/** Whether a task is worth keeping as a candidate lender (the pause aside). */
export const mayLendLater = (lender: Lender): boolean => lender.inflight && lender.cued && !lender.lent && !lender.lentOnce && lender.holding > 0;

/** How long lending pauses after the `strikes`-th cue the service proved wrong (a 1303, or a query showing the task still running). */
export const lendPauseMs = (strikes: number, noSlotWaitMs: number): number => noSlotWaitMs * 2 ** Math.min(Math.max(0, strikes - 1), 6);

/** The cued tasks of a kind waiting for the query that records their state. */
export interface CueQueue {
  /** Cued tasks still holding their slot (nothing lent on them: the query frees the slot). */
  readonly holding: number;
  /** Cued tasks whose slot is lent (the query only records them). */
  readonly lent: number;
  /** When the oldest of the lent ones lent its slot. */
  readonly oldestLentAt: number;
}

export interface CueQueryTiming {
  /** When cued tasks were last queried. */
  readonly lastCueQuery: number;
  /** Cue queries are at least this far apart. */
  readonly spacingMs: number;
  /** A lent task's state is recorded at most this long after it lent its slot. */
  readonly holdMs: number;
  /** With this many lent tasks waiting, query at once (one query records them all). */
  readonly batch: number;
}

/**
 * When the cued tasks of a kind are queried next (one query asks about every task in
 * flight): soon (after the spacing) when a cued task still holds its slot, since only the
 * answer frees it; when only lent ones wait, once `batch` of them have gathered or the
 * oldest has waited `holdMs`; never when nothing is cued.
 */
export const cueQueryAt = (queue: CueQueue, t: CueQueryTiming): number => {
  const spaced = t.lastCueQuery + t.spacingMs;
  if (queue.holding > 0) return spaced;
  if (queue.lent === 0) return Number.POSITIVE_INFINITY;
  if (queue.lent >= t.batch) return spaced;
  return Math.max(spaced, queue.oldestLentAt + t.holdMs);
};

/** A task of the run as the cue rule sees it. */
export interface CueCandidate {
  readonly kind: "video" | "image";
  /** The service's task id, once known. */
  readonly taskId: string | undefined;
}

/**
 * Which of the run's tasks a callback is a cue for. By the external id it names (our own
 * id, the lookup `byExternalId`); without one (the service console's test callback names
 * none) by the service's task id among the tasks in flight (`inflight`: at most the
 * account's slots, so a flood of them costs little). A task id the run does not know, or
 * one of another kind, is no cue: dropped. Finding a task only ever leads to a query of
 * it; nothing in the callback is believed. Pure.
 */
export const cuedTask = <C>(
  callback: { readonly kind: "video" | "image"; readonly taskId: string; readonly externalId?: string },
  byExternalId: (id: string) => C | undefined,
  inflight: Iterable<C>,
  seen: (c: C) => CueCandidate,
): C | undefined => {
  if (callback.externalId !== undefined) {
    const named = byExternalId(callback.externalId);
    return named !== undefined && seen(named).kind === callback.kind ? named : undefined;
  }
  for (const c of inflight) {
    const s = seen(c);
    if (s.kind === callback.kind && s.taskId === callback.taskId) return c;
  }
  return undefined;
};
