// A binary min-heap of timed task transitions, ordered by time then task creation
// order, so that settling the clock processes transitions in the order they happened.

export interface TimedEvent {
  readonly at: number;
  readonly seq: number;
  readonly phase: "processing" | "end";
}

const before = (a: TimedEvent, b: TimedEvent): boolean =>
  a.at < b.at || (a.at === b.at && (a.seq < b.seq || (a.seq === b.seq && a.phase === "processing" && b.phase === "end")));

export class EventQueue {
  private readonly heap: TimedEvent[] = [];

  get size(): number {
    return this.heap.length;
  }

  peek(): TimedEvent | undefined {
    return this.heap[0];
  }

  push(e: TimedEvent): void {
    const h = this.heap;
    h.push(e);
    let i = h.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(h[i]!, h[parent]!)) break;
      [h[i], h[parent]] = [h[parent]!, h[i]!];
      i = parent;
    }
  }

  pop(): TimedEvent | undefined {
    const h = this.heap;
    const top = h[0];
    const last = h.pop();
    if (h.length > 0 && last !== undefined) {
      h[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < h.length && before(h[l]!, h[m]!)) m = l;
        if (r < h.length && before(h[r]!, h[m]!)) m = r;
        if (m === i) break;
        [h[i], h[m]] = [h[m]!, h[i]!];
        i = m;
      }
    }
    return top;
  }

  clear(): void {
    this.heap.length = 0;
  }
}
