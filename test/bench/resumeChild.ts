// Child-process entry of the resume benchmark: runs one manifest with runManifest against
// the address in argv[3] (key from OMNIBATCH_API_KEY) and prints, as JSON, the run's wall
// time, this process's peak RSS (getrusage) and CPU time, and the run's outcome.
// Usage: node --import tsx test/bench/resumeChild.ts M.yaml BASE_URL

import { runManifest } from "../../src/run/runManifest.js";

const [file, baseUrl] = process.argv.slice(2);
if (!file || !baseUrl) {
  process.stderr.write("usage: resumeChild.ts M.yaml BASE_URL\n");
  process.exit(2);
}
const t0 = performance.now();
const cpu0 = process.cpuUsage();
const summary = await runManifest(file, { baseUrl });
const wallMs = performance.now() - t0;
const cpu = process.cpuUsage(cpu0);
const usage = process.resourceUsage();
process.stdout.write(
  `${JSON.stringify({
    wallMs,
    cpuMs: (cpu.user + cpu.system) / 1000,
    maxRssMb: usage.maxRSS / 1024,
    exitCode: summary.exitCode,
    outcome: summary.outcome,
    created: summary.created,
    adopted: summary.adopted,
    downloaded: summary.downloaded,
    done: Object.values(summary.jobs).reduce((n, j) => n + j.done, 0),
  })}\n`,
);
process.exit(0);
