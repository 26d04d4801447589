// A tool, not a scenario: the throughput scenario's measured run (N image tasks that end the
// moment they start, the emulator in its own process), in this process, with the runner's
// CPU split by phase (manifest load, engine run, reports, store close) and, optionally, a CPU
// profile of the measured run alone (the bench's BENCH_CPU_PROF profiles the whole child:
// module loading, the later run of the diff figure and the temp folder's removal too).
// `from` = src (under tsx, as the bench runs) or dist (the built code a user's run loads:
// real function names and lines in the profile, no tsx helpers).
// Usage: node --import tsx test/bench/throughputProfile.ts [tasks] [src|dist] [out.cpuprofile]
// Then: node --import tsx test/bench/profileTop.ts out.cpuprofile.run.cpuprofile 40
// (one file per phase: .load, .run, .reports, .close, and the whole window as given).

import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Effect, Layer, Redacted } from "effect";
import { writeImageManifest } from "./benchManifest.js";
import { startEmulatorProcess } from "./EmulatorProcess.js";
import { processCpuMs } from "./processCpu.js";

const tasks = Number(process.argv[2] ?? 20_000);
const from = process.argv[3] ?? "src";
const out = process.argv[4];
if (from !== "src" && from !== "dist") throw new Error("usage: throughputProfile.ts [tasks] [src|dist] [out.cpuprofile]");
const base = from === "src" ? "../../src/" : "../../dist/";
const mod = (p: string) => import(`${base}${p}.js`);

const { applyRunHeapSettings } = await mod("cli/runHeap");
applyRunHeapSettings();
const { OmniClient } = await mod("api/OmniClient");
const { Engine } = await mod("engine/Engine");
const { RunPolicy, makePolicy } = await mod("policy/Policy");
const { loadManifest } = await mod("manifest/loadManifest");
const { Downloader } = await mod("outputs/Downloader");
const { writeReports } = await mod("report/writeReports");
const { LockStore } = await mod("state/LockStore");

/** CPU (ms) of each of this process's threads so far, by thread name (main, libuv-worker, V8 workers), from /proc (Linux). */
const threadCpu = (): Map<string, number> => {
  const m = new Map<string, number>();
  try {
    for (const tid of readdirSync("/proc/self/task")) {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, "utf8");
      const name = tid === String(process.pid) ? "main" : `${stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"))}#${tid}`;
      const f = stat.slice(stat.lastIndexOf(") ") + 2).split(" ");
      m.set(name, (m.get(name) ?? 0) + ((Number(f[11]) + Number(f[12])) * 1000) / 100);
    }
  } catch {
    // not Linux: no split
  }
  return m;
};

