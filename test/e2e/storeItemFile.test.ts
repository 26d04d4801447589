// `{{ item.file }}` with the outputs in an object store, end to end: the built CLI runs a
// for_each pipeline whose downstream job names its upstream image as `{{ item.file }}`
// against the emulator (over loopback), with the outputs in a real S3-compatible server
// (s3rver, in this process). There is no local file: the result's link stands in
// (src/manifest/itemFile.ts), so every clip is made, downloaded into the store and
// planned as done afterwards, and a rerun creates nothing.

import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execa } from "execa";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { startEmulator, type RunningEmulator } from "../../src/emulator/Emulator.js";
import { readLockFile } from "../../src/state/readLockFile.js";
import { startS3rver, type S3rverHandle } from "../store/s3rverServer.js";
import { bin, manifestHead, stillsJob } from "./runFixture.js";

const yaml = (outputs: string) => `${manifestHead("frames", { outputs })}${stillsJob(["apple", "boat"])}  clips:
    kind: video
    for_each: stills.outputs
    contents:
      - first_frame: "{{ item.file }}"
        id: start
    prompt: "@start turns slowly"
`;

const t = suite<{ emu: RunningEmulator; s3: S3rverHandle }>("item.file with a store", {} as never);
t.before(async (ctx) => {
  ctx.emu = await startEmulator({ timing: { scale: 0.05 }, slots: { video: 10, image: 10 } }, { port: 0 });
  ctx.s3 = await startS3rver();
});
t.after(async (ctx) => {
  await ctx.emu.close();
  await ctx.s3.close();
});

t("a downstream job's {{ item.file }} with outputs in a store: every clip is made from the upstream result, downloaded into the store, and planned as done", async ({ emu, s3 }) => {
  const dir = mkdtempSync(join(tmpdir(), "omnibatch-itemfile-"));
  try {
    const url = `s3://${s3.bucket}/frames`;
    writeFileSync(join(dir, "m.yaml"), yaml(url));
    const cli = (args: readonly string[]) =>
      execa("node", [bin, ...args], {
        cwd: dir,
        reject: false,
        extendEnv: false,
        env: { PATH: process.env.PATH ?? "", OMNIBATCH_API_KEY: emu.apiKey, OMNIBATCH_TIME_SCALE: "0.05", ...s3.env },
      });
    const validate = await cli(["validate", join(dir, "m.yaml")]);
    assert.is(validate.exitCode, 0, validate.stderr + validate.stdout);
    const run = await cli(["run", join(dir, "m.yaml"), "--base-url", emu.url, "--no-callbacks", "--json"]);
    assert.is(run.exitCode, 0, run.stderr + run.stdout.split("\n").filter((l) => l.includes("notice")).join("\n"));
    assert.not.match(run.stdout, /cannot expand/);
    const summary = JSON.parse(run.stdout.trim().split("\n").at(-1)!);
    assert.is(summary.created, 4, "two stills, two clips");
    assert.is(summary.downloaded, 4);
    const lock = (await readLockFile(join(dir, "m.lock.json")))!;
    const clips = Object.values(lock.tasks).filter((task) => task.job === "clips");
    assert.is(clips.length, 2);
    for (const c of clips) {
      assert.is(c.state, "downloaded");
      assert.ok(c.upstream && lock.tasks[c.upstream.task]?.job === "stills", "made from a still");
      assert.match(c.outputs[0]?.path ?? "", /^clips\//);
    }
    // The plan expands the clips again from the recorded stills (the link stands in for the file): all done.
    const plan = await cli(["plan", join(dir, "m.yaml"), "--json"]);
    assert.is(plan.exitCode, 0, plan.stderr);
    const planned = JSON.parse(plan.stdout);
    assert.equal([planned.jobs.clips["="], planned.jobs.clips["+"], planned.jobs.clips["-"]], [2, 0, 0]);
    assert.is(planned.results.present, 4);
    const again = await cli(["run", join(dir, "m.yaml"), "--base-url", emu.url, "--no-callbacks", "--json"]);
    assert.is(again.exitCode, 0, again.stderr);
    assert.is(JSON.parse(again.stdout.trim().split("\n").at(-1)!).created, 0, "nothing made twice");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

t.run();
