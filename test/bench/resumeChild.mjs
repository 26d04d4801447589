// Child-process entry of the resume benchmark: runs one manifest with runManifest against
// the address in argv[3] (key from OMNIBATCH_API_KEY) and prints, as JSON, the run's wall
// time, this process's peak RSS (getrusage) and CPU time, and the run's outcome.
// Plain JavaScript, so it can run as a user's run does: with plain node on the built
// dist/ (the default), or under tsx on src/ (argv[4] = "src") to measure a change unbuilt.
// Usage: node test/bench/resumeChild.mjs M.yaml BASE_URL
//        node --import tsx test/bench/resumeChild.mjs M.yaml BASE_URL src

const [file, baseUrl, from = "dist"] = process.argv.slice(2);
if (!file || !baseUrl || (from !== "dist" && from !== "src")) {
  process.stderr.write("usage: resumeChild.mjs M.yaml BASE_URL [dist|src]\n");
  process.exit(2);
}
// The heap setting the CLI's launcher applies before any command loads (src/cli/runHeap.ts),
// so the figures are a user's run's; BENCH_RESUME_V8_HEAP=1 leaves V8's own choice.
if (process.env.BENCH_RESUME_V8_HEAP !== "1") {
  const { applyRunHeapSettings } = await import(from === "src" ? "../../src/cli/runHeap.js" : "../../dist/cli/runHeap.js");
  applyRunHeapSettings();
}
const { runManifest } = await import(from === "src" ? "../../src/run/runManifest.js" : "../../dist/run/runManifest.js");
const t0 = performance.now();
const cpu0 = process.cpuUsage();
const summary = await runManifest(file, { baseUrl });
const wallMs = performance.now() - t0;
const cpu = process.cpuUsage(cpu0);
const usage = process.resourceUsage();
process.stdout.write(
  `${JSON.stringify({
    from,
    wallMs,
    cpuMs: (cpu.user + cpu.system) / 1000,
    // The whole process's CPU (start and module loading included), for comparison.
    processCpuMs: (usage.userCPUTime + usage.systemCPUTime) / 1000,
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
