// Guarantee: an API key no HTTP header can carry is a configuration error: exit 2 before
// anything is sent or written, and the key is never echoed.
//
// Review finding: an OMNIBATCH_API_KEY that no HTTP header can carry (a control character
// from a bad export, say) made every request fail locally as "network error after the
// request was sent", and the run retried until its time limit. It is a configuration
// mistake: exit 2 before anything is sent or written, without echoing the key.

import { existsSync } from "node:fs";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { startEmulator, type RunningEmulator } from "../../src/emulator/Emulator.js";
import { runCli, workspace } from "./runFixture.js";

const yaml = `version: 1
name: keychars
outputs: out
defaults:
  image: { resolution: 1k }
jobs:
  stills:
    kind: image
    matrix:
      subject: [apple]
    prompt: "a {{ subject }}"
`;

let emu: RunningEmulator;
test.before(async () => {
  emu = await startEmulator({ timing: { scale: 0.02 } }, { port: 0 });
});
test.after(async () => {
  await emu?.close();
});

for (const [label, key] of [
  ["a control character", "MARKERkey7q\u0001x"],
  ["a non-ASCII character", "MARKERkey7q\u00e9x"],
  ["an inner space", "MARKERkey7q x"],
] as const) {
  test(`a key holding ${label}: exit 2 naming OMNIBATCH_API_KEY, the key not echoed, no lockfile written, nothing sent`, async () => {
    const ws = workspace(yaml);
    try {
      const before = emu.stats().requests;
      const r = await runCli(ws, ["--base-url", emu.url, "--max-wait", "5s"], { OMNIBATCH_API_KEY: key });
      assert.is(r.exitCode, 2, r.all);
      assert.match(r.all, /OMNIBATCH_API_KEY/);
      assert.not.match(r.all, /MARKERkey7q/);
      assert.not.match(r.all, /\n\s+at /, "no stack trace");
      assert.not.ok(existsSync(ws.lockfile), "no lockfile");
      assert.equal(emu.stats().requests, before, "nothing sent");
    } finally {
      ws.remove();
    }
  });
}

test.run();
