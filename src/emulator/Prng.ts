// A small seeded pseudo-random generator (mulberry32), so every random choice of the
// emulator (durations, failures, faults) replays exactly from its seed.

export class Prng {
  private state: number;

  constructor(seed: number) {
    this.state = (seed >>> 0) ^ 0x9e3779b9;
  }

  /** Where the sequence is: `Prng.resume(p.position)` draws what `p` would draw next. */
  get position(): number {
    return this.state >>> 0;
  }

  /** A generator that continues from `position` (a number `position` gave). */
  static resume(position: number): Prng {
    const p = new Prng(0);
    p.state = position >>> 0;
    return p;
  }

  /** Uniform in [0, 1). */
  next(): number {
    let t = (this.state = (this.state + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** True with probability p (never draws when p is 0, so switching a fault off keeps other draws aligned). */
  chance(p: number): boolean {
    return p > 0 && this.next() < p;
  }

  /** Uniform integer in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  /** Uniform real in [min, max]. */
  between(min: number, max: number): number {
    return min + this.next() * (max - min);
  }
}
