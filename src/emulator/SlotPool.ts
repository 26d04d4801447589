// The account's concurrency slots per product type: who holds how many, the peak, the
// slot-time integral (busyMs, for utilisation = busyMs / (limit x makespan)), and a
// bounded timeline of occupancy samples.

export type ProductKind = "video" | "image";

export interface SlotSample {
  readonly t: number;
  readonly video: number;
  readonly image: number;
}

export interface SlotFigures {
  readonly limit: number;
  readonly inUse: number;
  readonly peak: number;
  /** Slot-milliseconds held so far (slots x time), tasks in flight included up to now. */
  readonly busyMs: number;
}

const maxSamples = 4096;

class KindSlots {
  inUse = 0;
  peak = 0;
  /** Slot-ms of tasks that have ended. */
  closedMs = 0;
  /** Sum of slots x start time of tasks in flight: open slot-ms = inUse x now - this. */
  openStartSum = 0;
}

export class SlotPool {
  private readonly kinds: Record<ProductKind, KindSlots> = { video: new KindSlots(), image: new KindSlots() };
  private samples: SlotSample[] = [];
  /** Keep every `stride`-th sample once the timeline was thinned. */
  private stride = 1;
  private skipped = 0;

  inUse(kind: ProductKind): number {
    return this.kinds[kind].inUse;
  }

  take(kind: ProductKind, slots: number, at: number): void {
    const k = this.kinds[kind];
    k.inUse += slots;
    k.openStartSum += slots * at;
    if (k.inUse > k.peak) k.peak = k.inUse;
    this.sample(at);
  }

  release(kind: ProductKind, slots: number, takenAt: number, at: number): void {
    const k = this.kinds[kind];
    k.inUse -= slots;
    k.openStartSum -= slots * takenAt;
    k.closedMs += slots * (at - takenAt);
    this.sample(at);
  }

  figures(kind: ProductKind, limit: number, now: number): SlotFigures {
    const k = this.kinds[kind];
    return { limit, inUse: k.inUse, peak: k.peak, busyMs: k.closedMs + (k.inUse * now - k.openStartSum) };
  }

  timeline(): readonly SlotSample[] {
    return this.samples;
  }

  private sample(t: number): void {
    if (++this.skipped < this.stride) return;
    this.skipped = 0;
    this.samples.push({ t, video: this.kinds.video.inUse, image: this.kinds.image.inUse });
    if (this.samples.length >= maxSamples) {
      // Thin to every other sample: the timeline keeps its whole span at half the detail.
      this.samples = this.samples.filter((_, i) => i % 2 === 0);
      this.stride *= 2;
    }
  }
}
