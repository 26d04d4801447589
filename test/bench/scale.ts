// Scenario 8, scale: a manifest at the task limit (200,000 image tasks that end the moment
// they start, tiny outputs) planned and run to completion on the emulator. Peak RSS is
// held to 1 GB, and split by when it came: while tasks ran, or at the stop (the reports,
// then the store's close with its final rewrite of the whole lockfile). The runner's
// memory growth per task done is RSS at the engine's end over RSS at the first task done,
// ÷ the tasks done between (planning 200,000 tasks comes before, and is not per task
// done). The run is bounded in time: past the bound the figures are per task done and say so.

import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { applyRunHeapSettings } from "../../src/cli/runHeap.js";
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
  // The run's heap setting as the CLI applies it (src/cli/runHeap.ts): what a user's run does.
  applyRunHeapSettings();
  const emulator = await startEmulatorProcess({ slots: { video: 10, image: 10_000_000 }, timing: { scale: 0 } });
  const dir = mkdtempSync(join(tmpdir(), "omnibatch-bench-scale-"));
  try {
    const file = writeImageManifest({ dir, name: "bench-scale", count: o.tasks, concurrency: 1000 });
    const rssBeforeMb = process.memoryUsage.rss() / 1048576;
    const meter = startResourceMeter({ processPeak: true });
    const emulatorCpu0 = processCpuMs(emulator.pid);
    // The highest RSS sample of each phase (every 100 ms, and at each phase's change).
    type Phase = "running" | "reports" | "close";
    const peakOf: Record<Phase, number> = { running: 0, reports: 0, close: 0 };
    let phase: Phase = "running";
    const sample = () => {
      const rss = process.memoryUsage.rss();
      if (rss > peakOf[phase]) peakOf[phase] = rss;
      return rss;
    };
    const sampler = setInterval(sample, 100);
    let downloaded = 0;
    let first: { rss: number } | undefined;
    let atEnd: { rss: number; done: number } | undefined;
    const { result, lockfilePath } = await runWithLockStats(file, {
      baseUrl: emulator.url,
      apiKey: emulator.apiKey,
      policy: makePolicy(0.01),
      maxWaitMs: o.maxWaitMs,
      onEvent: (e) => {
        if (e.type !== "task" || e.state !== "downloaded") return;
        downloaded++;
        if (first === undefined) first = { rss: sample() };
      },
      onPhase: (next) => {
        const rss = sample();
        if (next === "reports") atEnd = { rss, done: downloaded };
        phase = next;
        sample();
      },
    });
    sample();
    clearInterval(sampler);
    const m = meter.stop();
    // The emulator's CPU over the same run: which of the two processes limits the rate.
    const emulatorCpuMs = processCpuMs(emulator.pid) - emulatorCpu0;
    if (result.exitCode !== 0 && result.exitCode !== 3) throw new Error(`scale: the engine ended with exit ${result.exitCode} (${result.reason ?? ""})`);
    const done = Object.values(result.jobs).reduce((n, j) => n + j.done, 0);
    const partial = done < o.tasks ? ` (stopped at the ${o.maxWaitMs / 1000} s bound with ${done} of ${o.tasks} done)` : "";
    const lockBytes = statSync(lockfilePath).size;
    const s = o.label;
    const mbOf = (bytes: number) => Math.round(bytes / 1048576);
    const growthKb = first && atEnd && atEnd.done > 1 ? ((atEnd.rss - first.rss) / 1024) / (atEnd.done - 1) : undefined;
    // VmHWM (the kernel's peak) above every sample: a short peak between two samples, at the stop's end at the latest.
    const split = `while running ${mbOf(peakOf.running)} MB, at the stop: reports ${mbOf(peakOf.reports)} MB, store close (final lockfile rewrite) ${mbOf(peakOf.close)} MB`;
    const figures: BenchFigure[] = [
      { scenario: s, figure: "tasks done", value: done, unit: "", goal: { op: ">=", target: o.tasks }, note: `in ${Math.round(m.wallMs / 1000)} s${partial}` },
      { scenario: s, figure: "runner peak RSS", value: round(m.peakRssMb, 1), unit: "MB", goal: { op: "<=", target: 1024 }, note: `RSS before the run ${Math.round(rssBeforeMb)} MB` },
      { scenario: s, figure: "runner peak RSS while running", value: mbOf(peakOf.running), unit: "MB", note: `peak RSS by phase: ${split}` },
      { scenario: s, figure: "runner peak RSS at the stop", value: mbOf(Math.max(peakOf.reports, peakOf.close)), unit: "MB", note: "reports of every task, then the store's close (its final full rewrite, streamed)" },
      {
        scenario: s,
        figure: "runner memory growth per task done",
        value: growthKb === undefined ? 0 : round(growthKb, 2),
        unit: "KB",
        note: first && atEnd ? `RSS ${mbOf(first.rss)} MB at the first task done, ${mbOf(atEnd.rss)} MB at the engine's end (${atEnd.done} done); (peak − RSS before) ÷ done: ${round(((m.peakRssMb - rssBeforeMb) * 1024) / Math.max(1, done), 2)} KB` : "no task done",
      },
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
    return { figures, details: { tasks: o.tasks, done, runner: m, peakRssMbByPhase: { running: mbOf(peakOf.running), reports: mbOf(peakOf.reports), close: mbOf(peakOf.close) }, rssAtFirstDoneMb: first ? mbOf(first.rss) : undefined, rssAtEngineEndMb: atEnd ? mbOf(atEnd.rss) : undefined, emulatorCpuMs, rssBeforeMb, lockBytes, summary: { created: result.created, downloaded: result.downloaded, elapsedMs: result.elapsedMs } } };
  } finally {
    await emulator.close();
    rmSync(dir, { recursive: true, force: true });
  }
};