const emulator = await startEmulatorProcess({ slots: { video: 10, image: 10_000_000 }, timing: { scale: 0 } });
const dir = mkdtempSync(join(tmpdir(), "omnibatch-thr-prof-"));
const session = new Session();
session.connect();
try {
  const file = writeImageManifest({ dir, name: "bench-throughput", count: tasks, concurrency: Math.min(tasks, 1000) });
  const marks: { phase: string; atUs: number; cpu: NodeJS.CpuUsage; wall: number }[] = [];
  const mark = (phase: string) => marks.push({ phase, atUs: Number(process.hrtime.bigint() / 1000n), cpu: process.cpuUsage(), wall: performance.now() });
  if (out) {
    await session.post("Profiler.enable");
    await session.post("Profiler.setSamplingInterval", { interval: 500 });
    await session.post("Profiler.start");
  }
  // THROUGHPUT_ALLOC_PROF=FILE: a sampling allocation profile of the window, garbage included
  // (every 32 KB allocated, by the allocating function), written as a .heapprofile.
  const allocOut = process.env.THROUGHPUT_ALLOC_PROF;
  if (allocOut) {
    await session.post("HeapProfiler.enable");
    await session.post("HeapProfiler.startSampling", { samplingInterval: 32768, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
  }
  const emulatorCpu0 = processCpuMs(emulator.pid);
  const threads0 = threadCpu();
  mark("load");
  const manifest = await loadManifest(file);
  const clientLayer = OmniClient.layer({ baseUrl: emulator.url, apiKey: Redacted.make(emulator.apiKey) });
  const policyLayer = RunPolicy.layer(makePolicy(0.01));
  const storeLayer = LockStore.layer(manifest.lockfilePath, manifest.name);
  const downloaderLayer = Downloader.layer(manifest.outputsDir).pipe(Layer.provide(Layer.merge(clientLayer, policyLayer)));
  const engineLayer = Engine.layer.pipe(Layer.provideMerge(Layer.mergeAll(clientLayer, policyLayer, storeLayer, downloaderLayer)));
  const program = Effect.gen(function* () {
    const engine = yield* Engine;
    const store = yield* LockStore;
    mark("run");
    const result = yield* engine.run({ manifest, maxWaitMs: 300_000 });
    mark("reports");
    const lock = yield* store.frozenSnapshot;
    yield* Effect.promise(() => writeReports({ lock, outputsDir: manifest.outputsDir, manifestName: manifest.name, env: {} }));
    mark("close");
    return result;
  });
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const result: any = await Effect.runPromise(Effect.provide(program, engineLayer) as Effect.Effect<unknown>);
  mark("end");
  const threads1 = threadCpu();
  if (allocOut) {
    const { profile } = await session.post("HeapProfiler.stopSampling");
    writeFileSync(allocOut, JSON.stringify(profile));
  }
  const emulatorCpuMs = processCpuMs(emulator.pid) - emulatorCpu0;
  const done = Object.values(result.jobs as Record<string, { done: number }>).reduce((n, j) => n + j.done, 0);
  const ms = (a: NodeJS.CpuUsage, b: NodeJS.CpuUsage) => (b.user - a.user + b.system - a.system) / 1000;
  const total = ms(marks[0]!.cpu, marks.at(-1)!.cpu);
  process.stdout.write(
    `${from}: ${done} of ${tasks} done (exit ${result.exitCode}); runner CPU ${total.toFixed(0)} ms = ${(total / Math.max(1, done)).toFixed(3)} ms per task; emulator ${(emulatorCpuMs / Math.max(1, done)).toFixed(3)} ms per task; rss max ${(process.resourceUsage().maxRSS / 1024).toFixed(1)} MB\n`,
  );
  for (let i = 0; i + 1 < marks.length; i++) {
    const a = marks[i]!;
    const b = marks[i + 1]!;
    const user = (b.cpu.user - a.cpu.user) / 1000;
    const sys = (b.cpu.system - a.cpu.system) / 1000;
    process.stdout.write(
      `  ${a.phase.padEnd(8)} CPU ${(user + sys).toFixed(0).padStart(6)} ms (user ${user.toFixed(0)}, system ${sys.toFixed(0)}) = ${((user + sys) / Math.max(1, done)).toFixed(3)} ms per task; wall ${(b.wall - a.wall).toFixed(0)} ms\n`,
    );
  }
  // The measured window on CLOCK_MONOTONIC, as `perf record -k CLOCK_MONOTONIC` stamps its samples (perf script --time).
  process.stdout.write(`  window (monotonic s): ${(marks[0]!.atUs / 1e6).toFixed(6)},${(marks.at(-1)!.atUs / 1e6).toFixed(6)}\n`);
  process.stdout.write(
    `  threads: ${[...threads1].map(([name, ms]) => `${name} ${(ms - (threads0.get(name) ?? 0)).toFixed(0)} ms`).join(", ")} (whole window; /proc, 10 ms ticks)\n`,
  );
  if (out) {
    const { profile } = await session.post("Profiler.stop");
    writeFileSync(out, JSON.stringify(profile));
    // One profile per phase: the samples whose time falls within it.
    for (let i = 0; i + 1 < marks.length; i++) {
      const a = marks[i]!.atUs;
      const b = marks[i + 1]!.atUs;
      const samples: number[] = [];
      const timeDeltas: number[] = [];
      let t = profile.startTime;
      let last = a;
      profile.samples!.forEach((id, k) => {
        t += profile.timeDeltas![k]!;
        if (t >= a && t < b) {
          samples.push(id);
          timeDeltas.push(t - last);
          last = t;
        }
      });
      writeFileSync(`${out}.${marks[i]!.phase}.cpuprofile`, JSON.stringify({ ...profile, startTime: a, endTime: b, samples, timeDeltas }));
    }
  }
} finally {
  session.disconnect();
  await emulator.close();
  rmSync(dir, { recursive: true, force: true });
}
