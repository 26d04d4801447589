// How many slots of one product a run may hold, and when it may ask for another, while it
// shares the account's pool with whoever else uses it (another run of the same account,
// another manifest's workflow) or finds the account's quota below the manifest's
// `concurrency`. A pure rule: state + event -> new state.
//
// Additive increase, multiplicative decrease, as TCP shares a link. A create refused for
// want of a slot (1303) proves the run's share is below what it asked for: the limit drops
// to `decrease` times the slots it held plus the refused one's (never below one, never
// above the limit already in use), and the kind sends no create for the no-slot wait,
// which doubles with each refusal in a row up to `waitMax` (so a run that holds nothing
// probes the full pool rarely instead of with every waiting task). One of its own tasks
// ending frees a slot that is its own: the wait ends at once and the limit grows by
// `increase` slots per limit's worth of ends (so many slots per task duration, whatever
// the share). The run with more slots gives up more on a refusal, so runs drift toward
// equal shares; a run alone climbs back to the ceiling (the manifest's `concurrency`).

export interface SlotShareRule {
  /** On a 1303 the limit drops to this times (slots held + the refused task's). */
  readonly decrease: number;
  /** The limit grows by this many slots per limit's worth of the run's tasks ended. */
  readonly increase: number;
  /** The wait after a first 1303 (real ms, scaled); doubled with each refusal in a row ... */
  readonly waitMs: number;
  /** ... up to this. */
  readonly waitMaxMs: number;
  /** The longest `Retry-After` honoured. */
  readonly retryAfterCapMs: number;
}

export interface SlotShare {
  /** The manifest's `concurrency`: the limit never grows past it. */
  readonly ceiling: number;
  /** The limit in use, fractional (it grows by fractions of a slot); whole slots count. */
  readonly limit: number;
  /** Refusals since the last create the service accepted (each after the wait the one before set). */
  readonly refusedInRow: number;
  /** No create of this kind leaves before this time (ms), unless one of the run's tasks ends first. */
  readonly quietUntil: number;
}

export type SlotShareEvent =
  /** A create answered 1303 while the run held `holding` slots besides its `slots`. */
  | { readonly _tag: "Refused"; readonly now: number; readonly holding: number; readonly slots: number; readonly retryAfterMs?: number }
  /** A create the service accepted. */
  | { readonly _tag: "Accepted" }
  /** One of the run's tasks of this kind ended while it held its slots. */
  | { readonly _tag: "Ended" };

export const startShare = (ceiling: number): SlotShare => ({ ceiling, limit: ceiling, refusedInRow: 0, quietUntil: 0 });

/** The whole slots the run may hold now. */
export const slotsAllowed = (s: SlotShare): number => Math.max(1, Math.floor(s.limit + 1e-9));

/** The wait the next refusal in a row sets (before any Retry-After). */
export const noSlotWaitMs = (rule: SlotShareRule, refusedInRow: number): number =>
  Math.min(rule.waitMaxMs, rule.waitMs * 2 ** Math.min(Math.max(0, refusedInRow), 30));

export const nextShare = (rule: SlotShareRule, s: SlotShare, event: SlotShareEvent): SlotShare => {
  switch (event._tag) {
    case "Refused": {
      // Creates sent together and refused together are one piece of evidence: only a
      // refusal after the wait the last one set counts toward the next, longer wait.
      const fresh = event.now >= s.quietUntil;
      const refusedInRow = fresh ? s.refusedInRow + 1 : s.refusedInRow;
      const wait = Math.max(noSlotWaitMs(rule, refusedInRow - 1), Math.min(Math.max(0, event.retryAfterMs ?? 0), rule.retryAfterCapMs));
      const limit = Math.min(s.limit, Math.max(1, rule.decrease * (event.holding + event.slots)));
      return { ...s, limit, refusedInRow, quietUntil: Math.max(s.quietUntil, event.now + wait) };
    }
    case "Accepted":
      return s.refusedInRow === 0 ? s : { ...s, refusedInRow: 0 };
    case "Ended": {
      const window = slotsAllowed(s);
      const limit = Math.min(s.ceiling, s.limit + rule.increase / window);
      return { ...s, limit, quietUntil: 0 };
    }
  }
};

/**
 * Whether a task needing `slots` may be sent now while the run holds `holding`. A task
 * bigger than the whole limit may still start alone, or it could never run.
 */
export const mayStart = (s: SlotShare, holding: number, slots: number, now: number): boolean =>
  now >= s.quietUntil && (holding === 0 || holding + slots <= slotsAllowed(s));

/**
 * One pool of slots for a product shared by several runs in one process (several
 * manifests in one `omnibatch run`): the slots all of them hold, under one share kept by
 * the rule above. Its runs never ask for more than the pool holds, so they never refuse
 * each other. (src/engine/SlotLimiter.ts is one; src/run/runManifests.ts makes them.)
 */
export interface SlotPool {
  readonly limit: number;
  readonly used: number;
  readonly quietUntil: number;
  fits(slots: number, now: number): boolean;
  take(slots: number): void;
  release(slots: number): void;
  onFinished(): void;
  onCreated(): void;
  onNoSlot(slots: number, now: number, retryAfterMs?: number): number;
}

/** The pools of the runs of one process, one per product, made by the first run that asks (with its rule). */
export interface SlotPools {
  pool(kind: "video" | "image", rule: SlotShareRule): SlotPool;
}
