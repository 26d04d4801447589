// A tool, not a scenario: runs the throughput scenario's manifest (N image tasks that end
// the moment they start) in this process and, as tasks are downloaded, prints the live
// heap after a forced GC against RSS, and writes heap snapshots at chosen counts, so
// what the runner keeps per task can be read (heapDiff.ts compares two snapshots).
// `node --expose-gc --import tsx test/bench/heapProbe.ts [tasks] [snapshot-at,...] [dir]`

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { constants as perfConstants, PerformanceObserver } from "node:perf_hooks";
import { getHeapSpaceStatistics, writeHeapSnapshot } from "node:v8";
import { Effect, Layer, Redacted } from "effect";
import { OmniClient } from "../../src/api/OmniClient.js";
import { Engine } from "../../src/engine/Engine.js";
import { loadManifest } from "../../src/manifest/loadManifest.js";
import { Downloader } from "../../src/outputs/Downloader.js";
import { makePolicy, RunPolicy } from "../../src/policy/Policy.js";
import { LockStore } from "../../src/state/LockStore.js";
import { applyRunHeapSettings } from "../../src/cli/runHeap.js";
import { writeImageManifest } from "./benchManifest.js";
import { startEmulatorProcess } from "./EmulatorProcess.js";
import { processCpuMs } from "./processCpu.js";

const tasks = Number(process.argv[2] ?? 20_000);
const snapshotAt = new Set((process.argv[3] ?? "").split(",").filter(Boolean).map(Number));
const snapshotDir = process.argv[4] ?? tmpdir();
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error("run with --expose-gc");

const mb = (n: number) => (n / 1048576).toFixed(1);
const line = (label: string) => {
  const before = process.memoryUsage();
  // HEAP_PROBE_NO_GC=1: no forced GC (the heap as the run left it; a forced GC shrinks it).
  if (!process.env.HEAP_PROBE_NO_GC) gc();
  const after = process.memoryUsage();
  process.stdout.write(
    `${label}: rss ${mb(before.rss)} MB, heapUsed ${mb(before.heapUsed)} → ${mb(after.heapUsed)} MB after gc (external ${mb(after.external)}, arrayBuffers ${mb(after.arrayBuffers)})\n`,
  );
  if (process.env.HEAP_PROBE_SPACES) {
    const status = readFileSync("/proc/self/status", "utf8");
    const kb = (k: string) => /^(\w+):\s+(\d+) kB$/m.exec(status.split("\n").find((l) => l.startsWith(k + ":")) ?? "")?.[2];
    const spaces = getHeapSpaceStatistics().map((s) => `${s.space_name.replace("_space", "")} ${mb(s.physical_space_size)}`).join(", ");
    process.stdout.write(`  heapTotal ${mb(before.heapTotal)} MB; RssAnon ${kb("RssAnon")} kB, RssFile ${kb("RssFile")} kB; spaces (physical MB): ${spaces}\n`);
  }
};

