// Scenario 3, throughput: N image tasks that finish the moment they are created (slots
// far above N, zero durations), tiny outputs. What the runner itself costs per task:
// CPU time, peak memory, wall time, and bytes written to the lockfile (journal appends
// and full rewrites) against the lockfile's final size.

import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { applyRunHeapSettings } from "../../src/cli/runHeap.js";
import { makePolicy } from "../../src/policy/Policy.js";
import { writeImageManifest } from "./benchManifest.js";
import { round, type BenchFigure, type ScenarioResult } from "./BenchFigure.js";
import { startEmulatorProcess } from "./EmulatorProcess.js";
import { processCpuMs } from "./processCpu.js";
import { perTask, requestCounts } from "./requestCounts.js";
import { startResourceMeter } from "./ResourceMeter.js";
import { measureLockfileBytes } from "./lockfileBytes.js";
import { measureLockfileDiff } from "./lockfileDiff.js";
import { runWithLockStats } from "./runWithLockStats.js";

export interface ThroughputOptions {
  readonly tasks: number;
  readonly label: string;
  /** Bounds the run: past it the engine stops (exit 3) and figures are per task done. */
  readonly maxWaitMs: number;
}

export const throughput = async (o: ThroughputOptions): Promise<ScenarioResult> => {
  // The run's heap setting as the CLI applies it (src/cli/runHeap.ts): what a user's run does.
  applyRunHeapSettings();
  const emulator = await startEmulatorProcess({
    slots: { video: 10, image: 10_000_000 },
    timing: { scale: 0 },
  });
  const dir = mkdtempSync(join(tmpdir(), "omnibatch-bench-thr-"));
  try {
    const file = writeImageManifest({ dir, name: "bench-throughput", count: o.tasks, concurrency: Math.min(o.tasks, 1000) });
    const meter = startResourceMeter({ processPeak: true });
    const emulatorCpu0 = processCpuMs(emulator.pid);
    const { result, lockStats, lockfilePath } = await runWithLockStats(file, {
      baseUrl: emulator.url,
      apiKey: emulator.apiKey,
      // Tasks end at once: the quick rhythms of --emulate, so polling does not dominate.
      policy: makePolicy(0.01),
      maxWaitMs: o.maxWaitMs,
    });
    const m = meter.stop();
    // The emulator's CPU over the same run: which of the two processes limits the rate.
    const emulatorCpuMs = processCpuMs(emulator.pid) - emulatorCpu0;
    if (result.exitCode !== 0 && result.exitCode !== 3) throw new Error(`throughput: the engine ended with exit ${result.exitCode} (${result.reason ?? ""})`);
    // Stopped by the time limit: the figures are per task done, and say so.
    const done = Object.values(result.jobs).reduce((n, j) => n + j.done, 0);
    const partial = done < o.tasks ? ` (stopped at the ${o.maxWaitMs / 1000} s limit with ${done} of ${o.tasks} done)` : "";
    const stats = await emulator.stats();
    const req = requestCounts(stats);
    const lockBytes = statSync(lockfilePath).size;
    const lockSize = await measureLockfileBytes(lockfilePath);
    const cpuMs = m.cpuUserMs + m.cpuSystemMs;
    // After the measured run: a later run's diff (its own engine run, not in the figures
    // above). Only after a finished run: after a partial one the later run would have
    // every task not done yet to run as well (minutes, past the scenario's limit).
    const diff = partial
      ? undefined
      : await measureLockfileDiff(lockfilePath, join(dir, "git"), async () => {
          const again = await runWithLockStats(file, { baseUrl: emulator.url, apiKey: emulator.apiKey, policy: makePolicy(0.01), maxWaitMs: o.maxWaitMs });
          if (again.result.exitCode !== 0) throw new Error(`throughput: the later run ended with exit ${again.result.exitCode} (${again.result.reason ?? ""})`);
        });
    const p = perTask(req, Math.max(1, done));
    const s = o.label;
    const figures: BenchFigure[] = [
      { scenario: s, figure: "runner CPU per task", value: round(cpuMs / Math.max(1, done)), unit: "ms", goal: { op: "<=", target: 0.5 }, note: `user+system ${Math.round(cpuMs)} ms in total${partial}` },
      {
        scenario: s,
        figure: "emulator CPU per task",
        value: round(emulatorCpuMs / Math.max(1, done)),
        unit: "ms",
        note: "the emulator's own process over the same run (it has its own core at best, as the runner does)",
      },
      { scenario: s, figure: "runner peak RSS", value: round(m.peakRssMb, 1), unit: "MB", goal: { op: "<=", target: 256 } },
      { scenario: s, figure: "wall time", value: Math.round(m.wallMs), unit: "ms", note: `${Math.round((done * 1000) / m.wallMs)} tasks/s${partial}` },
      {
        scenario: s,
        figure: "lockfile bytes per finished task",
        value: round(lockSize.perFinishedTask, 1),
        unit: "B",
        goal: { op: "<=", target: 400 },
        note: `format v3, the ${lockSize.finished} downloaded tasks' lines + header; whole file ${lockBytes} B for ${lockSize.tasks} tasks (v2 was about 395 B, v1 about 990 B)`,
      },
      ...(diff
        ? [
            {
              scenario: s,
              figure: "later run's git diff: lines ÷ tasks changed",
              value: round(diff.linesPerTask, 2),
              unit: "lines",
              note: `+${diff.linesAdded} −${diff.linesRemoved} lines for ${diff.tasksChanged} tasks changed (${diff.staged.setBack} were in flight, ${diff.staged.removed} new); a new task is its line + a blank line`,
            } satisfies BenchFigure,
          ]
        : []),
      { scenario: s, figure: "lockfile bytes written ÷ final size", value: round(lockStats.bytesWritten / lockBytes, 2), unit: "×", goal: { op: "<=", target: 20 }, note: `${lockStats.bytesWritten} B in ${lockStats.writes} writes (${lockStats.compactions} full), final ${lockBytes} B` },
      { scenario: s, figure: "non-download requests per task", value: round(p.api), unit: "req", note: `${round(p.create, 2)} / ${round(p.query, 2)} / ${round(p.list, 2)} / ${round(p.download, 2)} (create / query / list / download)` },
    ];
    return {
      figures,
      details: { tasks: o.tasks, done, runner: m, emulatorCpuMs, lockStats, lockBytes, lockSize, lockfileDiff: diff ?? "not measured: the measured run did not finish", requests: req, rejections: stats.rejections, summary: { created: result.created, downloaded: result.downloaded, elapsedMs: result.elapsedMs } },
    };
  } finally {
    await emulator.close();
    rmSync(dir, { recursive: true, force: true });
  }
};
