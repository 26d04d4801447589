// Scenario 5, expansion: N tasks validated and planned, in a child process for a clean
// peak RSS (expansionChild.ts).

import { round, type BenchFigure, type ScenarioResult } from "./BenchFigure.js";
import { runChildJson } from "./runChildJson.js";

interface ChildFigures {
  tasks: number;
  wallMs: number;
  peakRssMb: number;
  validateMs?: number;
  planMs?: number;
  cpuMs?: number;
  maxRssMb: number;
  source: string;
}

export const expansion = async (o: { tasks: number; label: string }): Promise<ScenarioResult> => {
  const { value: c } = await runChildJson<ChildFigures>("./expansionChild.ts", [String(o.tasks)]);
  const s = o.label;
  const rss = Math.max(c.peakRssMb ?? 0, c.maxRssMb);
  const split = c.validateMs !== undefined && c.planMs !== undefined ? `validate ${Math.round(c.validateMs)} ms, plan ${Math.round(c.planMs)} ms; ` : "";
  const figures: BenchFigure[] = [
    { scenario: s, figure: "validate + plan wall", value: Math.round(c.wallMs), unit: "ms", goal: { op: "<=", target: 3000 }, note: `${split}${c.tasks} tasks; ${c.source}` },
    ...(c.cpuMs !== undefined ? [{ scenario: s, figure: "validate + plan CPU", value: Math.round(c.cpuMs), unit: "ms", note: "user + system: steadier than wall on a busy machine" }] : []),
    { scenario: s, figure: "peak RSS", value: round(rss, 1), unit: "MB", goal: { op: "<=", target: 500 }, note: "child process getrusage maxRSS" },
  ];
  return { figures, details: { ...c } };
};
