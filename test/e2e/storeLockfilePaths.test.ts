// A lockfile is untrusted input (a hand edit, a pull request to the committed file): a
// task line whose `dir` climbs out with `..` must not make a run with its outputs in a
// store (`--outputs s3://bucket/prefix`) write outside its prefix, nor `pull` copy outside
// its folder or crash. The built CLI against the emulator and s3rver (loopback): the run,
// `status` and `pull` refuse the lockfile (exit 2, naming its line and task, no stack),
// and nothing lands in the store outside the prefix.

import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { execa } from "execa";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { startEmulator, type RunningEmulator } from "../../src/emulator/Emulator.js";
import { startS3rver, type S3rverHandle } from "../store/s3rverServer.js";
import { copyManifests } from "../checkoutFiles.js";
import { bin } from "./runFixture.js";

const t = suite<{ emu: RunningEmulator; s3: S3rverHandle }>("lockfile paths with a store", {} as never);

t.before(async (ctx) => {
  ctx.emu = await startEmulator({ timing: { scale: 0.15 }, slots: { video: 20, image: 40 } }, { port: 0 });
  ctx.s3 = await startS3rver();
});
t.after(async (ctx) => {
  await ctx.emu.close();
  await ctx.s3.close();
});

const filesUnder = (dir: string): string[] =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });

t("a lockfile line whose dir climbs out of the prefix: run, status and pull refuse it (exit 2, its line named); nothing is written outside the prefix", async ({ emu, s3 }) => {
  const root = mkdtempSync(join(tmpdir(), "omnibatch-store-paths-"));
  try {
    copyManifests(root);
    const manifest = join(root, "manifests", "demo.yaml");
    const lockfile = join(root, "manifests", "demo.lock.json");
    const url = `s3://${s3.bucket}/pre`;
    const env = { PATH: process.env.PATH ?? "", OMNIBATCH_API_KEY: emu.apiKey, OMNIBATCH_TIME_SCALE: "0.05", ...s3.env };
    const cli = (args: string[]) => execa("node", [bin, ...args], { cwd: root, reject: false, extendEnv: false, env });
    const first = await cli(["run", manifest, "--base-url", emu.url, "--outputs", url, "--only", "keyframes", "--json"]);
    assert.is(first.exitCode, 0, first.stderr);

    // One keyframes line edited to put its folder two levels up: out of `pre`, out of the bucket.
    const lines = readFileSync(lockfile, "utf8").split("\n");
    const at = lines.findIndex((l) => l.startsWith("{") && l.includes('"kind":"image"'));
    assert.ok(at > 0, "a keyframes line");
    const line = JSON.parse(lines[at]!) as Record<string, unknown>;
    lines[at] = JSON.stringify({ ...line, dir: "../../other" });
    writeFileSync(lockfile, lines.join("\n"));
    const before = new Set(filesUnder(s3.directory));

    const damaged = new RegExp(`demo\\.lock\\.json is damaged: does not match the lockfile format \\(version 3\\): line ${at + 1}: task ${String(line.id)}: its folder \\("dir"\\) "\\.\\./\\.\\./other" climbs out`);
    const again = await cli(["run", manifest, "--base-url", emu.url, "--outputs", url, "--only", "keyframes", "--json"]);
    assert.is(again.exitCode, 2, again.stderr);
    assert.match(again.stderr, damaged, again.stderr);
    assert.not.match(again.stderr, /internal error|    at /);

    const status = await cli(["status", manifest, "--outputs", url]);
    assert.is(status.exitCode, 2, status.stderr);
    assert.match(status.stderr, damaged);

    const pulled = await cli(["pull", manifest, join(root, "pulled"), "--outputs", url]);
    assert.is(pulled.exitCode, 2, pulled.stderr);
    assert.match(pulled.stderr, damaged);
    assert.not.match(pulled.stderr, /internal error|    at /);
    assert.not.ok(existsSync(join(root, "other")), "nothing pulled outside the folder");

    // The store: no new object anywhere, nothing outside the bucket's `pre/`.
    const after = filesUnder(s3.directory).filter((f) => !before.has(f));
    assert.equal(after, [], "nothing new in the store");
    for (const f of filesUnder(s3.directory)) {
      const rel = relative(s3.directory, f).split("\\").join("/");
      assert.ok(!rel.startsWith("other"), `written outside the bucket: ${rel}`);
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

t.run();