// HEAP_PROBE_CLI_HEAP=1: the CLI's heap setting (src/cli/runHeap.ts), applied as the CLI applies it.
if (process.env.HEAP_PROBE_CLI_HEAP) process.stdout.write(`CLI heap setting applied: ${applyRunHeapSettings()}\n`);
const emulator = await startEmulatorProcess({ slots: { video: 10, image: 10_000_000 }, timing: { scale: 0 } });
const dir = mkdtempSync(join(tmpdir(), "omnibatch-heap-"));
try {
  const file = writeImageManifest({ dir, name: "bench-heap", count: tasks, concurrency: Math.min(tasks, 1000) });
  const manifest = await loadManifest(file);
  line("manifest loaded");
  const clientLayer = OmniClient.layer({ baseUrl: emulator.url, apiKey: Redacted.make(emulator.apiKey) });
  const policyLayer = RunPolicy.layer(makePolicy(0.01));
  const downloaderLayer = Downloader.layer(manifest.outputsDir).pipe(Layer.provide(Layer.merge(clientLayer, policyLayer)));
  const layer = Engine.layer.pipe(Layer.provideMerge(Layer.mergeAll(clientLayer, policyLayer, LockStore.layer(manifest.lockfilePath, manifest.name), downloaderLayer)));
  // HEAP_PROBE_ALLOC=FILE: every allocation sampled (garbage included), written as a .heapprofile.
  const allocFile = process.env.HEAP_PROBE_ALLOC;
  const session = allocFile ? new Session() : undefined;
  if (session) {
    session.connect();
    await session.post("HeapProfiler.startSampling", { samplingInterval: 16384, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true } as never);
  }
  // Time spent in GC pauses on the main thread, by kind (what a heap setting costs).
  const gcPauses = { minor: { n: 0, ms: 0 }, major: { n: 0, ms: 0 } };
  const gcObserver = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      const kind = (e as unknown as { detail?: { kind?: number } }).detail?.kind === perfConstants.NODE_PERFORMANCE_GC_MINOR ? "minor" : "major";
      gcPauses[kind].n++;
      gcPauses[kind].ms += e.duration;
    }
  });
  gcObserver.observe({ entryTypes: ["gc"] });
  let done = 0;
  // Where the peak is: RSS sampled every 50 ms, with the tasks done at the highest sample.
  // With the heap's split at that sample (no forced GC: what V8 held then).
  let peak = { rss: 0, done: -1, atMs: 0, heapUsed: 0, heapTotal: 0, external: 0, arrayBuffers: 0 };
  const sampler = setInterval(() => {
    const m = process.memoryUsage();
    if (m.rss > peak.rss) peak = { rss: m.rss, done, atMs: Math.round(performance.now() - t0), heapUsed: m.heapUsed, heapTotal: m.heapTotal, external: m.external, arrayBuffers: m.arrayBuffers };
  }, 50);
  const step = Number(process.env.HEAP_PROBE_STEP ?? Math.max(1000, Math.floor(tasks / 10)));
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  const emulatorCpu0 = processCpuMs(emulator.pid);
  const result = await Effect.runPromise(
    Effect.provide(
      Effect.flatMap(Engine, (engine) =>
        engine.run({
          manifest,
          maxWaitMs: Number(process.env.HEAP_PROBE_MAX_WAIT_MS ?? 600_000),
          onEvent: (e) => {
            if (e.type !== "task" || e.state !== "downloaded") return;
            done++;
            if (done % step === 0) line(`${done} done`);
            if (snapshotAt.has(done)) {
              gc();
              const path = writeHeapSnapshot(join(snapshotDir, `heap-${done}.heapsnapshot`));
              process.stdout.write(`snapshot ${path}\n`);
            }
          },
        }),
      ),
      layer,
    ),
  );
  const cpu = process.cpuUsage(cpu0);
  clearInterval(sampler);
  gcObserver.disconnect();
  process.stdout.write(
    `gc pauses: ${gcPauses.minor.n} minor ${Math.round(gcPauses.minor.ms)} ms, ${gcPauses.major.n} major/other ${Math.round(gcPauses.major.ms)} ms (forced ones included)\n`,
  );
  process.stdout.write(
    `highest RSS sample ${mb(peak.rss)} MB at ${peak.atMs} ms, with ${peak.done} done (heapUsed ${mb(peak.heapUsed)}, heapTotal ${mb(peak.heapTotal)}, external ${mb(peak.external)}, arrayBuffers ${mb(peak.arrayBuffers)} MB)\n`,
  );
  if (session && allocFile) {
    const { profile } = (await session.post("HeapProfiler.stopSampling")) as { profile: unknown };
    writeFileSync(allocFile, JSON.stringify(profile));
    process.stdout.write(`allocation profile ${allocFile}\n`);
  }
  const emulatorMs = processCpuMs(emulator.pid) - emulatorCpu0;
  line(
    `end (exit ${result.exitCode}, ${done} downloaded, ${Math.round(performance.now() - t0)} ms, runner cpu ${((cpu.user + cpu.system) / 1000 / Math.max(1, done)).toFixed(2)} ms/task, emulator cpu ${(emulatorMs / Math.max(1, done)).toFixed(2)} ms/task, peak RSS ${/^VmHWM:\s+(\d+)/m.exec(readFileSync("/proc/self/status", "utf8"))?.[1]} kB)`,
  );
} finally {
  await emulator.close();
  rmSync(dir, { recursive: true, force: true });
}
process.exit(0);
