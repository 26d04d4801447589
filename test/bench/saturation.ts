// Scenario 1, saturation: N video tasks against an account of 8 video slots, realistic
// durations (1 to 8 minutes) compressed by `timeScale`. The engine runs with its policy
// compressed by the same factor; the naive baseline polls each task every 1 s, also
// compressed, so both see the same world, only faster. Slot use and requests come from
// the emulator's own counters.

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { realisticTiming } from "../../src/emulator/EmulatorConfig.js";
import type { EmulatorStats } from "../../src/emulator/Emulator.js";
import { makePolicy } from "../../src/engine/Policy.js";
import { runManifest } from "../../src/engine/runManifest.js";
import { writeVideoManifest } from "./benchManifest.js";
import { round, type BenchFigure, type ScenarioResult } from "./BenchFigure.js";
import { startEmulatorProcess } from "./EmulatorProcess.js";
import { runNaivePoller } from "./naivePoller.js";
import { perTask, requestCounts } from "./requestCounts.js";
import { startResourceMeter } from "./ResourceMeter.js";
import { slotGaps, videoTimes, type TimedEvent } from "./slotGaps.js";

export interface SaturationOptions {
  readonly tasks: number;
  readonly slots: number;
  /** 0.003: one real-service second lasts 3 ms. */
  readonly timeScale: number;
  readonly seed: number;
  readonly label: string;
}

/** Slot figures of one run, all from the emulator. */
const slotFigures = (s: EmulatorStats, slots: number) => {
  const busyMs = s.slots.video.busyMs;
  const makespanMs = (s.lastFinishAt ?? 0) - (s.firstCreateAt ?? 0);
  // Every task holds one slot from its create to its end, so busyMs is the sum of the
  // tasks' durations and busyMs / slots the shortest possible makespan.
  const lowerBoundMs = busyMs / slots;
  return { busyMs, makespanMs, lowerBoundMs, utilisation: busyMs / (slots * makespanMs), ratio: makespanMs / lowerBoundMs, peak: s.slots.video.peak };
};

export const saturation = async (o: SaturationOptions): Promise<ScenarioResult> => {
  const emulator = await startEmulatorProcess({
    seed: o.seed,
    slots: { video: o.slots, image: o.slots },
    timing: { ...realisticTiming, scale: o.timeScale },
  });
  const dir = mkdtempSync(join(tmpdir(), "omnibatch-bench-sat-"));
  try {
    const file = writeVideoManifest({ dir, name: "bench-saturation", count: o.tasks, concurrency: o.slots });
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
    });
    const runner = meter.stop();
    if (summary.exitCode !== 0) throw new Error(`saturation: the engine ended with exit ${summary.exitCode} (${summary.reason ?? ""})`);
    const engineStats = await emulator.stats();
    const engine = slotFigures(engineStats, o.slots);
    const engineReq = requestCounts(engineStats);

    // Read after the figures above, so these queries are not counted.
    const taskIds = [...new Set(events.flatMap(({ event }) => (event.type === "task" ? [event.id] : [])))];
    const gaps = slotGaps(events, await videoTimes(emulator.url, emulator.apiKey, taskIds), o.slots);

    await emulator.reset(); // same seed again: the naive run gets the same durations in create order
    const pollMs = 1000 * o.timeScale;
    const naiveRun = await runNaivePoller({
      baseUrl: emulator.url,
      apiKey: emulator.apiKey,
      prompts: Array.from({ length: o.tasks }, (_, i) => `bench clip ${i}, a slow pan over a harbour`),
      concurrency: o.slots,
      pollMs,
      timeoutMs: 10 * 60_000,
    });
    const naiveStats = await emulator.stats();
    const naive = slotFigures(naiveStats, o.slots);
    const naiveReq = requestCounts(naiveStats);
    const ep = perTask(engineReq, o.tasks);
    const np = perTask(naiveReq, o.tasks);

    const s = o.label;
    const figures: BenchFigure[] = [
      {
        scenario: s,
        figure: "time scale",
        value: o.timeScale,
        unit: "×",
        note: `real video durations × ${o.timeScale}: 1 real s = ${pollMs} ms; engine makePolicy(${o.timeScale}); naive polls every ${pollMs} ms (= 1 s real)`,
      },
      { scenario: s, figure: "slot utilisation (engine)", value: round(engine.utilisation), unit: "", goal: { op: ">=", target: 0.97 }, note: "emulator busyMs / (slots × makespan)" },
      { scenario: s, figure: "makespan ÷ lower bound (engine)", value: round(engine.ratio), unit: "×", note: "bound = Σ task slot-time ÷ slots" },
      { scenario: s, figure: "non-download requests per task (engine)", value: round(ep.api), unit: "req", goal: { op: "<=", target: 1.5 } },
      { scenario: s, figure: "  create / query / list / download per task (engine)", value: round(ep.create), unit: "", note: `${round(ep.create, 2)} / ${round(ep.query, 2)} / ${round(ep.list, 2)} / ${round(ep.download, 2)}` },
      {
        scenario: s,
        figure: "  idle slot-time per task (engine)",
        value: round(gaps.idlePerTaskMs, 1),
        unit: "ms",
        note: `poll delay ${round(gaps.pollDelayMs, 1)} ms + create path ${round(gaps.createPathMs, 1)} ms (submitting event -> service create_time); mean task ${Math.round(engine.busyMs / o.tasks)} ms`,
      },
      { scenario: s, figure: "slot utilisation (naive 1 s poller)", value: round(naive.utilisation), unit: "" },
      { scenario: s, figure: "makespan ÷ lower bound (naive)", value: round(naive.ratio), unit: "×" },
      { scenario: s, figure: "non-download requests per task (naive)", value: round(np.api), unit: "req", note: `${round(np.create, 2)} / ${round(np.query, 2)} / ${round(np.list, 2)} / ${round(np.download, 2)}` },
      { scenario: s, figure: "naive ÷ engine requests per task", value: round(np.api / ep.api, 1), unit: "×" },
      { scenario: s, figure: "engine ÷ naive makespan", value: round(engine.makespanMs / naive.makespanMs), unit: "×" },
      { scenario: s, figure: "runner CPU (engine run)", value: Math.round(runner.cpuUserMs + runner.cpuSystemMs), unit: "ms", note: `wall ${Math.round(runner.wallMs)} ms` },
    ];
    return {
      figures,
      details: {
        tasks: o.tasks,
        slots: o.slots,
        timeScale: o.timeScale,
        scaling: `emulator timing = realistic video durations (queued 10-60 s + processing 50-420 s) × ${o.timeScale}; engine policy = makePolicy(${o.timeScale}); naive poll = 1 s × ${o.timeScale} = ${pollMs} ms`,
        seed: o.seed,
        engine: { ...engine, gaps, requests: engineReq, rejections: engineStats.rejections, runner, summary: { created: summary.created, noSlotAnswers: summary.noSlotAnswers, elapsedMs: summary.elapsedMs } },
        naive: { ...naive, requests: naiveReq, rejections: naiveStats.rejections, wallMs: naiveRun.wallMs, finished: naiveRun.finished, failed: naiveRun.failed },
      },
    };
  } finally {
    await emulator.close();
    rmSync(dir, { recursive: true, force: true });
  }
};
