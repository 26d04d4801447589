// The polling policy alone, at real speed, without a machine in the way: N video tasks of
// the emulator's realistic durations through S slots, polled by the engine's own timing
// (pollTiming.ts with the run's evidence, or the fixed rhythm), each freed slot refilled
// `createPathMs` after the poll that saw the end. No I/O, no clock: a seeded simulation, so
// it measures what the policy costs and leaves idle, apart from the loaded machine's delays
// that dominate the 0.003-scale bench. Used by the saturation scenario and by
// test/engine/pollTiming.test.ts.

import { Duration } from "effect";
import { DurationEvidence } from "../../src/engine/DurationEvidence.js";
import { evidenceDue, withRhythm } from "../../src/engine/pollTiming.js";
import type { Policy } from "../../src/policy/Policy.js";

export interface PollSimulationOptions {
  readonly tasks: number;
  readonly slots: number;
  readonly seed: number;
  /** Time from a poll that saw an end to the next task's create at the service. */
  readonly createPathMs: number;
  /** "adaptive": the engine's timing; "rhythm": the fixed rhythm only (as before). */
  readonly mode: "adaptive" | "rhythm";
  readonly policy: Policy;
  /** Durations (ms) of the emulator's realistic timing: queued + processing. */
  readonly queuedMs?: readonly [number, number];
  readonly processingMs?: readonly [number, number];
}

export interface PollSimulationResult {
  readonly utilisation: number;
  readonly queriesPerTask: number;
  /** Mean time from a task's end to the poll that saw it. */
  readonly endSeenAfterMs: number;
  readonly idlePerTaskMs: number;
}

const mulberry = (seed: number) => {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
};

export const simulatePolling = (o: PollSimulationOptions): PollSimulationResult => {
  const rand = mulberry(o.seed);
  const [q0, q1] = o.queuedMs ?? [10_000, 60_000];
  const [p0, p1] = o.processingMs ?? [50_000, 420_000];
  const durations = Array.from({ length: o.tasks }, () => q0 + rand() * (q1 - q0) + p0 + rand() * (p1 - p0));
  const evidence = new DurationEvidence(o.policy.durationSamples);
  const key = "video";
  const policy = o.policy;
  let next = 0;
  let now = 0;
  let lastPoll = 0;
  let queries = 0;
  let seenDelay = 0;
  let busy = 0;
  let lastEnd = 0;
  const flying: { startedAt: number; endAt: number }[] = [];
  const start = (at: number) => {
    const d = durations[next++]!;
    busy += d;
    flying.push({ startedAt: at, endAt: at + d });
  };
  while (next < o.tasks && flying.length < o.slots) start(0);
  for (let guard = 0; flying.length > 0 && guard < 10_000_000; guard++) {
    const newest = Math.max(...flying.map((f) => f.startedAt));
    const rhythmMs = Duration.toMillis(policy.pollInterval("video", now - newest));
    const bounds = {
      lastPoll,
      rhythmMs,
      floorMs: Duration.toMillis(policy.pollFloor("video")),
      ceilingMs: Duration.toMillis(policy.pollCeiling("video")),
    };
    const due =
      o.mode === "rhythm"
        ? lastPoll + rhythmMs
        : withRhythm(
            evidenceDue({ ...bounds, idleBudgetMs: Duration.toMillis(policy.pollIdleBudget("video")), tasks: flying.map((f) => ({ startedAt: f.startedAt, durations: evidence.points(key) })) }),
            bounds,
          );
    now = Math.max(now, due);
    lastPoll = now;
    queries++;
    let freed = 0;
    for (let i = flying.length - 1; i >= 0; i--) {
      const f = flying[i]!;
      if (f.endAt > now) continue;
      flying.splice(i, 1);
      seenDelay += now - f.endAt;
      lastEnd = Math.max(lastEnd, f.endAt);
      evidence.note(key, f.endAt - f.startedAt);
      freed++;
    }
    for (let i = 0; i < freed && next < o.tasks; i++) start(now + o.createPathMs);
  }
  const makespan = lastEnd;
  return {
    utilisation: busy / (o.slots * makespan),
    queriesPerTask: queries / o.tasks,
    endSeenAfterMs: seenDelay / o.tasks,
    idlePerTaskMs: (o.slots * makespan - busy) / o.tasks,
  };
};
