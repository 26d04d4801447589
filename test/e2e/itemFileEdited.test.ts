// `{{ item.file }}` downstream tasks are made from the recorded upstream result, never from
// what happens to be on disk (the review's itemfile scenario). The built CLI runs a batch
// against the emulator; an upstream PNG is then changed on disk (an extra text chunk: the
// same picture, other bytes); `plan` shows no changed (`~`) task and the next run creates
// nothing (before: it warned "changed on disk, downloading again" and restored the file,
// and still created a downstream task from the edited bytes, paid), restores the file and
// ends done.

import { createHash } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { crc32 } from "node:zlib";
import { execa } from "execa";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { startEmulator, type RunningEmulator } from "../../src/emulator/Emulator.js";
import { readLockFile } from "../../src/state/readLockFile.js";
import { bin, manifestHead, runCli, stillsJob, workspace } from "./runFixture.js";

const yaml = `${manifestHead("itemfile", { concurrency: null })}${stillsJob(["apple", "boat"])}  moves:
    kind: video
    for_each: stills.outputs
    contents:
      - first_frame: "{{ item.file }}"
        id: start
    prompt: "@start turns slowly"
`;

/** The same PNG with a text chunk before IEND: the same picture, other bytes. */
const withTextChunk = (png: Buffer): Buffer => {
  const data = Buffer.from("Comment\0edited by hand");
  const type = Buffer.from("tEXt");
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([type, data])) >>> 0);
  const iend = png.length - 12;
  return Buffer.concat([png.subarray(0, iend), len, type, data, crc, png.subarray(iend)]);
};

let emu: RunningEmulator;
const t = suite("item.file: an upstream result edited on disk");
t.before(async () => {
  emu = await startEmulator({ timing: { scale: 0.05 } }, { port: 0 });
});
t.after(async () => {
  await emu.close();
});

const creates = () => Object.values(emu.stats().creates).reduce((a, b) => a + b, 0);

t("an upstream PNG edited on disk: plan shows no '~', the next run creates nothing and restores the file", async () => {
  const ws = workspace(yaml);
  const env = { OMNIBATCH_API_KEY: emu.apiKey };
  const args = ["--base-url", emu.url, "--yes", "--no-callbacks"];
  try {
    const first = await runCli(ws, args, env);
    assert.is(first.exitCode, 0, first.all);
    const made = creates();
    assert.is(made, 4, "2 stills, 2 moves");
    const lock = await readLockFile(ws.lockfile);
    const still = Object.values(lock!.tasks).find((x) => x.job === "stills" && x.outputs.some((o) => o.path))!;
    const out = still.outputs.find((o) => o.path)!;
    const file = join(ws.outputs, out.path!);
    const edited = withTextChunk(readFileSync(file));
    writeFileSync(file, edited);
    assert.is.not(createHash("sha256").update(edited).digest("hex"), out.sha256);

    const plan = await execa("node", [bin, "plan", ws.manifest], { cwd: ws.dir, reject: false, all: true, env: { ...env, OMNIBATCH_BASE_URL: emu.url }, extendEnv: false });
    assert.not.match(plan.all ?? "", /^\s*~ /m, `plan shows a changed task:\n${plan.all}`);
    assert.match(plan.all ?? "", /moves\s+0\s+0\s+2\s+0\s+0/, plan.all);

    const second = await runCli(ws, args, env);
    assert.is(second.exitCode, 0, second.all);
    assert.is(creates(), made, `nothing created from the edited bytes:\n${second.all}`);
    assert.is(createHash("sha256").update(readFileSync(file)).digest("hex"), out.sha256, "the recorded result is back");
    const after = await readLockFile(ws.lockfile);
    assert.equal(Object.keys(after!.tasks).sort(), Object.keys(lock!.tasks).sort(), "no new task in the lockfile");
  } finally {
    ws.remove();
  }
});

t.run();
