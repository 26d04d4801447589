// A run whose downstream tasks cannot be made from an upstream task's results (here a
// template naming a second output the upstream task does not have, which validate can
// only warn about) warned "cannot expand ..." and still ended "exit 0: all done" with
// those tasks never made. The built CLI against the emulator: the run ends 1 (not all
// done), saying which downstream tasks could not be made.

import { suite } from "uvu";
import * as assert from "uvu/assert";
import { startEmulator, type RunningEmulator } from "../../src/emulator/Emulator.js";
import { manifestHead, runCli, workspace } from "./runFixture.js";

const yaml = `${manifestHead("notmade", { concurrency: null })}  stills:
    kind: image
    prompt: "an apple on a table"
  clips:
    kind: video
    for_each: stills.tasks
    first_frame: "{{ item.outputs.0.url }}"
    prompt: "it turns slowly, take {{ item.outputs.1.index }}"
`;

let emu: RunningEmulator;
const t = suite("downstream tasks that cannot be made");
t.before(async () => {
  emu = await startEmulator({ timing: { scale: 0.05 } }, { port: 0 });
});
t.after(async () => {
  await emu.close();
});

t("a downstream job that cannot be expanded from its upstream results does not end 0", async () => {
  const ws = workspace(yaml);
  try {
    const r = await runCli(ws, ["--base-url", emu.url, "--yes", "--no-callbacks", "--max-wait", "60s"], { OMNIBATCH_API_KEY: emu.apiKey });
    assert.match(r.all ?? "", "clips: cannot expand from");
    assert.is(r.exitCode, 1, r.all);
    assert.match(r.all ?? "", /exit 1: .*downstream tasks could not be made \(1: clips from notmade-stills-/, r.all);
  } finally {
    ws.remove();
  }
});

t.run();
