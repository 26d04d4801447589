// What the run knows about callbacks: which tasks have been heard from, how long tasks
// take (from the service's answers), and cues that came before their create was confirmed. From that it
// stretches the polling rhythm while callbacks flow, and restores it as soon as a task
// is unheard or overdue, so a lost callback costs at most one normal poll interval more.

import { Duration } from "effect";
import type { CallbackObservation } from "../callbacks/CallbackListener.js";
import type { Policy, ProductKind } from "../policy/Policy.js";

export interface FlyingTask {
  readonly taskId: string | undefined;
  /** Since it was sent (or adopted). */
  readonly ageMs: number;
}

export class CallbackWatch {
  private readonly heard = new Set<string>();
  private readonly everHeard: Record<ProductKind, boolean> = { video: false, image: false };
  private readonly finished: Record<ProductKind, { count: number; maxMs: number }> = {
    video: { count: 0, maxMs: 0 },
    image: { count: 0, maxMs: 0 },
  };
  private readonly early = new Map<string, CallbackObservation>();

  constructor(private readonly policy: Policy) {}

  /** A callback about `taskId` was accepted (a cue only: nothing in it is believed). */
  noteHeard(kind: ProductKind, taskId: string): void {
    this.heard.add(taskId);
    this.everHeard[kind] = true;
  }

  /** The service's own answer shows a task finished: teaches how long tasks take (service clock). */
  noteFinished(kind: ProductKind, createdAt: number, updatedAt: number): void {
    const f = this.finished[kind];
    f.count++;
    f.maxMs = Math.max(f.maxMs, Math.max(0, updatedAt - createdAt));
  }

  /** Keeps an observation that arrived before its create was confirmed (latest wins). */
  stash(externalId: string, observation: CallbackObservation): void {
    this.early.set(externalId, observation);
  }

  takeEarly(externalId: string): CallbackObservation | undefined {
    const o = this.early.get(externalId);
    this.early.delete(externalId);
    return o;
  }

  /** How long a task of this kind may take before its silence is suspicious. */
  expectedMs(kind: ProductKind): number {
    const f = this.finished[kind];
    return f.count >= this.policy.callbackSamples ? f.maxMs : Duration.toMillis(this.policy.expectedDuration(kind));
  }

  /**
   * The stretched interval once callbacks of this kind arrive, while every task in flight
   * has been heard from (or is within a short grace after its create) and none is
   * overdue; otherwise the normal one.
   */
  pollInterval(kind: ProductKind, normal: Duration.Duration, flying: readonly FlyingTask[]): Duration.Duration {
    const grace = Duration.toMillis(this.policy.callbackGrace);
    const overdue = this.expectedMs(kind) * this.policy.callbackOverdueFactor;
    // Until one callback of this kind arrives, nothing says they reach us at all.
    if (!this.everHeard[kind]) return normal;
    for (const t of flying) {
      const heard = t.taskId !== undefined && this.heard.has(t.taskId);
      if (!heard && t.ageMs > grace) return normal;
      if (t.ageMs > overdue) return normal;
    }
    return Duration.max(normal, this.policy.callbackPollInterval(kind));
  }
}
