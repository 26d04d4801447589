// The built CLI killed with SIGKILL during downloads and downstream creates (and at moments that
// fall on lockfile writes), then run again until done: the lockfile is valid after every
// kill, every external_task_id was created exactly once, every result is on disk.

import { suite } from "uvu";
import * as assert from "uvu/assert";
import { startEmulator, type RunningEmulator } from "../../src/emulator/Emulator.js";
import { killScenario, type KillAt } from "./killScenario.js";

let emu: RunningEmulator;
const t = suite("kill -9 during downloads and downstream creates, then rerun");

t.before(async () => {
  emu = await startEmulator({ timing: { scale: 0.15 }, slots: { video: 40, image: 80 } }, { port: 0 });
});
t.after(async () => {
  await emu.close();
});

// Points are tied to progress the emulator sees, not to wall time, so a slow or busy
// machine still kills each run mid-way.
const points: KillAt[] = [
  { downloads: 1 },
  { downloads: 3 },
  { downloads: 5 },
  { downloads: 8 },
  { downloads: 12 },
  { creates: 12 },
];

t("killed with SIGKILL at 6 points, rerun until done: each task created exactly once, every result present", async () => {
  let killed = 0;
  // Two at a time: the emulator has room for both.
  for (let i = 0; i < points.length; i += 2) {
    const pair = points.slice(i, i + 2);
    const signals = await Promise.all(pair.map((p, j) => killScenario(emu, p, i + j)));
    killed += signals.filter((s) => s === "SIGKILL").length;
  }
  assert.ok(killed >= 5, `runs actually killed mid-way: ${killed}`);
});

t.run();
