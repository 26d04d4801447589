// Child-process entry for one benchmark scenario: `node --import tsx test/bench/scenario.ts
// NAME [--quick]`. Runs it and prints `BENCH_RESULT <json>` as its last line, so each
// scenario's CPU and memory are its own (run.ts starts one child per scenario).

import type { ScenarioResult } from "./BenchFigure.js";
import { scenarios, type ScenarioName } from "./scenarios.js";

const name = process.argv[2] as ScenarioName;
const quick = process.argv.includes("--quick");
const run = scenarios[name];
if (!run) {
  process.stderr.write(`unknown scenario '${name}'; one of: ${Object.keys(scenarios).join(", ")}\n`);
  process.exit(2);
}
const result: ScenarioResult = await run(quick);
process.stdout.write(`\nBENCH_RESULT ${JSON.stringify(result)}\n`);
// Stray handles (keep-alive sockets) must not hold the child open.
process.exit(0);
