// `omnibatch verify` (issue 27, item 13), through the built CLI against the emulator on
// loopback, with folder outputs and with outputs in a store (s3rver). A result replaced
// by zeros of the same size, one cut short, one removed and a record whose sha256 was
// edited by hand: a run's start (sizes only) takes the zeros and the edited hash as
// present; verify names each (task, file, expected against found) and exits 1; --fix
// fetches them again from the service (no create) and verify then exits 0.

import { createHash } from "node:crypto";
import { readFileSync, rmSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { execa } from "execa";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { startEmulator, type RunningEmulator } from "../../src/emulator/Emulator.js";
import { readLockFile } from "../../src/state/readLockFile.js";
import { openS3Store } from "../../src/store/S3Store.js";
import { parseStoreUrl, type StoreLocation } from "../../src/fs/StoreUrl.js";
import { startS3rver, type S3rverHandle } from "../store/s3rverServer.js";
import { assertAllResults, bin, manifestHead, runCli, stillsJob, workspace, type Workspace } from "./runFixture.js";

const t = suite<{ emu: RunningEmulator; s3: S3rverHandle }>("verify", {} as never);

t.before(async (ctx) => {
  ctx.emu = await startEmulator({ timing: { scale: 0.05 }, slots: { video: 20, image: 40 } }, { port: 0 });
  ctx.s3 = await startS3rver();
});
t.after(async (ctx) => {
  await ctx.emu.close();
  await ctx.s3.close();
});

const verify = (ws: Workspace, args: readonly string[], env: Record<string, string>) =>
  execa("node", [bin, "verify", ws.manifest, ...args], { cwd: ws.dir, reject: false, all: true, extendEnv: false, env: { PATH: process.env.PATH ?? "", ...env } });

const creates = (emu: RunningEmulator) => Object.values(emu.stats().creates).reduce((a, b) => a + b, 0);

/** The lockfile with one output's sha256 replaced (a hand edit). */
const editSha = (ws: Workspace, sha: string, to: string) => writeFileSync(ws.lockfile, readFileSync(ws.lockfile, "utf8").replace(sha, to));

t("folder outputs: zeros of the same size, a file cut short, a file removed and an edited sha256 are each named; --fix fetches them again, creating nothing", async ({ emu }) => {
  const ws = workspace(`${manifestHead("verified")}${stillsJob(["apple", "boat", "chair", "door"])}`);
  try {
    const env = { OMNIBATCH_API_KEY: emu.apiKey };
    const first = await runCli(ws, ["--base-url", emu.url, "--no-callbacks"], env);
    assert.is(first.exitCode, 0, first.all);
    const lock = await assertAllResults(ws);
    const outs = Object.entries(lock.tasks).map(([id, task]) => ({ id, o: task.outputs.find((o) => o.path !== undefined)! }));
    assert.is(outs.length, 4);
    const [zeroed, cut, gone, edited] = outs;
    const clean = await verify(ws, [], env);
    assert.is(clean.exitCode, 0, clean.all);
    assert.match(clean.all!, "All 4 recorded result(s)");

    writeFileSync(join(ws.outputs, zeroed!.o.path!), Buffer.alloc(zeroed!.o.size!));
    truncateSync(join(ws.outputs, cut!.o.path!), 10);
    rmSync(join(ws.outputs, gone!.o.path!));
    const fakeSha = "0".repeat(64);
    editSha(ws, edited!.o.sha256!, fakeSha);
    const zeroSha = createHash("sha256").update(Buffer.alloc(zeroed!.o.size!)).digest("hex");

    const found = await verify(ws, [], env);
    assert.is(found.exitCode, 1, found.all);
    assert.match(found.all!, "4 of 4 recorded result(s)");
    assert.match(found.all!, `${zeroed!.id}: ${zeroed!.o.path}: expected ${zeroed!.o.size} bytes, sha256 ${zeroed!.o.sha256}; found ${zeroed!.o.size} bytes, sha256 ${zeroSha}`);
    assert.match(found.all!, `${cut!.id}: ${cut!.o.path}: expected ${cut!.o.size} bytes`);
    assert.match(found.all!, "found 10 bytes");
    assert.match(found.all!, `${gone!.id}: ${gone!.o.path}: missing`);
    assert.match(found.all!, `${edited!.id}: ${edited!.o.path}: expected ${edited!.o.size} bytes, sha256 ${fakeSha}; found ${edited!.o.size} bytes, sha256 ${edited!.o.sha256}`);
    const json = await verify(ws, ["--json"], env);
    assert.is(json.exitCode, 1);
    assert.is((JSON.parse(json.stdout) as { differences: unknown[] }).differences.length, 4);

    const before = creates(emu);
    const fixed = await verify(ws, ["--fix", "--base-url", emu.url], env);
    assert.is(fixed.exitCode, 0, fixed.all);
    assert.match(fixed.all!, "Every result is now as recorded");
    assert.is(creates(emu), before, "--fix creates nothing");
    await assertAllResults(ws);
    // The zeros are the service's result again, the edited record holds the file's real hash.
    assert.is(createHash("sha256").update(readFileSync(join(ws.outputs, zeroed!.o.path!))).digest("hex"), zeroed!.o.sha256);
    const after = (await readLockFile(ws.lockfile))!;
    assert.is(after.tasks[edited!.id]!.outputs.find((o) => o.path === edited!.o.path)!.sha256, edited!.o.sha256);
    const again = await verify(ws, [], env);
    assert.is(again.exitCode, 0, again.all);
  } finally {
    ws.remove();
  }
});

t("a run's start takes a same-size replacement as present (sizes only): verify is the check that notices", async ({ emu }) => {
  const ws = workspace(`${manifestHead("startcheck")}${stillsJob(["apple"])}`);
  try {
    const env = { OMNIBATCH_API_KEY: emu.apiKey };
    assert.is((await runCli(ws, ["--base-url", emu.url, "--no-callbacks"], env)).exitCode, 0);
    const o = Object.values((await readLockFile(ws.lockfile))!.tasks)[0]!.outputs.find((x) => x.path !== undefined)!;
    writeFileSync(join(ws.outputs, o.path!), Buffer.alloc(o.size!));
    const rerun = await runCli(ws, ["--base-url", emu.url, "--no-callbacks"], env);
    assert.is(rerun.exitCode, 0, rerun.all);
    const found = await verify(ws, [], env);
    assert.is(found.exitCode, 1, found.all);
    assert.match(found.all!, o.path!);
  } finally {
    ws.remove();
  }
});

t("store outputs: an object replaced by zeros of the same size and one removed are named; --fix puts the service's results back in the store", async ({ emu, s3 }) => {
  const url = `s3://${s3.bucket}/verify/${Date.now()}`;
  const ws = workspace(`${manifestHead("stored", { outputs: url })}${stillsJob(["apple", "boat"])}`);
  const location = parseStoreUrl(url) as StoreLocation;
  const store = await openS3Store(location, { env: s3.env });
  try {
    const env = { OMNIBATCH_API_KEY: emu.apiKey, ...s3.env };
    const first = await runCli(ws, ["--base-url", emu.url, "--no-callbacks"], env);
    assert.is(first.exitCode, 0, first.all);
    const lock = (await readLockFile(ws.lockfile))!;
    const outs = Object.entries(lock.tasks).map(([id, task]) => ({ id, o: task.outputs.find((o) => o.path !== undefined)! }));
    assert.is(outs.length, 2);
    const clean = await verify(ws, [], env);
    assert.is(clean.exitCode, 0, clean.all);

    const [zeroed, gone] = outs;
    await store.remove(zeroed!.o.path!);
    const body = new PassThrough();
    body.end(Buffer.alloc(zeroed!.o.size!));
    await store.put(zeroed!.o.path!, body);
    await store.remove(gone!.o.path!);

    const found = await verify(ws, [], env);
    assert.is(found.exitCode, 1, found.all);
    assert.match(found.all!, `${zeroed!.id}: ${zeroed!.o.path}: expected ${zeroed!.o.size} bytes, sha256 ${zeroed!.o.sha256}; found ${zeroed!.o.size} bytes`);
    assert.match(found.all!, `${gone!.id}: ${gone!.o.path}: missing`);

    const before = creates(emu);
    const fixed = await verify(ws, ["--fix", "--base-url", emu.url], env);
    assert.is(fixed.exitCode, 0, fixed.all);
    assert.is(creates(emu), before, "--fix creates nothing");
    for (const { o } of outs) {
      const got = await store.get(o.path!);
      assert.ok(got, o.path);
      const hash = createHash("sha256");
      for await (const chunk of got!.body) hash.update(chunk as Buffer);
      assert.is(hash.digest("hex"), o.sha256, o.path);
    }
    assert.not.ok(fixed.all!.includes(s3.env["AWS_SECRET_ACCESS_KEY"] ?? "\u0000"), "no store secret in the output");
  } finally {
    store.close();
    ws.remove();
  }
});

t.run();
