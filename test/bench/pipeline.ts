// Scenario 2, mixed pipeline: N image tasks, each feeding one video task (for_each). The
// bound is the same work with images and videos overlapped perfectly: the largest of
// total image slot-time ÷ image slots, total video slot-time ÷ video slots, and the
// longest image + video chain. Per-task durations are read back from the service after
// the run (create time to end time), once the run's request counts are taken.

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { realisticTiming } from "../../src/emulator/EmulatorConfig.js";
import { makePolicy } from "../../src/policy/Policy.js";
import { runManifest } from "../../src/run/runManifest.js";
import { readLockFile } from "../../src/state/readLockFile.js";
import { writePipelineManifest } from "./benchManifest.js";
import { round, type BenchFigure, type ScenarioResult } from "./BenchFigure.js";
import { startEmulatorProcess } from "./EmulatorProcess.js";
import { perTask, requestCounts } from "./requestCounts.js";
import { startResourceMeter } from "./ResourceMeter.js";

export interface PipelineOptions {
  readonly images: number;
  readonly slots: number;
  readonly timeScale: number;
  readonly seed: number;
  readonly label: string;
}

interface Envelope<T> {
  readonly code: number;
  readonly data?: T;
}

export const pipeline = async (o: PipelineOptions): Promise<ScenarioResult> => {
  const emulator = await startEmulatorProcess({
    seed: o.seed,
    slots: { video: o.slots, image: o.slots },
    timing: { ...realisticTiming, scale: o.timeScale },
  });
  const dir = mkdtempSync(join(tmpdir(), "omnibatch-bench-pipe-"));
  try {
    const file = writePipelineManifest({ dir, name: "bench-pipeline", count: o.images, concurrency: o.slots });
    const meter = startResourceMeter();
    const summary = await runManifest(file, {
      baseUrl: emulator.url,
      env: { OMNIBATCH_API_KEY: emulator.apiKey },
      policy: makePolicy(o.timeScale),
      concurrency: o.slots,
    });
    const runner = meter.stop();
    if (summary.exitCode !== 0) throw new Error(`pipeline: the engine ended with exit ${summary.exitCode} (${summary.reason ?? ""})`);
    const stats = await emulator.stats();
    const req = requestCounts(stats);
    const makespanMs = (stats.lastFinishAt ?? 0) - (stats.firstCreateAt ?? 0);

    // Durations per task, from the service (after the figures above were taken).
    const lock = (await readLockFile(file.replace(/\.yaml$/, ".lock.json")))!;
    const headers = { authorization: `Bearer ${emulator.apiKey}` };
    const duration = new Map<string, number>(); // by external id
    const entries = Object.entries(lock.tasks);
    for (const [ext, t] of entries.filter(([, t]) => t.kind === "image")) {
      const r = (await (await fetch(`${emulator.url}/v1/images/omni-image/${t.task_id}`, { headers })).json()) as Envelope<{ created_at: number; updated_at: number }>;
      if (r.data) duration.set(ext, r.data.updated_at - r.data.created_at);
    }
    const videos = entries.filter(([, t]) => t.kind === "video");
    for (let i = 0; i < videos.length; i += 50) {
      const batch = videos.slice(i, i + 50);
      const ids = batch.map(([, t]) => t.task_id).join(",");
      const r = (await (await fetch(`${emulator.url}/tasks?task_ids=${ids}`, { headers })).json()) as Envelope<Array<{ external_id?: string; create_time: number; update_time: number }>>;
      for (const v of r.data ?? []) if (v.external_id) duration.set(v.external_id, v.update_time - v.create_time);
    }
    let longestChain = 0;
    for (const [ext, t] of videos) {
      const up = t.upstream?.task;
      const chain = (duration.get(ext) ?? 0) + (up ? (duration.get(up) ?? 0) : 0);
      longestChain = Math.max(longestChain, chain);
    }
    const imageBound = stats.slots.image.busyMs / o.slots;
    const videoBound = stats.slots.video.busyMs / o.slots;
    const boundMs = Math.max(imageBound, videoBound, longestChain);
    const tasks = entries.length;
    const p = perTask(req, tasks);
    const s = o.label;
    const figures: BenchFigure[] = [
      { scenario: s, figure: "time scale", value: o.timeScale, unit: "×", note: `real durations × ${o.timeScale}; engine makePolicy(${o.timeScale})` },
      { scenario: s, figure: "makespan ÷ overlapped bound", value: round(makespanMs / boundMs), unit: "×", note: `makespan ${makespanMs} ms, bound ${Math.round(boundMs)} ms = max(images ${Math.round(imageBound)}, videos ${Math.round(videoBound)}, chain ${longestChain})` },
      { scenario: s, figure: "video slot utilisation", value: round(stats.slots.video.busyMs / (o.slots * makespanMs)), unit: "" },
      { scenario: s, figure: "non-download requests per task", value: round(p.api), unit: "req", note: `${round(p.create, 2)} / ${round(p.query, 2)} / ${round(p.list, 2)} / ${round(p.download, 2)} (create / query / list / download)` },
    ];
    return {
      figures,
      details: {
        images: o.images,
        tasks,
        slots: o.slots,
        timeScale: o.timeScale,
        seed: o.seed,
        makespanMs,
        boundMs,
        imageBound,
        videoBound,
        longestChain,
        requests: req,
        rejections: stats.rejections,
        runner,
        summary: { created: summary.created, noSlotAnswers: summary.noSlotAnswers, elapsedMs: summary.elapsedMs },
      },
    };
  } finally {
    await emulator.close();
    rmSync(dir, { recursive: true, force: true });
  }
};
