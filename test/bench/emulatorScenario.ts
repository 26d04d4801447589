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
  const first = img.windows[0];
  const last = img.windows[img.windows.length - 1];
  figures.push(
    {
      scenario: s,
      figure: "emulator CPU per image task",
      value: round(img.cpuMsPerTask),
      unit: "ms",
      note: `${tasks.toLocaleString("en-US")} tasks (create + query + download), ${img.errors} errors; first quarter ${first?.cpuMsPerTask} ms, last ${last?.cpuMsPerTask} ms (flat: nothing per request grows with the tasks held); brief's target ≤ 1 ms`,
    },
    {
      scenario: s,
      figure: "emulator memory per task held",
      value: round(img.rssKbPerTask, 2),
      unit: "KB",
      note: `RSS ${img.rssBeforeMb} MB idle, ${img.rssAfterMb} MB holding ${tasks.toLocaleString("en-US")} tasks (peak ${img.peakRssMb} MB)`,
    },
  );
  return { figures, details: { ...r, durationMs: o.durationMs, connections: o.connections, imageLoad: img } };
};
