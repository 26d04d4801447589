// Scenario 1, saturation: N video tasks against an account of 8 video slots, realistic
// durations (1 to 8 minutes) compressed by `timeScale`. Three runs on the same seeded
// durations: the engine as it runs against this emulator (callbacks on, since the
// service is on loopback), the engine following by polling only (a real service without
// a public callback address), and the naive baseline that polls each task every 1 s. The
// engine's policy and the naive interval are compressed by the same factor, so all see
// the same world, only faster. Slot use and requests come from the emulator's counters.

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { realisticTiming } from "../../src/emulator/EmulatorConfig.js";
import type { EmulatorStats } from "../../src/emulator/Emulator.js";
import { makePolicy } from "../../src/policy/Policy.js";
import { runManifest } from "../../src/run/runManifest.js";
import { writeVideoManifest } from "./benchManifest.js";
import { round, type BenchFigure, type ScenarioResult } from "./BenchFigure.js";
import { startEmulatorProcess, type EmulatorProcess } from "./EmulatorProcess.js";
import { runNaivePoller } from "./naivePoller.js";
import { periodicAtQueries, queriesForUtilisation, simulatePolling, type PollMode, type PollSimulationResult } from "./pollSimulation.js";
import { perTask, requestCounts, type RequestCounts } from "./requestCounts.js";
import { startResourceMeter, type ResourceFigures } from "./ResourceMeter.js";
import { slotGaps, videoTimes, type SlotGaps, type TimedEvent } from "./slotGaps.js";

export interface SaturationOptions {
  readonly tasks: number;
  readonly slots: number;
  /** 0.003: one real-service second lasts 3 ms. */
  readonly timeScale: number;
  readonly seed: number;
  readonly label: string;
}

interface RunFigures {
  readonly busyMs: number;
  readonly makespanMs: number;
  readonly lowerBoundMs: number;
  readonly utilisation: number;
  readonly ratio: number;
  readonly peak: number;
  readonly requests: RequestCounts;
  readonly rejections: Record<string, number>;
}

/** Slot figures of one run, all from the emulator. */
const runFigures = (s: EmulatorStats, slots: number): RunFigures => {
  const busyMs = s.slots.video.busyMs;
  const makespanMs = (s.lastFinishAt ?? 0) - (s.firstCreateAt ?? 0);
  // Every task holds one slot from its create to its end, so busyMs is the sum of the
  // tasks' durations and busyMs / slots the shortest possible makespan.
  const lowerBoundMs = busyMs / slots;
  return {
    busyMs,
    makespanMs,
    lowerBoundMs,
    utilisation: busyMs / (slots * makespanMs),
    ratio: makespanMs / lowerBoundMs,
    peak: s.slots.video.peak,
    requests: requestCounts(s),
    rejections: s.rejections,
  };
};

