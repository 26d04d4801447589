// `omnibatch run` stopping and refusing: a second run while one holds the lockfile
// exits 2; --max-wait and SIGINT exit 3 and the next run finishes without creating twice.

import { readdirSync } from "node:fs";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { startEmulator, type RunningEmulator } from "../../src/emulator/Emulator.js";
import { assertAllResults, manifestYaml, runCli, workspace } from "./runFixture.js";

let emu: RunningEmulator;
const t = suite("omnibatch run: busy lockfile and time limit");

t.before(async () => {
  emu = await startEmulator({ timing: { scale: 0.15 }, slots: { video: 20, image: 40 } }, { port: 0 });
});
t.after(async () => {
  await emu.close();
});

t("a second run on the same manifest while the first is running exits 2 naming the lock", async () => {
  const ws = workspace(manifestYaml("busy"));
  const env = { OMNIBATCH_API_KEY: emu.apiKey };
  try {
    emu.configure({ timing: { scale: 1 } });
    const first = runCli(ws, ["--base-url", emu.url, "--quiet"], env);
    const started = Date.now();
    while (!readdirSync(ws.dir).some((f) => f.includes("lock")) && Date.now() - started < 10_000) {
      await new Promise((r) => setTimeout(r, 20));
    }
    const second = await runCli(ws, ["--base-url", emu.url], env);
    assert.is(second.exitCode, 2, second.all);
    assert.match(second.all ?? "", /lock|running|busy/i);
    emu.configure({ timing: { scale: 0.15 } });
    const r = await first;
    assert.is(r.exitCode, 0, r.all);
  } finally {
    emu.configure({ timing: { scale: 0.15 } });
    ws.remove();
  }
});

t("--max-wait stops with exit 3; the next run finishes and creates nothing twice", async () => {
  const ws = workspace(manifestYaml("maxwait"));
  const env = { OMNIBATCH_API_KEY: emu.apiKey };
  try {
    emu.configure({ timing: { scale: 1 } });
    const r = await runCli(ws, ["--base-url", emu.url, "--max-wait", "1s"], env);
    assert.is(r.exitCode, 3, r.all);
    assert.match(r.all ?? "", "run the same command again");
    emu.configure({ timing: { scale: 0.15 } });
    const again = await runCli(ws, ["--base-url", emu.url], env);
    assert.is(again.exitCode, 0, again.all);
    const lock = await assertAllResults(ws);
    for (const id of Object.keys(lock.tasks)) assert.is(emu.stats().creates[id], 1, id);
  } finally {
    emu.configure({ timing: { scale: 0.15 } });
    ws.remove();
  }
});

t("SIGINT stops the run at once with exit 3; the next run finishes without creating anything twice", async () => {
  const ws = workspace(manifestYaml("sigint"));
  const env = { OMNIBATCH_API_KEY: emu.apiKey };
  try {
    emu.configure({ timing: { scale: 1 } });
    const child = runCli(ws, ["--base-url", emu.url], env);
    const started = Date.now();
    while (Object.keys(emu.stats().creates).filter((id) => id.startsWith("sigint-")).length < 2 && Date.now() - started < 10_000) {
      await new Promise((r) => setTimeout(r, 10));
    }
    child.kill("SIGINT");
    const stoppedAt = Date.now();
    const r = await child;
    assert.is(r.exitCode, 3, r.all);
    assert.ok(Date.now() - stoppedAt < 3_000, "stopped at once");
    emu.configure({ timing: { scale: 0.15 } });
    const again = await runCli(ws, ["--base-url", emu.url], env);
    assert.is(again.exitCode, 0, again.all);
    const lock = await assertAllResults(ws);
    for (const id of Object.keys(lock.tasks)) assert.is(emu.stats().creates[id], 1, id);
  } finally {
    emu.configure({ timing: { scale: 0.15 } });
    ws.remove();
  }
});

t.run();
