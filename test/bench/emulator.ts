// `npm run bench:emulator`: how many create-or-query requests per second the emulator
// serves on loopback (one emulator process, validation on). Prints one line per run.

import { measureEmulatorThroughput } from "./emulatorLoad.js";

const durationMs = Number(process.env.BENCH_DURATION_MS ?? 5000);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 16);
const r = await measureEmulatorThroughput({ durationMs, connections });
const cpuShare = r.cpuUserMs / durationMs;
process.stdout.write(
  `emulator: ${r.requestsPerSecond} requests/s (${r.creates} creates, ${r.queries} queries, ${r.errors} errors) ` +
    `over ${durationMs / 1000} s with ${connections} connections; emulator CPU user ${r.cpuUserMs} ms + system ${r.cpuSystemMs} ms ` +
    `(${(cpuShare * 100).toFixed(0)}% of one core in user time), ${r.requestsPerCpuSecond} requests per emulator CPU-second\n`,
);
if (r.requestsPerSecond < 2000) {
  process.stdout.write("emulator: below the 2,000 requests/s goal\n");
  process.exitCode = 1;
}
