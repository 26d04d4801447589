// The account's concurrency slots for one product type, as the engine believes them: the
// slots its tasks hold (creates on the wire and tasks not seen ended), and the share of
// the pool the run may use, kept by the slot-share rule (src/policy/slotShare.ts: a 1303
// lowers it and quiets the kind for the no-slot wait, the run's own ends raise it again,
// up to the manifest's `concurrency`). Bookkeeping around the pure rule, no effects.

import { mayStart, nextShare, slotsAllowed, startShare, type SlotShare, type SlotShareRule } from "../policy/slotShare.js";

export class SlotLimiter {
  private share: SlotShare;
  private inFlight = 0;

  constructor(
    readonly ceiling: number,
    private readonly rule: SlotShareRule,
  ) {
    this.share = startShare(ceiling);
  }

  get limit(): number {
    return slotsAllowed(this.share);
  }

  get used(): number {
    return this.inFlight;
  }

  /** No create of this kind leaves before this time (ms) unless one of the run's tasks ends first; 0: none. */
  get quietUntil(): number {
    return this.share.quietUntil;
  }

  /**
   * Whether a task holding `slots` may start now. A task bigger than the whole limit
   * may still start alone, or it could never run.
   */
  fits(slots: number, now: number): boolean {
    return mayStart(this.share, this.inFlight, slots, now);
  }

  take(slots: number): void {
    this.inFlight += slots;
  }

  /** The task ended (or its create proved it never started). */
  release(slots: number): void {
    this.inFlight = Math.max(0, this.inFlight - slots);
  }

  /** A task of the run ended while it held its slots. */
  onFinished(): void {
    this.share = nextShare(this.rule, this.share, { _tag: "Ended" });
  }

  /** The service accepted a create. */
  onCreated(): void {
    this.share = nextShare(this.rule, this.share, { _tag: "Accepted" });
  }

  /**
   * 1303 for a task of `slots` while the run held what it holds now (the refused task's
   * slots already released). Returns when the task may be sent again.
   */
  onNoSlot(slots: number, now: number, retryAfterMs?: number): number {
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
