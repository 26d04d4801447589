// Loaded into every test process by the test runner (test/run.mjs, `node --import
// ./test/cpuReport.mjs`): as the process exits it prints `@@cpu MS`, its CPU time and its
// children's (test/cpuUsage.mjs). Nothing is printed where /proc is missing; the runner then
// shows no CPU.

import { writeSync } from "node:fs";
import { cpuMs } from "./cpuUsage.mjs";

process.on("exit", () => {
  const ms = cpuMs();
  if (ms !== undefined) writeSync(1, `\n@@cpu ${ms}\n`);
});
