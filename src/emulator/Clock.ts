// The emulator's clock: wall time plus an offset that tests move forward. It never runs
// backwards, so creation order and time order of tasks always agree.

export class EmulatorClock {
  private offset = 0;
  private last = 0;

  now(): number {
    const t = Date.now() + this.offset;
    if (t > this.last) this.last = t;
    return this.last;
  }

  advance(ms: number): void {
    this.offset += ms;
  }

  /** The offset and the latest time given, to be kept between processes (EmulatorState). */
  saved(): { readonly offsetMs: number; readonly lastMs: number } {
    return { offsetMs: this.offset, lastMs: this.last };
  }

  /** Continues a saved clock: the same offset from wall time, never before the time it last gave. */
  restore(saved: { readonly offsetMs: number; readonly lastMs: number }): void {
    this.offset = saved.offsetMs;
    this.last = Math.max(this.last, saved.lastMs);
  }

  reset(): void {
    this.offset = 0;
    this.last = 0;
  }
}