const engineRun = async (
  emulator: EmulatorProcess,
  o: SaturationOptions,
  callbacks: boolean,
): Promise<RunFigures & { gaps: SlotGaps; runner: ResourceFigures; created: number; noSlotAnswers: number }> => {
  await emulator.reset(); // same seed again: every run gets the same durations in create order
  const dir = mkdtempSync(join(tmpdir(), "omnibatch-bench-sat-"));
  try {
    const file = writeVideoManifest({ dir, name: `bench-saturation-${callbacks ? "cb" : "poll"}`, count: o.tasks, concurrency: o.slots });
    const events: TimedEvent[] = [];
    const meter = startResourceMeter();
    const summary = await runManifest(file, {
      onEvent: (event) => {
        if (event.type === "task") events.push({ at: Date.now(), event });
      },
      baseUrl: emulator.url,
      env: { OMNIBATCH_API_KEY: emulator.apiKey },
      policy: makePolicy(o.timeScale),
      concurrency: o.slots,
      ...(callbacks ? {} : { callbacks: false }),
    });
    const runner = meter.stop();
    if (summary.exitCode !== 0) throw new Error(`saturation: the engine ended with exit ${summary.exitCode} (${summary.reason ?? ""})`);
    const figures = runFigures(await emulator.stats(), o.slots);
    // Read after the figures above, so these queries are not counted.
    const taskIds = [...new Set(events.flatMap(({ event }) => (event.type === "task" ? [event.id] : [])))];
    const gaps = slotGaps(events, await videoTimes(emulator.url, emulator.apiKey, taskIds), o.slots);
    return { ...figures, gaps, runner, created: summary.created, noSlotAnswers: summary.noSlotAnswers };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
};

export const saturation = async (o: SaturationOptions): Promise<ScenarioResult> => {
  const emulator = await startEmulatorProcess({
    seed: o.seed,
    slots: { video: o.slots, image: o.slots },
    timing: { ...realisticTiming, scale: o.timeScale },
  });
  try {
    const engine = await engineRun(emulator, o, true);
    const polling = await engineRun(emulator, o, false);

    await emulator.reset();
    const pollMs = 1000 * o.timeScale;
    const naiveRun = await runNaivePoller({
      baseUrl: emulator.url,
      apiKey: emulator.apiKey,
      prompts: Array.from({ length: o.tasks }, (_, i) => `bench clip ${i}, a slow pan over a harbour`),
      concurrency: o.slots,
      pollMs,
      timeoutMs: 10 * 60_000,
    });
    const naive = runFigures(await emulator.stats(), o.slots);

    const ep = perTask(engine.requests, o.tasks);
    const pp = perTask(polling.requests, o.tasks);
    const np = perTask(naive.requests, o.tasks);
    const kinds = (p: ReturnType<typeof perTask>) => `${round(p.create, 2)} / ${round(p.query, 2)} / ${round(p.list, 2)} / ${round(p.download, 2)} (create / query / list / download)`;
    const gapNote = (g: SlotGaps, busyMs: number) =>
      `end seen after ${round(g.pollDelayMs, 1)} ms + create path ${round(g.createPathMs, 1)} ms (submitting event -> service create_time); mean task ${Math.round(busyMs / o.tasks)} ms`;
    const s = o.label;
    // The polling policy alone at real speed (no machine load): what the policy itself
    // costs and leaves idle, on this run's own durations (the emulator's seed) and on five
    // other seeds of the same distribution, beside the references that say what any
    // timing can do here: an instant poller (only the batch's tail idles), a fixed
    // interval spending the same queries, and the queries a poller needs for 0.97.
    const seeds = [o.seed, ...[1, 2, 3, 4, 5].map((k) => o.seed + 1000 * k)];
    const sim = { tasks: o.tasks, slots: o.slots, createPathMs: 0, policy: makePolicy(1), queuedMs: realisticTiming.video.queuedMs, processingMs: realisticTiming.video.processingMs };
    const simulate = (mode: PollMode) => seeds.map((seed) => simulatePolling({ ...sim, seed, mode }));
    const simAdaptive = simulate("adaptive");
    const simRhythm = simulate("rhythm");
    const simInstant = simulate("instant");
    const meanOf = (rs: readonly PollSimulationResult[], f: (r: PollSimulationResult) => number) => rs.reduce((a, r) => a + f(r), 0) / rs.length;
    const adaptiveQueries = meanOf(simAdaptive, (r) => r.queriesPerTask);
    const periodic = periodicAtQueries(sim, seeds, adaptiveQueries);
    // The create path measured in the polling run, at real speed.
    const createPathRealMs = Math.max(0, polling.gaps.createPathMs / o.timeScale);
    const needed = queriesForUtilisation(sim, seeds, 0.97);
    const neededWithPath = queriesForUtilisation({ ...sim, createPathMs: createPathRealMs }, seeds, 0.97);
    const range = (xs: readonly number[], digits: number) => `${round(Math.min(...xs), digits)} to ${round(Math.max(...xs), digits)}`;
    const simNote = (rs: readonly PollSimulationResult[]) =>
      `this run's durations (seed ${o.seed}): utilisation ${round(rs[0]!.utilisation, 3)}, end seen after ${round(rs[0]!.endSeenAfterMs / 1000, 1)} s; ${seeds.length} seeds: ${range(rs.map((r) => r.utilisation), 3)}, ${range(rs.map((r) => r.queriesPerTask), 2)} req (real speed, create path 0)`;
    // Where the polling run's idle slot-time went, in real seconds (ms at scale ÷ scale).
    const real = (msAtScale: number) => round(msAtScale / o.timeScale / 1000, 1);
    const tailMs = simInstant[0]!.idlePerTaskMs * o.timeScale;
    const idleSplit = `tail ${real(tailMs)} s (instant poller, this run's durations) + end seen ${real(polling.gaps.pollDelayMs)} s (policy alone: ${round(simAdaptive[0]!.endSeenAfterMs / 1000, 1)} s) + create path ${real(polling.gaps.createPathMs)} s + the rest ${real(polling.gaps.idlePerTaskMs - tailMs - polling.gaps.pollDelayMs - polling.gaps.createPathMs)} s; 0.97 allows ${round((0.03 / 0.97) * (polling.busyMs / o.tasks / o.timeScale / 1000), 1)} s`;
    const figures: BenchFigure[] = [
      {
        scenario: s,
        figure: "time scale",
        value: o.timeScale,
        unit: "×",
        note: `real video durations × ${o.timeScale}: 1 real s = ${pollMs} ms; engine makePolicy(${o.timeScale}); naive polls every ${pollMs} ms (= 1 s real)`,
      },
      { scenario: s, figure: "slot utilisation (engine, callbacks)", value: round(engine.utilisation), unit: "", goal: { op: ">=", target: 0.97 }, note: "emulator busyMs / (slots × makespan)" },
      { scenario: s, figure: "makespan ÷ lower bound (engine, callbacks)", value: round(engine.ratio), unit: "×", note: "bound = Σ task slot-time ÷ slots" },
      { scenario: s, figure: "non-download requests per task (engine, callbacks)", value: round(ep.api), unit: "req", goal: { op: "<=", target: 1.5 }, note: kinds(ep) },
      { scenario: s, figure: "  idle slot-time per task (engine, callbacks)", value: round(engine.gaps.idlePerTaskMs, 1), unit: "ms", note: gapNote(engine.gaps, engine.busyMs) },
      { scenario: s, figure: "slot utilisation (engine, polling only)", value: round(polling.utilisation), unit: "", goal: { op: ">=", target: 0.97 }, note: "callbacks: false, as against a real service without a public callback address" },
      { scenario: s, figure: "non-download requests per task (engine, polling only)", value: round(pp.api), unit: "req", goal: { op: "<=", target: 3.5 }, note: kinds(pp) },
      { scenario: s, figure: "  idle slot-time per task (engine, polling only)", value: round(polling.gaps.idlePerTaskMs, 1), unit: "ms", note: gapNote(polling.gaps, polling.busyMs) },
      { scenario: s, figure: "  idle slot-time per task, where it went (polling only)", value: real(polling.gaps.idlePerTaskMs), unit: "s real", note: idleSplit },
      { scenario: s, figure: "  policy alone, simulated: queries per task (adaptive)", value: round(adaptiveQueries, 2), unit: "req", note: simNote(simAdaptive) },
      { scenario: s, figure: "  policy alone, simulated: queries per task (fixed rhythm)", value: round(meanOf(simRhythm, (r) => r.queriesPerTask), 2), unit: "req", note: simNote(simRhythm) },
      {
        scenario: s,
        figure: "  simulated: a fixed interval at the adaptive's queries per task",
        value: round(periodic.utilisation, 4),
        unit: "",
        note: `every ${round(periodic.everyMs / 1000, 1)} s: ${round(periodic.queriesPerTask, 2)} req, utilisation ${round(periodic.utilisation, 4)} against the adaptive's ${round(meanOf(simAdaptive, (r) => r.utilisation), 4)} (mean of ${seeds.length} seeds)`,
      },
      {
        scenario: s,
        figure: "  simulated: instant poller (the batch's tail only)",
        value: round(meanOf(simInstant, (r) => r.utilisation), 4),
        unit: "",
        note: `utilisation ${range(simInstant.map((r) => r.utilisation), 4)} over ${seeds.length} seeds; idle per task ${range(simInstant.map((r) => r.idlePerTaskMs / 1000), 1)} s: no poller passes this`,
      },
      {
        scenario: s,
        figure: "  simulated: queries per task a poller needs for 0.97",
        value: needed === undefined ? -1 : round(needed, 2),
        unit: "req",
        note: `(-1: unreachable) on every one of ${seeds.length} seeds, at a fixed interval, create path 0 (+ 1 create = ${needed === undefined ? "unreachable" : round(needed + 1, 2)} non-download requests); with this run's create path (${round(createPathRealMs / 1000, 1)} s real): ${neededWithPath === undefined ? "unreachable" : `${round(neededWithPath, 2)} (+ 1 create)`}`,
      },
      { scenario: s, figure: "slot utilisation (naive 1 s poller)", value: round(naive.utilisation), unit: "" },
      { scenario: s, figure: "makespan ÷ lower bound (naive)", value: round(naive.ratio), unit: "×" },
      { scenario: s, figure: "non-download requests per task (naive)", value: round(np.api), unit: "req", note: kinds(np) },
      { scenario: s, figure: "naive ÷ engine requests per task", value: round(np.api / ep.api, 1), unit: "×", note: `polling only: ${round(np.api / pp.api, 1)} ×` },
      { scenario: s, figure: "engine ÷ naive makespan", value: round(engine.makespanMs / naive.makespanMs), unit: "×", note: `polling only: ${round(polling.makespanMs / naive.makespanMs, 3)} ×` },
      { scenario: s, figure: "runner CPU (engine, callbacks)", value: Math.round(engine.runner.cpuUserMs + engine.runner.cpuSystemMs), unit: "ms", note: `wall ${Math.round(engine.runner.wallMs)} ms` },
    ];
    return {
      figures,
      details: {
        tasks: o.tasks,
        slots: o.slots,
        timeScale: o.timeScale,
        scaling: `emulator timing = realistic video durations (queued 10-60 s + processing 50-420 s) × ${o.timeScale}; engine policy = makePolicy(${o.timeScale}); naive poll = 1 s × ${o.timeScale} = ${pollMs} ms`,
        seed: o.seed,
        engine,
        polling,
        simulated: { seeds, adaptive: simAdaptive, rhythm: simRhythm, instant: simInstant, periodic, queriesFor097: needed ?? null, queriesFor097WithCreatePath: neededWithPath ?? null },
        naive: { ...naive, wallMs: naiveRun.wallMs, finished: naiveRun.finished, failed: naiveRun.failed },
      },
    };
  } finally {
    await emulator.close();
  }
};
