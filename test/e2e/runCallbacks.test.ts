// `omnibatch run` and callbacks, as a user runs it (the built CLI against an emulator on
// loopback): on by default for a loopback service, off with --no-callbacks, an explicit
// --callback-url / --callback-listen pair, and exit 2 for flags that contradict.

import { createServer } from "node:net";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { startEmulator } from "../../src/emulator/Emulator.js";
import { assertAllResults, manifestYaml, runCli, workspace } from "./runFixture.js";

const t = suite("omnibatch run: callbacks");

const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });

/** Runs the small fixture manifest against a fresh loopback emulator with `args`. */
const runAgainstEmulator = async (args: readonly string[]) => {
  const emu = await startEmulator({ timing: { scale: 0.15 }, slots: { video: 20, image: 40 } }, { port: 0 });
  const ws = workspace(manifestYaml(`cb${Date.now().toString(36)}`, { subjects: 2, moods: 2 }));
  try {
    const r = await runCli(ws, ["--base-url", emu.url, "--quiet", ...args], { OMNIBATCH_API_KEY: emu.apiKey });
    assert.is(r.exitCode, 0, r.all);
    await assertAllResults(ws);
    return emu.stats().callbacks;
  } finally {
    await emu.close();
    ws.remove();
  }
};

t("against a loopback --base-url, callbacks are on by default: the emulator delivers them and the run ends done", async () => {
  const cb = await runAgainstEmulator([]);
  assert.ok(cb.delivered > 0, JSON.stringify(cb));
  assert.is(cb.failed, 0);
});

t("--no-callbacks sends no callback address: the emulator calls nobody", async () => {
  const cb = await runAgainstEmulator(["--no-callbacks"]);
  assert.is(cb.delivered + cb.failed + cb.skipped + cb.attempts, 0, JSON.stringify(cb));
});

t("--callback-url with --callback-listen: the service calls the given address (token appended) and the listener there takes them", async () => {
  const port = await freePort();
  const cb = await runAgainstEmulator(["--callback-url", `http://127.0.0.1:${port}/forwarded/`, "--callback-listen", `127.0.0.1:${port}`]);
  assert.ok(cb.delivered > 0, JSON.stringify(cb));
  assert.is(cb.failed, 0);
});

t("--no-callbacks with --callback-url, or a --callback-listen that is not HOST:PORT, exits 2 naming the flag", async () => {
  const ws = workspace(manifestYaml("cbflags"));
  try {
    const both = await runCli(ws, ["--emulate", "--no-callbacks", "--callback-url", "https://hooks.example.com/x"]);
    assert.is(both.exitCode, 2);
    assert.match(both.all, /--no-callbacks/);
    const listen = await runCli(ws, ["--emulate", "--callback-listen", "8787"]);
    assert.is(listen.exitCode, 2);
    assert.match(listen.all, /--callback-listen '8787'/);
    const url = await runCli(ws, ["--emulate", "--callback-url", "hooks.example.com"]);
    assert.is(url.exitCode, 2);
    assert.match(url.all, /--callback-url/);
  } finally {
    ws.remove();
  }
});

t.run();
