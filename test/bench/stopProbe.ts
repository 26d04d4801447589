// A tool, not a scenario: what the stop of a large run costs in memory, piece by piece.
// Runs the scale scenario's manifest (N image tasks that end the moment they start) for a
// bounded time, then, with the run's lockfile, measures each step of the stop the scale
// scenario takes (the snapshot, each report formatted alone, writeReports whole, the
// store's close with its final rewrite): the highest RSS sampled every 10 ms during the
// step over the RSS before it, and the live heap after a forced GC.
// `node --expose-gc --import tsx test/bench/stopProbe.ts [tasks] [maxWaitMs]`

import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Effect, Exit, Layer, Redacted, Scope } from "effect";
import { OmniClient } from "../../src/api/OmniClient.js";
import { Engine } from "../../src/engine/Engine.js";
import { loadManifest } from "../../src/manifest/loadManifest.js";
import { Downloader } from "../../src/outputs/Downloader.js";
import { makePolicy, RunPolicy } from "../../src/policy/Policy.js";
import { billingCsvRows } from "../../src/report/billingCsv.js";
import { datasetMetadata } from "../../src/report/datasetMetadata.js";
import { reportFrame } from "../../src/report/reportData.js";
import { reportHtmlParts } from "../../src/report/reportHtml.js";
import { provenanceOf, resultsJsonlLines } from "../../src/report/resultsJsonl.js";
import { standingsFor } from "../../src/report/standing.js";
import { summarizeBilling } from "../../src/report/summarizeBilling.js";
import { reportSource, writeReports } from "../../src/report/writeReports.js";
import { writeFileAtomicChunks } from "../../src/state/writeFileAtomic.js";
import { LockStore } from "../../src/state/LockStore.js";
import { writeImageManifest } from "./benchManifest.js";
import { startEmulatorProcess } from "./EmulatorProcess.js";

const tasks = Number(process.argv[2] ?? 200_000);
const maxWaitMs = Number(process.argv[3] ?? 20_000);
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error("run with --expose-gc");
const mb = (n: number) => (n / 1048576).toFixed(0);

/** Runs `f`, sampling RSS every 10 ms; prints the step's peak over the RSS before it. */
const step = async <A>(label: string, f: () => A | Promise<A>, size?: (a: A) => number): Promise<A> => {
  gc();
  const before = process.memoryUsage();
  let peak = before.rss;
  const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage.rss())), 10);
  const cpu0 = process.cpuUsage();
  const a = await f();
  const cpu = process.cpuUsage(cpu0);
  clearInterval(timer);
  peak = Math.max(peak, process.memoryUsage.rss());
  const kept = process.memoryUsage().heapUsed;
  gc();
  const after = process.memoryUsage();
  process.stdout.write(
    `${label.padEnd(34)} rss ${mb(before.rss)} → peak ${mb(peak)} MB (+${mb(peak - before.rss)}); heap ${mb(before.heapUsed)} → ${mb(kept)} (${mb(after.heapUsed)} after gc) MB; cpu ${((cpu.user + cpu.system) / 1000).toFixed(0)} ms${size ? `; ${(size(a) / 1048576).toFixed(1)} MB of text` : ""}\n`,
  );
  return a;
};

const emulator = await startEmulatorProcess({ slots: { video: 10, image: 10_000_000 }, timing: { scale: 0 } });
const dir = mkdtempSync(join(tmpdir(), "omnibatch-stop-"));
try {
  const file = writeImageManifest({ dir, name: "bench-stop", count: tasks, concurrency: 1000 });
  const manifest = await loadManifest(file);
  const clientLayer = OmniClient.layer({ baseUrl: emulator.url, apiKey: Redacted.make(emulator.apiKey) });
  const policyLayer = RunPolicy.layer(makePolicy(0.01));
  const downloaderLayer = Downloader.layer(manifest.outputsDir).pipe(Layer.provide(Layer.merge(clientLayer, policyLayer)));
  const layer = Engine.layer.pipe(Layer.provideMerge(Layer.mergeAll(clientLayer, policyLayer, LockStore.layer(manifest.lockfilePath, manifest.name), downloaderLayer)));
  const scope = Effect.runSync(Scope.make());
  const context = await Effect.runPromise(Layer.buildWithScope(layer, scope));
  let done = 0;
  const result = await Effect.runPromise(
    Effect.provide(
      Effect.flatMap(Engine, (engine) =>
        engine.run({ manifest, maxWaitMs, onEvent: (e) => void (e.type === "task" && e.state === "downloaded" && done++) }),
      ),
      context,
    ),
  );
  process.stdout.write(`engine ended (exit ${result.exitCode}): ${done} of ${tasks} done\n`);
  const store = Effect.runSync(Effect.provide(LockStore, context));
  const lock = await step("snapshot", () => Effect.runSync(store.snapshot));
  const now = Date.now();
  if (process.env.STOP_PROBE_PARTS !== "0") {
    const out = (name: string) => join(dir, name);
    const standing = await step("standingsFor", () => standingsFor(lock, undefined));
    await step("reportSource", () => reportSource(lock, "x"));
    const prov = await step("provenanceOf", () => provenanceOf(lock, undefined, { standing }));
    await step("results.jsonl (streamed)", () => writeFileAtomicChunks(out("r.jsonl"), (resultsJsonlLines(lock, now, prov))));
    await step("billing.csv (streamed)", () => writeFileAtomicChunks(out("b.csv"), (billingCsvRows(lock))));
    const summary = await step("summarizeBilling", () => summarizeBilling(lock));
    const frame = await step("reportFrame", () => reportFrame({ lock, prov, summary, now, emulated: false }));
    await step("report.html (streamed)", () => writeFileAtomicChunks(out("r.html"), (reportHtmlParts(frame))));
    await step("report.html (rows only)", () => {
      let n = 0;
      for (const id of frame.ids) n += JSON.stringify(frame.row(id)).length;
      return n;
    });
    await step("datasetMetadata", () => datasetMetadata(lock, prov));
  }
  await step("writeReports (whole)", () => writeReports({ lock, outputsDir: manifest.outputsDir, manifestName: manifest.name, env: {} }));
  await step("store close (final rewrite)", () => Effect.runPromise(Scope.close(scope, Exit.void)));
  process.stdout.write(`peak RSS of the process (VmHWM) ${/^VmHWM:\s+(\d+)/m.exec(readFileSync("/proc/self/status", "utf8"))?.[1]} kB\n`);
} finally {
  await emulator.close();
  rmSync(dir, { recursive: true, force: true });
}
process.exit(0);
