// Scenario 6, emulator: requests per second it serves on loopback (creates and batch
// queries, validation on), with the emulator engineer's measureEmulatorThroughput(); then
// its own CPU and memory per image task as the throughput and scale scenarios use it
// (create, one query, the download of its result; emulatorImageLoad.ts), per window of
// tasks, so a cost that grows with the tasks held shows.

import { round, type BenchFigure, type ScenarioResult } from "./BenchFigure.js";
import { measureEmulatorImageLoad } from "./emulatorImageLoad.js";
import { measureEmulatorThroughput } from "./emulatorLoad.js";

export const emulatorThroughput = async (o: { durationMs: number; connections: number; label: string; imageTasks?: number }): Promise<ScenarioResult> => {
  const r = await measureEmulatorThroughput({ durationMs: o.durationMs, connections: o.connections });
  const s = o.label;
  const figures: BenchFigure[] = [
    { scenario: s, figure: "requests per second", value: r.requestsPerSecond, unit: "req/s", goal: { op: ">=", target: 2000 }, note: `${r.creates} creates + ${r.queries} queries, ${r.errors} errors, ${o.connections} connections, ${o.durationMs / 1000} s` },
    { scenario: s, figure: "emulator CPU share", value: round(r.cpuUserMs / o.durationMs, 2), unit: "cores", note: "user CPU of the emulator process over the window" },
  ];
  // The quick bench (a 2 s load) runs a tenth of the tasks.
  const tasks = o.imageTasks ?? (o.durationMs >= 5_000 ? 20_000 : 2_000);
  const img = await measureEmulatorImageLoad({ tasks, connections: 32, windows: 4 });
  figures.push(
    {
      scenario: s,
      figure: "emulator CPU per image task",
      value: round(img.cpuMsPerTask),
      unit: "ms",
      note: `${tasks.toLocaleString("en-US")} tasks (create + query + download), ${img.errors} errors; per quarter ${img.windows.map((w) => w.cpuMsPerTask).join(" / ")} ms (the first includes warm-up: JIT, image caches; a cost growing with the tasks held would make the last ones rise); target ≤ 1 ms`,
    },
    {
      scenario: s,
      figure: "emulator memory per task held",
      value: round(img.rssKbPerTask, 2),
      unit: "KB",
      note: `(RSS holding ${tasks.toLocaleString("en-US")} tasks − RSS idle) ÷ tasks: ${img.rssBeforeMb} → ${img.rssAfterMb} MB, peak ${img.peakRssMb} MB; garbage not yet collected included, so a short run overstates it`,
    },
  );
  return { figures, details: { ...r, durationMs: o.durationMs, connections: o.connections, imageLoad: img } };
};
