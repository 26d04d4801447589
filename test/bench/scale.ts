// Scenario 8, scale: a manifest at the task limit (200,000 image tasks that end the moment
// they start, tiny outputs) planned and run to completion on the emulator. Peak RSS is
// held to 1 GB; the runner's memory growth per task is reported (peak RSS over the RSS
// before the run, ÷ tasks done). The run is bounded in time: past the bound the figures
// are per task done and say so.

import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { makePolicy } from "../../src/policy/Policy.js";
import { writeImageManifest } from "./benchManifest.js";
import { round, type BenchFigure, type ScenarioResult } from "./BenchFigure.js";
import { startEmulatorProcess } from "./EmulatorProcess.js";
import { processCpuMs } from "./processCpu.js";
import { startResourceMeter } from "./ResourceMeter.js";
import { runWithLockStats } from "./runWithLockStats.js";

export interface ScaleOptions {
  readonly tasks: number;
  readonly label: string;
  readonly maxWaitMs: number;
}

export const scale = async (o: ScaleOptions): Promise<ScenarioResult> => {
  const emulator = await startEmulatorProcess({ slots: { video: 10, image: 10_000_000 }, timing: { scale: 0 } });
  const dir = mkdtempSync(join(tmpdir(), "omnibatch-bench-scale-"));
  try {
    const file = writeImageManifest({ dir, name: "bench-scale", count: o.tasks, concurrency: 1000 });
    const rssBeforeMb = process.memoryUsage.rss() / 1048576;
    const meter = startResourceMeter({ processPeak: true });
    const emulatorCpu0 = processCpuMs(emulator.pid);
    const { result, lockfilePath } = await runWithLockStats(file, {
      baseUrl: emulator.url,
      apiKey: emulator.apiKey,
      policy: makePolicy(0.01),
      maxWaitMs: o.maxWaitMs,
    });
    const m = meter.stop();
    // The emulator's CPU over the same run: which of the two processes limits the rate.
    const emulatorCpuMs = processCpuMs(emulator.pid) - emulatorCpu0;
    if (result.exitCode !== 0 && result.exitCode !== 3) throw new Error(`scale: the engine ended with exit ${result.exitCode} (${result.reason ?? ""})`);
    const done = Object.values(result.jobs).reduce((n, j) => n + j.done, 0);
    const partial = done < o.tasks ? ` (stopped at the ${o.maxWaitMs / 1000} s bound with ${done} of ${o.tasks} done)` : "";
    const lockBytes = statSync(lockfilePath).size;
    const s = o.label;
    const figures: BenchFigure[] = [
      { scenario: s, figure: "tasks done", value: done, unit: "", goal: { op: ">=", target: o.tasks }, note: `in ${Math.round(m.wallMs / 1000)} s${partial}` },
      { scenario: s, figure: "runner peak RSS", value: round(m.peakRssMb, 1), unit: "MB", goal: { op: "<=", target: 1024 }, note: `RSS before the run ${Math.round(rssBeforeMb)} MB` },
      { scenario: s, figure: "runner memory growth per task", value: round(((m.peakRssMb - rssBeforeMb) * 1024) / Math.max(1, done), 2), unit: "KB", note: "(peak RSS − RSS before) ÷ tasks done" },
      { scenario: s, figure: "runner CPU per task", value: round((m.cpuUserMs + m.cpuSystemMs) / Math.max(1, done), 3), unit: "ms" },
      {
        scenario: s,
        figure: "emulator CPU per task",
        value: round(emulatorCpuMs / Math.max(1, done), 3),
        unit: "ms",
        note: "the emulator's own process over the same run: each process has at most one core, so the larger of the two CPU figures bounds the rate",
      },
      {
        scenario: s,
        figure: "time for all tasks at this rate",
        value: Math.round((o.tasks * m.wallMs) / Math.max(1, done) / 1000),
        unit: "s",
        note: `${Math.round((done * 1000) / m.wallMs)} tasks/s; the bound is ${o.maxWaitMs / 1000} s`,
      },
      { scenario: s, figure: "lockfile bytes per task", value: round(lockBytes / Math.max(1, done), 1), unit: "B", note: `${(lockBytes / 1048576).toFixed(1)} MB` },
    ];
    return { figures, details: { tasks: o.tasks, done, runner: m, emulatorCpuMs, rssBeforeMb, lockBytes, summary: { created: result.created, downloaded: result.downloaded, elapsedMs: result.elapsedMs } } };
  } finally {
    await emulator.close();
    rmSync(dir, { recursive: true, force: true });
  }
};
