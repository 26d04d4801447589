// Shared by the kill tests: one scenario = start the built CLI against the test's
// emulator, SIGKILL it at a point, check the lockfile reads back, rerun until done, and
// check every task was created exactly once and every result is on disk.

import { suite } from "uvu";
import * as assert from "uvu/assert";
import { startEmulator, type RunningEmulator } from "../../src/emulator/Emulator.js";
import { readLockFile } from "../../src/state/readLockFile.js";
import { assertAllResults, manifestYaml, runCli, workspace } from "./runFixture.js";

export type KillAt =
  | { readonly afterMs: number }
  | { readonly creates: number }
  | { readonly downloads: number };


const createsIn = (stats: ReturnType<RunningEmulator["stats"]>, name: string) => Object.keys(stats.creates).filter((id) => id.startsWith(`${name}-`));
const createsOf = (emu: RunningEmulator, name: string) => createsIn(emu.stats(), name);

export const killScenario = async (emu: RunningEmulator, point: KillAt, index: number) => {
  const name = `kill${index}`;
  const ws = workspace(manifestYaml(name));
  try {
    const env = { OMNIBATCH_API_KEY: emu.apiKey };
    const downloadsBefore = emu.stats().downloads;
    const child = runCli(ws, ["--base-url", emu.url, "--quiet"], env);
    const started = Date.now();
    await new Promise<void>((resolve) => {
      // Every 2 ms, so a kill lands right after the point; the emulator's figures (which
      // settle every task it holds) are read once a tick, and not at all for a time point.
      const timer = setInterval(() => {
        const hit =
          "afterMs" in point
            ? Date.now() - started >= point.afterMs
            : "creates" in point
              ? createsIn(emu.stats(), name).length >= point.creates
              : emu.stats().downloads - downloadsBefore >= point.downloads;
        if (hit || child.exitCode !== null || Date.now() - started > 20_000) {
          clearInterval(timer);
          child.kill("SIGKILL");
          resolve();
        }
      }, 2);
    });
    const first = await child;
    // The lockfile (with its journal) must read back cleanly after the kill.
    await readLockFile(ws.lockfile);
    let exitCode = first.exitCode;
    for (let i = 0; i < 4 && exitCode !== 0; i++) {
      const again = await runCli(ws, ["--base-url", emu.url, "--quiet"], env);
      exitCode = again.exitCode;
      if (exitCode !== 0 && i === 3) assert.unreachable(`run ${i + 2} exited ${exitCode}: ${again.all}`);
    }
    assert.is(exitCode, 0);
    const lock = await assertAllResults(ws);
    const ids = Object.keys(lock.tasks);
    assert.is(ids.length, 4 + 3 + 8, "every task planned and downstream is in the lockfile");
    for (const id of ids) assert.is(emu.stats().creates[id], 1, `${JSON.stringify(point)}: ${id} created once`);
    assert.is(createsOf(emu, name).length, ids.length);
    return first.signal;
  } finally {
    ws.remove();
  }
};

/**
 * A suite that runs `killScenario` at every point, two at a time against one emulator,
 * and checks that at least `minKilled` runs were really killed mid-way (not finished first).
 */
export const killSuite = (title: string, points: readonly KillAt[], minKilled: number) => {
  let emu: RunningEmulator;
  const t = suite(title);
  t.before(async () => {
    emu = await startEmulator({ timing: { scale: 0.15 }, slots: { video: 40, image: 80 } }, { port: 0 });
  });
  t.after(async () => {
    await emu.close();
  });
  t(`killed with SIGKILL at ${points.length} points, rerun until done: each task created exactly once, every result present`, async () => {
    let killed = 0;
    // Two at a time: the emulator has room for both.
    for (let i = 0; i < points.length; i += 2) {
      const pair = points.slice(i, i + 2);
      const signals = await Promise.all(pair.map((p, j) => killScenario(emu, p, i + j)));
      killed += signals.filter((s) => s === "SIGKILL").length;
    }
    assert.ok(killed >= minKilled, `runs actually killed mid-way: ${killed}`);
  });
  t.run();
};
