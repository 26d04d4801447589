// The account's concurrency slots for one product type, as the engine believes them.
// The manifest's `concurrency` is the ceiling; a 1303 ("no slot") proves the real quota
// is lower, so the limit in use drops multiplicatively and climbs back one slot at a time
// (AIMD), finding the quota without being told. Pure bookkeeping, no effects.

export class SlotLimiter {
  private limitInUse: number;
  private inFlight = 0;
  private cleanFinishes = 0;
  private strikes = 0;

  constructor(
    readonly ceiling: number,
    private readonly decrease: number,
    private readonly increaseAfter: number,
  ) {
    this.limitInUse = ceiling;
  }

  get limit(): number {
    return Math.floor(this.limitInUse);
  }

  get used(): number {
    return this.inFlight;
  }

  /**
   * Whether a task holding `slots` may start now. A task bigger than the whole limit
   * may still start alone, or it could never run.
   */
  fits(slots: number): boolean {
    if (this.inFlight === 0) return true;
    return this.inFlight + slots <= this.limit;
  }

  take(slots: number): void {
    this.inFlight += slots;
  }

  /** The task ended (or its create proved it never started). */
  release(slots: number): void {
    this.inFlight = Math.max(0, this.inFlight - slots);
  }

  /**
   * A task finished while we held the limit: evidence the limit is fine. Grow by one slot
   * per window of clean finishes (classic additive increase), so probing above the real
   * quota costs one 1303 per window, not one per task.
   */
  onFinished(): void {
    this.cleanFinishes += 1;
    // Each time the limit had to drop, probing again waits twice as long: an account's
    // quota does not change within a run, so repeated probes would only cost 1303s.
    const window = Math.max(this.increaseAfter, this.limit) * 2 ** Math.min(this.strikes, 6);
    if (this.cleanFinishes >= window && this.limitInUse < this.ceiling) {
      this.cleanFinishes = 0;
      this.limitInUse = Math.min(this.ceiling, this.limitInUse + 1);
    }
  }

  /**
   * 1303 while we held `holding` slots: the service has fewer than holding + the rejected
   * task's slots. Drop to what it proved it holds, scaled by the decrease factor, never
   * below one slot.
   */
  onNoSlot(holding: number): void {
    this.cleanFinishes = 0;
    const next = Math.max(1, Math.floor(Math.min(this.limitInUse, holding) * this.decrease));
    if (next < this.limit) this.strikes += 1;
    this.limitInUse = next;
  }
}
