// OMNIBATCH_TIME_SCALE left set in a user's shell (docs/emulator.md tells them to export it for their
// own emulator) must not shrink the unknown-outcome window against a service that is not on
// this machine. The built CLI runs with the variable at 0.05 against the real emulator
// listening on this machine's non-loopback address, which plays a real service at its
// worst: every create is carried out and then answered 500, a reused external id creates a
// second task, and a new task stays invisible to lookups for 5 s (more than 60 s × 0.05).
// Each task is created once, and the run says why the variable was ignored.

import { networkInterfaces } from "node:os";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { startEmulator } from "../../src/emulator/Emulator.js";
import { runCli, workspace } from "./runFixture.js";

const nonLoopback = Object.values(networkInterfaces())
  .flat()
  .find((a) => a !== undefined && a.family === "IPv4" && !a.internal)?.address;

const yaml = `version: 1
name: tsremote
outputs: out
defaults:
  video: { resolution: 720p, aspect_ratio: "16:9", duration: 5 }
jobs:
  clips:
    kind: video
    matrix:
      mood: [calm, busy, dark]
    prompt: "a {{ mood }} street"
`;

if (nonLoopback === undefined) {
  console.log("SKIPPED: this machine has no non-loopback IPv4 address to serve the emulator on");
} else {
  test(`OMNIBATCH_TIME_SCALE=0.05 against a service at ${nonLoopback} (not loopback) is ignored with a warning: no create sent twice`, async () => {
    const emu = await startEmulator(
      {
        timing: { scale: 0.02 },
        faults: { seed: 3, duplicateExternalId: "create-second", visibilityLagMs: 5_000, errorAfterCreateRate: 1 },
      },
      { host: nonLoopback, port: 0 },
    );
    const ws = workspace(yaml);
    try {
      assert.ok(!emu.url.includes("127.0.0.1"), emu.url);
      const r = await runCli(ws, ["--base-url", emu.url, "--yes", "--no-callbacks", "--max-wait", "60s"], {
        OMNIBATCH_API_KEY: emu.apiKey,
        OMNIBATCH_TIME_SCALE: "0.05",
      });
      const creates = emu.stats().creates;
      assert.is(Object.keys(creates).length, 3, r.all);
      assert.equal(Object.values(creates), [1, 1, 1], `each external id created once (${JSON.stringify(creates)}); output:\n${r.all}`);
      assert.match(r.all ?? "", /OMNIBATCH_TIME_SCALE=0\.05 ignored: it is for an emulator on this machine/);
      assert.is(r.exitCode, 0, r.all);
    } finally {
      ws.remove();
      await emu.close();
    }
  });
}

test.run();
