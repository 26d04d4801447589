// Scenario 6, emulator: requests per second it serves on loopback (creates and batch
// queries, validation on), with the emulator engineer's measureEmulatorThroughput().

import { round, type BenchFigure, type ScenarioResult } from "./BenchFigure.js";
import { measureEmulatorThroughput } from "./emulatorLoad.js";

export const emulatorThroughput = async (o: { durationMs: number; connections: number; label: string }): Promise<ScenarioResult> => {
  const r = await measureEmulatorThroughput({ durationMs: o.durationMs, connections: o.connections });
  const s = o.label;
  const figures: BenchFigure[] = [
    { scenario: s, figure: "requests per second", value: r.requestsPerSecond, unit: "req/s", goal: { op: ">=", target: 2000 }, note: `${r.creates} creates + ${r.queries} queries, ${r.errors} errors, ${o.connections} connections, ${o.durationMs / 1000} s` },
    { scenario: s, figure: "emulator CPU share", value: round(r.cpuUserMs / o.durationMs, 2), unit: "cores", note: "user CPU of the emulator process over the window" },
  ];
  return { figures, details: { ...r, durationMs: o.durationMs, connections: o.connections } };
};
