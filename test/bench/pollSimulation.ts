// The polling policy alone, at real speed, without a machine in the way: N video tasks of
// the emulator's realistic durations through S slots, polled by the engine's own timing
// (pollTiming.ts with the run's evidence), the fixed rhythm, a fixed interval, or an
// instant poller (the bound no polling can pass: only the batch's tail is idle), each
// freed slot refilled `createPathMs` after the poll that saw the end. No I/O, no clock: a
// seeded simulation, so it measures what the policy costs and leaves idle, apart from the
// loaded machine's delays that dominate the 0.003-scale bench. The durations are drawn as
// the emulator draws them (src/emulator/Prng.ts, queued then processing, per create), so
// with the bench's seed they are the bench's own durations, in create order. Used by the
// saturation scenario and by test/engine/pollTiming.test.ts.

import { Duration } from "effect";
import { DurationEvidence } from "../../src/engine/DurationEvidence.js";
import { evidenceDue, withRhythm } from "../../src/engine/pollTiming.js";
import { Prng } from "../../src/emulator/Prng.js";
import type { Policy } from "../../src/policy/Policy.js";

export type PollMode =
  /** The engine's timing (evidence once `durationSamples` ended, the rhythm before). */
  | "adaptive"
  /** The fixed rhythm only (Policy.pollInterval). */
  | "rhythm"
  /** Every end seen the moment it happens, at no cost: the bound (the batch's tail). */
  | "instant"
  /** A fixed interval (ms), whatever the tasks. */
  | { readonly everyMs: number };

export interface PollSimulationOptions {
  readonly tasks: number;
  readonly slots: number;
  /** The emulator's seed: the same seed gives the same durations in create order. */
  readonly seed: number;
  /** Time from a poll that saw an end to the next task's create at the service. */
  readonly createPathMs: number;
  readonly mode: PollMode;
  readonly policy: Policy;
  /** Durations (ms) of the emulator's timing: queued + processing, each uniform. */
  readonly queuedMs?: readonly [number, number];
  readonly processingMs?: readonly [number, number];
}

export interface PollSimulationResult {
  readonly utilisation: number;
  /** Queries (one poll = one request for every task in flight) per task. */
  readonly queriesPerTask: number;
  /** Mean time from a task's end to the poll that saw it. */
  readonly endSeenAfterMs: number;
  readonly idlePerTaskMs: number;
}

/** The durations the emulator gives its first `n` creates with this seed (TaskStore.createNew's draws, unscaled). */
export const emulatorDurations = (seed: number, n: number, queuedMs: readonly [number, number], processingMs: readonly [number, number]): number[] => {
  const prng = new Prng(seed);
  return Array.from({ length: n }, () => prng.between(queuedMs[0], queuedMs[1]) + prng.between(processingMs[0], processingMs[1]));
};

export const simulatePolling = (o: PollSimulationOptions): PollSimulationResult => {
  const durations = emulatorDurations(o.seed, o.tasks, o.queuedMs ?? [10_000, 60_000], o.processingMs ?? [50_000, 420_000]);
  const evidence = new DurationEvidence(o.policy.durationSamples);
  const key = "video";
  const policy = o.policy;
  const mode = o.mode;
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
  const floorMs = Duration.toMillis(policy.pollFloor("video"));
  const ceilingMs = Duration.toMillis(policy.pollCeiling("video"));
  const idleBudgetMs = Duration.toMillis(policy.pollIdleBudget("video"));
  // Bounded: every pass polls at least the floor (or 1 ms) later, or at the next end.
  for (let guard = 0; flying.length > 0 && guard < 10_000_000; guard++) {
    let due: number;
    if (mode === "instant") due = Math.min(...flying.map((f) => f.endAt));
    else if (typeof mode === "object") due = lastPoll + Math.max(1, mode.everyMs);
    else {
      const newest = Math.max(...flying.map((f) => f.startedAt));
      const rhythmMs = Duration.toMillis(policy.pollInterval("video", now - newest));
      const bounds = { lastPoll, rhythmMs, floorMs, ceilingMs };
      const points = evidence.points(key);
      due = mode === "rhythm" ? lastPoll + rhythmMs : withRhythm(evidenceDue({ ...bounds, idleBudgetMs, tasks: flying.map((f) => ({ startedAt: f.startedAt, durations: points })) }), bounds);
    }
    now = Math.max(now, due);
    lastPoll = now;
    if (mode !== "instant") queries++;
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

/**
 * The fixed interval (and the utilisation it reaches) at which polling spends `queriesPerTask`
 * (mean over the seeds): the reference the adaptive timing is held against at the same
 * request count. Bisection over the interval, bounded.
 */
export const periodicAtQueries = (
  o: Omit<PollSimulationOptions, "mode" | "seed">,
  seeds: readonly number[],
  queriesPerTask: number,
): { everyMs: number; utilisation: number; queriesPerTask: number } => {
  const run = (everyMs: number) => seeds.map((seed) => simulatePolling({ ...o, seed, mode: { everyMs } }));
  const mean = (rs: readonly PollSimulationResult[], f: (r: PollSimulationResult) => number) => rs.reduce((a, r) => a + f(r), 0) / rs.length;
  let lo = 1_000;
  let hi = 120_000;
  for (let i = 0; i < 20 && hi - lo > 50; i++) {
    const mid = (lo + hi) / 2;
    if (mean(run(mid), (r) => r.queriesPerTask) > queriesPerTask) lo = mid;
    else hi = mid;
  }
  const rs = run(hi);
  return { everyMs: hi, utilisation: mean(rs, (r) => r.utilisation), queriesPerTask: mean(rs, (r) => r.queriesPerTask) };
};

/**
 * The fewest queries per task a fixed interval needs to reach `utilisation` on every one
 * of the seeds (create path as given), or undefined past 50 queries per task: what the
 * goal costs by polling in this scenario, whatever the timing (the adaptive timing does
 * no better than a fixed interval at the same request count here, see saturation.ts).
 */
export const queriesForUtilisation = (o: Omit<PollSimulationOptions, "mode" | "seed">, seeds: readonly number[], utilisation: number): number | undefined => {
  const run = (everyMs: number) => seeds.map((seed) => simulatePolling({ ...o, seed, mode: { everyMs } }));
  const ok = (rs: readonly PollSimulationResult[]) => rs.every((r) => r.utilisation >= utilisation);
  let lo = 1_000;
  let hi = 60_000;
  if (!ok(run(lo))) return undefined;
  for (let i = 0; i < 20 && hi - lo > 50; i++) {
    const mid = (lo + hi) / 2;
    if (ok(run(mid))) lo = mid;
    else hi = mid;
  }
  const rs = run(lo);
  return rs.reduce((a, r) => a + r.queriesPerTask, 0) / rs.length;
};
