// The account's concurrency slots for one product type, as the engine believes them: the
// slots its tasks hold (creates on the wire and tasks not seen ended), and the share of
// the pool the run may use, kept by the slot-share rule (src/policy/slotShare.ts: a 1303
// lowers it and quiets the kind for the no-slot wait, the run's own ends raise it again,
// up to the manifest's `concurrency`). Bookkeeping around the pure rule, no effects.
// With a pool shared by the runs of one process (`pool`), the run's own limit is only its
// concurrency: the pool counts every run's slots and its share learns from all of them.

import { mayStart, nextShare, slotsAllowed, startShare, type SlotPool, type SlotShare, type SlotShareRule } from "../policy/slotShare.js";

export class SlotLimiter implements SlotPool {
  private share: SlotShare;
  private inFlight = 0;

  constructor(
    readonly ceiling: number,
    private readonly rule: SlotShareRule,
    private readonly pool?: SlotPool,
  ) {
    this.share = startShare(ceiling);
  }

  get limit(): number {
    return this.pool ? Math.min(this.ceiling, this.pool.limit) : slotsAllowed(this.share);
  }

  get used(): number {
    return this.inFlight;
  }

  /** No create of this kind leaves before this time (ms) unless one of the run's tasks ends first; 0: none. */
  get quietUntil(): number {
    return this.pool ? this.pool.quietUntil : this.share.quietUntil;
  }

  /**
   * Whether a task holding `slots` may start now. A task bigger than the whole limit
   * may still start alone, or it could never run.
   */
  fits(slots: number, now: number): boolean {
    return mayStart(this.share, this.inFlight, slots, now) && (this.pool === undefined || this.pool.fits(slots, now));
  }

  /**
   * The run's own limit would let a task of `slots` start, the shared pool not: the other
   * runs of this process hold the rest. Their ends come on their own loops' time, so a run
   * held back by them looks again soon (tick.ts).
   */
  heldByOthers(slots: number, now: number): boolean {
    return this.pool !== undefined && mayStart(this.share, this.inFlight, slots, now) && !this.pool.fits(slots, now);
  }

  take(slots: number): void {
    this.inFlight += slots;
    this.pool?.take(slots);
  }

  /** The task ended (or its create proved it never started). */
  release(slots: number): void {
    const released = Math.min(slots, this.inFlight);
    this.inFlight -= released;
    this.pool?.release(released);
  }

  /** A task of the run ended while it held its slots. */
  onFinished(): void {
    if (this.pool) this.pool.onFinished();
    else this.share = nextShare(this.rule, this.share, { _tag: "Ended" });
  }

  /** The service accepted a create. */
  onCreated(): void {
    if (this.pool) this.pool.onCreated();
    else this.share = nextShare(this.rule, this.share, { _tag: "Accepted" });
  }

  /**
   * 1303 for a task of `slots` while the run held what it holds now (the refused task's
   * slots already released). Returns when the task may be sent again.
   */
  onNoSlot(slots: number, now: number, retryAfterMs?: number): number {
    if (this.pool) return this.pool.onNoSlot(slots, now, retryAfterMs);
    this.share = nextShare(this.rule, this.share, {
      _tag: "Refused",
      now,
      holding: this.inFlight,
      slots,
      ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
    });
    return this.share.quietUntil;
  }
}
