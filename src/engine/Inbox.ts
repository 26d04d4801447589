// The controller's inbox: what workers and the outside report (a create's answer, a
// download's end, a callback, a stop) as plain data, taken in the order it came, and the
// one place the loop waits. A wait ends at the first message or at the time asked, on
// Effect's clock (a TestClock moves it). The loop waits once or more per task: an Effect
// queue taken with a timeout forked a racing pair of fibers on every wait, so here a
// message is one push and a wait is one callback, and a sleeping fiber (the alarm) is
// forked only when the loop asks to wake earlier than any alarm already set.

import { Duration, Effect, FiberSet } from "effect";

export class Inbox<A> {
  private items: (A | undefined)[] = [];
  private head = 0;
  /** Resumes the loop's wait, while it waits. */
  private waiter: (() => void) | undefined;
  /** Wake-up times of the alarms sleeping now (a few at most). */
  private readonly alarms = new Set<number>();

  constructor(private readonly sleepers: FiberSet.FiberSet<void, never>) {}

  /** Adds a message (any fiber, any callback); wakes the loop if it waits. */
  offer(message: A): void {
    this.items.push(message);
    this.wake();
  }

  /** The oldest message not taken yet, without waiting. */
  take(): A | undefined {
    if (this.head >= this.items.length) return undefined;
    const message = this.items[this.head];
    this.items[this.head++] = undefined;
    if (this.head === this.items.length) {
      this.items = [];
      this.head = 0;
    }
    return message;
  }

  get size(): number {
    return this.items.length - this.head;
  }

  /**
   * Waits for a message, or until `until` (ms on the clock that `now` reads). An alarm
   * already set at or before `until` serves (it may wake the loop early: the loop then
   * looks again and waits anew); otherwise one is set for `until`.
   */
  waitUntil(until: number, now: number): Effect.Effect<void> {
    if (this.size > 0 || until <= now) return Effect.void;
    let covered = false;
    for (const at of this.alarms) if (at <= until) covered = true;
    const wait = Effect.async<void>((resume) => {
      if (this.size > 0) return resume(Effect.void);
      this.waiter = () => resume(Effect.void);
      return Effect.sync(() => {
        this.waiter = undefined;
      });
    });
    if (covered) return wait;
    this.alarms.add(until);
    const alarm = Effect.zipRight(
      Effect.sleep(Duration.millis(until - now)),
      Effect.sync(() => {
        this.alarms.delete(until);
        this.wake();
      }),
    );
    return Effect.zipRight(FiberSet.run(this.sleepers, alarm), wait);
  }

  private wake(): void {
    const resume = this.waiter;
    if (resume === undefined) return;
    this.waiter = undefined;
    resume();
  }
}
