// The ten benchmark scenarios by name, with their full and quick sizes. Quick mode keeps
// every goal and shrinks the work so the whole bench runs in under two minutes.

import type { ScenarioResult } from "./BenchFigure.js";
import { cliLatency } from "./cliLatency.js";
import { emulatorThroughput } from "./emulatorScenario.js";
import { expansion } from "./expansionScenario.js";
import { pipeline } from "./pipeline.js";
import { resume } from "./resume.js";
import { saturation } from "./saturation.js";
import { scale } from "./scale.js";
import { shared } from "./shared.js";
import { SCALE_BOUND_MS } from "./scaleBound.js";
import { storeBench } from "./storeScenario.js";
import { throughput } from "./throughput.js";

export type ScenarioName = "saturation" | "pipeline" | "throughput" | "resume" | "expansion" | "emulator" | "cli" | "scale" | "store" | "shared";

export const scenarios: Record<ScenarioName, (quick: boolean) => Promise<ScenarioResult>> = {
  saturation: (quick) =>
    saturation({ tasks: quick ? 80 : 400, slots: 8, timeScale: 0.003, seed: 7, label: quick ? "1 saturation (quick: 80)" : "1 saturation (400 videos)" }),
  pipeline: (quick) =>
    pipeline({ images: quick ? 30 : 100, slots: 8, timeScale: 0.003, seed: 11, label: quick ? "2 pipeline (quick: 30+30)" : "2 pipeline (100 images → 100 videos)" }),
  throughput: (quick) => throughput({ tasks: quick ? 500 : 20_000, maxWaitMs: quick ? 60_000 : 120_000, label: quick ? "3 throughput (quick: 500 images)" : "3 throughput (20,000 images)" }),
  resume: (quick) => resume({ tasks: quick ? 2_000 : 100_000, label: quick ? "4 resume (quick: 2,000 done)" : "4 resume (100,000 done)" }),
  expansion: (quick) => expansion({ tasks: quick ? 10_000 : 100_000, label: quick ? "5 expansion (quick: 10,000 tasks)" : "5 expansion (100,000 tasks)" }),
  // Bounded below run.ts's per-scenario limit (300 s, 90 s quick), so a slow machine reports a partial run.
  // Run to completion (the goal): about 12 minutes on a quiet machine; the bound
  // stops it on a loaded one, and its figures are then per task done and say so.
  scale: (quick) => scale({ tasks: quick ? 5_000 : 200_000, maxWaitMs: quick ? 60_000 : SCALE_BOUND_MS, label: quick ? "8 scale (quick: 5,000 images)" : "8 scale (200,000 images)" }),
  cli: (quick) => cliLatency({ runs: quick ? 5 : 15, label: quick ? "7 CLI latency (quick: 5 runs)" : "7 CLI latency (15 runs)" }),
  // s3rver lists by walking its folders (20,000 keys: about 35 s on a loaded machine): quick mode checks 5,000.
  store: (quick) =>
    storeBench({ tasks: quick ? 40 : 200, slots: 8, timeScale: 0.003, seed: 7, stored: quick ? 5_000 : 20_000, label: quick ? "9 store (quick: 40 videos; 5,000 stored)" : "9 store (200 videos; 20,000 stored)" }),
  // One account, several runs (issue 30): 40 videos as one run, two and three at once.
  shared: (quick) =>
    shared({
      tasks: quick ? 20 : 40,
      slots: 5,
      timeScale: 0.02,
      seed: 30,
      runLimitMs: quick ? 60_000 : 150_000,
      label: quick ? "10 shared (quick: 20 videos, 5 slots)" : "10 shared (40 videos, 5 slots)",
    }),
  emulator: (quick) => emulatorThroughput({ durationMs: quick ? 2_000 : 5_000, connections: 16, label: quick ? "6 emulator (quick: 2 s)" : "6 emulator (5 s load)" }),
};
