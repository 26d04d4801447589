// Guarantee: killed (SIGKILL) at any point of a run whose tasks fail and are retried, every
// attempt is created at most once at the service, and reruns finish every attempt.
//
// Review: SIGKILL at many points of a run whose tasks fail and are retried (retry_failed:
// 2, content-risk failures retried): every attempt's id is created at most once at the
// service, and reruns finish with every attempt made exactly once. Real CLI + emulator.

import { test } from "uvu";
import * as assert from "uvu/assert";
import { startEmulator, type RunningEmulator } from "../../src/emulator/Emulator.js";
import { readLockFile } from "../../src/state/readLockFile.js";
import { runCli, workspace } from "./runFixture.js";

const yaml = (name: string) => `version: 1
name: ${name}
outputs: out
concurrency: 4
defaults:
  image: { resolution: 1k }
jobs:
  stills:
    kind: image
    retry_failed: 2
    retry_content_risk: true
    matrix:
      subject: [apple, boat, chair, door]
    prompt: "a {{ subject }} [fail]"
`;

let emu: RunningEmulator;

test.before(async () => {
  emu = await startEmulator({ timing: { scale: 0.02 } }, { port: 0 });
});
test.after(async () => {
  await emu?.close();
});

for (const [i, killMs] of [700, 850, 1000, 1150, 1300, 1450, 1600, 1800].entries()) {
  test(`killed after ${killMs} ms while attempts fail and are retried: each attempt id created once, 3 attempts per task in the end`, async () => {
    const name = `rk${i}`;
    const ws = workspace(yaml(name));
    try {
      const env = { OMNIBATCH_API_KEY: emu.apiKey };
      const child = runCli(ws, ["--base-url", emu.url, "--quiet", "--no-callbacks"], env);
      const timer = setTimeout(() => child.kill("SIGKILL"), killMs);
      await child;
      clearTimeout(timer);
      let exitCode: number | undefined;
      for (let n = 0; n < 4 && exitCode !== 1; n++) exitCode = (await runCli(ws, ["--base-url", emu.url, "--quiet", "--no-callbacks"], env)).exitCode;
      assert.is(exitCode, 1, "ends with failed tasks");
      const lock = await readLockFile(ws.lockfile);
      const ids = Object.keys(lock!.tasks);
      assert.is(ids.length, 12, "4 tasks x 3 attempts in the lockfile");
      const creates = Object.entries(emu.stats().creates).filter(([id]) => id.startsWith(`${name}-`));
      for (const [id, n] of creates) assert.is(n, 1, `${id} created ${n} times`);
      assert.is(creates.length, 12);
    } finally {
      ws.remove();
    }
  });
}

test.run();
