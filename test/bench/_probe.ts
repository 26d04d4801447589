// @ts-nocheck
// temporary probe: N image tasks, progress every 2 s (done, tasks/s, cpu ms/task in window, rss)
import { Effect, Layer, Redacted } from "effect";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
const root = process.env.PROBE_DIST ? "../../dist" : "../../src";
const { OmniClient } = await import(`${root}/api/OmniClient.js`);
const { Engine } = await import(`${root}/engine/Engine.js`);
const { RunPolicy, makePolicy } = await import(`${root}/policy/Policy.js`);
const { loadManifest } = await import(`${root}/manifest/loadManifest.js`);
const { Downloader } = await import(`${root}/outputs/Downloader.js`);
const { LockStore } = await import(`${root}/state/LockStore.js`);
import { writeImageManifest } from "./benchManifest.js";
import { startEmulatorProcess } from "./EmulatorProcess.js";

const n = Number(process.argv[2] ?? 5000);
const maxWaitMs = Number(process.argv[3] ?? 120000);
const emulator = await startEmulatorProcess({ slots: { video: 10, image: 10_000_000 }, timing: { scale: 0 } });
const dir = mkdtempSync(join(tmpdir(), "omnibatch-probe-"));
const file = writeImageManifest({ dir, name: "probe", count: n, concurrency: Math.min(n, 1000) });
const manifest = await loadManifest(file);
const policy = makePolicy(0.01);
const clientLayer = OmniClient.layer({ baseUrl: emulator.url, apiKey: Redacted.make(emulator.apiKey) });
const policyLayer = RunPolicy.layer(policy);
const storeLayer = LockStore.layer(manifest.lockfilePath, manifest.name);
const downloaderLayer = Downloader.layer(manifest.outputsDir).pipe(Layer.provide(Layer.merge(clientLayer, policyLayer)));
const engineLayer = Engine.layer.pipe(Layer.provideMerge(Layer.mergeAll(clientLayer, policyLayer, storeLayer, downloaderLayer)));
import { Session } from "node:inspector/promises";
import { writeFileSync } from "node:fs";
const session = process.env.PROBE_PROF ? new Session() : undefined;
if (session) { session.connect(); await session.post("Profiler.enable"); await session.post("Profiler.setSamplingInterval", { interval: 500 }); await session.post("Profiler.start"); }
let done = 0;
const byState = new Map<string, number>();
let events = 0;
const t0 = performance.now();
const c0 = process.cpuUsage();
let lastT = t0, lastDone = 0, lastC = c0;
let peak = 0;
const timer = setInterval(() => {
  const t = performance.now();
  const c = process.cpuUsage();
  const cpu = (c.user - lastC.user + c.system - lastC.system) / 1000;
  const rss = process.memoryUsage.rss() / 1048576;
  peak = Math.max(peak, rss);
  const d = done - lastDone;
  process.stderr.write(`t=${((t - t0) / 1000).toFixed(0)}s done=${done} ev=${events} rate=${Math.round((d * 1000) / (t - lastT))}/s cpu/task=${d ? (cpu / d).toFixed(2) : "-"}ms rss=${Math.round(rss)}MB ${[...byState].map(([k, v]) => k + ":" + v).join(" ")}\n`);
  lastT = t; lastDone = done; lastC = c;
}, 2000);
const program = Effect.gen(function* () {
  const engine: any = yield* Engine;
  return yield* engine.run({ manifest, maxWaitMs, onEvent: (e: any) => { events++; if (e.type === "task") byState.set(e.state, (byState.get(e.state) ?? 0) + 1); if (e.type === "task" && e.state === "downloaded") done++; } });
});
const result: any = await Effect.runPromise(Effect.provide(program, engineLayer));
clearInterval(timer);
if (session) { const { profile } = await session.post("Profiler.stop"); writeFileSync(process.env.PROBE_PROF!, JSON.stringify(profile)); }
const c = process.cpuUsage(c0);
const wall = performance.now() - t0;
const cpu = (c.user + c.system) / 1000;
process.stderr.write(`END exit=${result.exitCode} done=${done} wall=${Math.round(wall)}ms cpu=${Math.round(cpu)}ms cpu/task=${(cpu / Math.max(1, done)).toFixed(3)}ms (user ${Math.round(c.user/1000)} sys ${Math.round(c.system/1000)}) peakrss~${Math.round(Math.max(peak, process.memoryUsage.rss()/1048576))}MB\n`);
await emulator.close();
rmSync(dir, { recursive: true, force: true });
