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

  reset(): void {
    this.offset = 0;
    this.last = 0;
  }
}
