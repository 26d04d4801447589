// A tool, not a scenario: what a run's stop adds to its RSS, as a user's run does it
// (runManifest: the engine, then the supersessions, failure groups and reports over every
// record, then the store's close). N image tasks that end the moment they start, on the
// emulator in its own process, with the CLI's heap setting. The stop is counted from the
// last task downloaded: RSS is sampled every 20 ms, and the peak before that and after it
// are printed, with the CPU time of each part.
// `node --import tsx test/bench/stopRise.ts [tasks]`; STOP_RISE_PROF=FILE.cpuprofile also
// writes a CPU profile of the stop alone (read it with profileTop.ts); STOP_RISE_FROZEN_FROM=N
// sets the store's `frozenFrom` (0: the end reads records decoded as read at any size).

import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { Session } from "node:inspector";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { applyRunHeapSettings } from "../../src/cli/runHeap.js";
import { makePolicy } from "../../src/policy/Policy.js";
import { runManifest } from "../../src/run/runManifest.js";
import { writeImageManifest } from "./benchManifest.js";
import { startEmulatorProcess } from "./EmulatorProcess.js";

const tasks = Number(process.argv[2] ?? 50_000);
applyRunHeapSettings();
const mb = (n: number) => Math.round(n / 1048576);
const cpuMs = () => {
  const c = process.cpuUsage();
  return (c.user + c.system) / 1000;
};

const profileTo = process.env.STOP_RISE_PROF;
const session = profileTo ? new Session() : undefined;
const post = (method: string): Promise<unknown> =>
  new Promise((resolve, reject) => session!.post(method, (error, result) => (error ? reject(error) : resolve(result))));
if (session) {
  session.connect();
  await post("Profiler.enable");
}

const emulator = await startEmulatorProcess({ slots: { video: 10, image: 10_000_000 }, timing: { scale: 0 } });
const dir = mkdtempSync(join(tmpdir(), "omnibatch-stoprise-"));
try {
  const file = writeImageManifest({ dir, name: "bench-stop", count: tasks, concurrency: 1000 });
  const rssBefore = process.memoryUsage.rss();
  const cpu0 = cpuMs();
  let running = 0;
  let stop = 0;
  let done = 0;
  let atLast: { rss: number; cpu: number } | undefined;
  const sample = () => {
    const rss = process.memoryUsage.rss();
    if (atLast) stop = Math.max(stop, rss);
    else running = Math.max(running, rss);
    return rss;
  };
  const sampler = setInterval(sample, 20);
  const summary = await runManifest(file, {
    baseUrl: emulator.url,
    env: { OMNIBATCH_API_KEY: emulator.apiKey },
    policy: makePolicy(0.01),
    callbacks: false,
    ...(process.env.STOP_RISE_FROZEN_FROM ? { lockStore: { frozenFrom: Number(process.env.STOP_RISE_FROZEN_FROM) } } : {}),
    onEvent: (e) => {
      if (e.type !== "task" || e.state !== "downloaded") return;
      if (++done < tasks) return;
      atLast = { rss: sample(), cpu: cpuMs() };
      // Started synchronously here: the stop's work begins after this event.
      if (session) session.post("Profiler.start");
    },
  });
  sample();
  clearInterval(sampler);
  const cpu = cpuMs();
  if (session) writeFileSync(profileTo!, JSON.stringify(((await post("Profiler.stop")) as { profile: unknown }).profile));
  if (!atLast) throw new Error(`only ${done} of ${tasks} done (${summary.outcome})`);
  process.stdout.write(
    `${tasks} tasks (${summary.outcome}, ${summary.reports.length} reports): RSS before ${mb(rssBefore)} MB, peak while running ${mb(running)} MB, at the last download ${mb(atLast.rss)} MB, peak at the stop ${mb(stop)} MB (+${mb(stop - atLast.rss)}); CPU running ${Math.round(atLast.cpu - cpu0)} ms (${((atLast.cpu - cpu0) / tasks).toFixed(3)} ms per task), stop ${Math.round(cpu - atLast.cpu)} ms\n`,
  );
} finally {
  await emulator.close();
  rmSync(dir, { recursive: true, force: true });
}
