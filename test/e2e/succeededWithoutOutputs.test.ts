// Review finding: a task first seen `succeeded` with no outputs (the service deleted its
// results before this run asked: the job resumed more than 30 days after the create; or
// a service that shows the outputs a moment after the status) is recorded `downloaded`
// with no output records. The run says "all done", exit 0, "0 lost": the paid results are
// lost silently, and never asked about again (DESIGN.md promise 2: "or the run says loudly
// which results are lost, and does not end 0"). Cause: followAnswers.ts `applyView`
// sends any succeeded view to Download, and Downloader.fetchAll of [] outputs returns [].

import { suite } from "uvu";
import * as assert from "uvu/assert";
import { startEmulator, type RunningEmulator } from "../../src/emulator/Emulator.js";
import { readLockFile } from "../../src/state/readLockFile.js";
import { runCli, workspace } from "./runFixture.js";

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const t = suite("a task first seen succeeded without outputs");
let emu: RunningEmulator;
t.before(async () => {
  // Videos take an hour of the emulator's clock: no run sees one end until the test moves
  // that clock, however fast or slow the machine. (A first run stopped by --max-wait 3s
  // and videos of 5 s raced the machine: under load the run reached its deadline before it
  // had created anything.)
  emu = await startEmulator({ timing: { scale: 1, video: { queuedMs: [200, 400], processingMs: [HOUR, HOUR] } }, slots: { video: 10, image: 10 } }, { port: 0 });
});
t.after(async () => {
  await emu.close();
});

t("results deleted at the service before the first answer that shows the task ended: named lost, exit not 0", async () => {
  const ws = workspace(`version: 1
name: review-empty
outputs: out
concurrency: 4
defaults:
  video: { resolution: 720p, aspect_ratio: "16:9", duration: 5 }
jobs:
  clips:
    kind: video
    matrix:
      mood: [calm, busy]
    prompt: "a {{ mood }} street"
`);
  try {
    const env = { OMNIBATCH_API_KEY: emu.apiKey };
    const args = ["--base-url", emu.url, "--no-callbacks", "--json"];
    const created = () => Object.values(emu.stats().creates as Record<string, number>).reduce((a, b) => a + b, 0);
    // The first run is stopped as on Ctrl-C once both tasks are created (bounded wait).
    const running = runCli(ws, args, env);
    for (const until = Date.now() + 60_000; created() < 2 && running.exitCode === null && Date.now() < until; ) await new Promise((r) => setTimeout(r, 20));
    running.kill("SIGINT");
    const first = await running;
    assert.is(first.exitCode, 3, `the first run stops with the tasks in flight: ${first.all}`);
    assert.is(created(), 2, "both tasks were created (paid)");
    assert.is(emu.stats().tasks.byStatus.succeeded, 0, "none ended while the first run was there");
    // Both end at the service while no run asks, then 31 days pass: they finished long ago,
    // and their results are deleted at the service.
    emu.advanceClock(2 * HOUR);
    assert.is(emu.stats().tasks.byStatus.succeeded, 2, "both tasks ended at the service before the 31 days");
    emu.advanceClock(31 * DAY);
    const second = await runCli(ws, args, env);
    const lock = await readLockFile(ws.lockfile);
    const records = Object.values(lock!.tasks).flatMap((task) => task.outputs);
    assert.not.equal(second.exitCode, 0, `the run must not end 0 with both paid results gone (exit ${second.exitCode})`);
    assert.ok(records.length > 0, "the lost results have a record (deleted_at), or the tasks are not 'downloaded'");
  } finally {
    ws.remove();
  }
});

t.run();
