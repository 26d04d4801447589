// The built CLI killed with SIGKILL at many points (during creates, while following,
// during downloads, at random moments that include lockfile writes), then run again
// until done: the lockfile is valid after every kill, every external_task_id was
// created exactly once at the emulator, and every result is on disk.

import { suite } from "uvu";
import * as assert from "uvu/assert";
import { startEmulator, type RunningEmulator } from "../../src/emulator/Emulator.js";
import { readLockFile } from "../../src/state/readLockFile.js";
import { assertAllResults, manifestYaml, runCli, workspace } from "./runFixture.js";

let emu: RunningEmulator;
const t = suite("kill -9 and rerun");

t.before(async () => {
  emu = await startEmulator({ timing: { scale: 0.15 }, slots: { video: 40, image: 80 } }, { port: 0 });
});
t.after(async () => {
  await emu.close();
});

type KillAt =
  | { readonly afterMs: number }
  | { readonly creates: number }
  | { readonly downloads: number };

const points: KillAt[] = [
  { creates: 1 },
  { creates: 3 },
  { creates: 6 },
  { creates: 10 },
  { downloads: 1 },
  { downloads: 5 },
  { downloads: 12 },
  { afterMs: 600 },
  { afterMs: 900 },
  { afterMs: 1300 },
  { afterMs: 1800 },
  { afterMs: 2500 },
];

const createsOf = (name: string) => Object.entries(emu.stats().creates).filter(([id]) => id.startsWith(`${name}-`));

const scenario = async (point: KillAt, index: number) => {
  const name = `kill${index}`;
  const ws = workspace(manifestYaml(name));
  try {
    const env = { OMNIBATCH_API_KEY: emu.apiKey };
    const downloadsBefore = emu.stats().downloads;
    const child = runCli(ws, ["--base-url", emu.url, "--quiet"], env);
    const started = Date.now();
    await new Promise<void>((resolve) => {
      const timer = setInterval(() => {
        const s = emu.stats();
        const hit =
          "afterMs" in point
            ? Date.now() - started >= point.afterMs
            : "creates" in point
              ? createsOf(name).length >= point.creates
              : s.downloads - downloadsBefore >= point.downloads;
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
    assert.is(createsOf(name).length, ids.length);
    return first.signal;
  } finally {
    ws.remove();
  }
};

t("killed with SIGKILL at 12 points, rerun until done: each task created exactly once, every result present", async () => {
  let killed = 0;
  // Two at a time: the emulator has room for both.
  for (let i = 0; i < points.length; i += 2) {
    const pair = points.slice(i, i + 2);
    const signals = await Promise.all(pair.map((p, j) => scenario(p, i + j)));
    killed += signals.filter((s) => s === "SIGKILL").length;
  }
  assert.ok(killed >= 10, `runs actually killed mid-way: ${killed}`);
});

t.run();
