// Outputs in object storage, end to end: the built CLI runs the demo against the
// emulator (over loopback) with `--outputs s3://...` on a real S3-compatible server
// (s3rver, in this process). Every result and report lands in the store with the
// lockfile's sha256; a new runner (manifest + lockfile copied to an empty folder, the
// service's 30-day deletion passed) finds every result in the store with one listing and
// downloads nothing from the service; the store credentials appear in no output.

import { createHash } from "node:crypto";
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execa } from "execa";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { startEmulator, type RunningEmulator } from "../../src/emulator/Emulator.js";
import { readLockFile } from "../../src/state/readLockFile.js";
import { openS3Store } from "../../src/store/S3Store.js";
import { parseStoreUrl, type StoreLocation } from "../../src/fs/StoreUrl.js";
import { listRequests, startS3rver, type S3rverHandle } from "../store/s3rverServer.js";
import { bin } from "./runFixture.js";
import { copyManifests } from "../checkoutFiles.js";

const t = suite<{ emu: RunningEmulator; s3: S3rverHandle }>("outputs in a store", {} as never);

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

const run = (emu: RunningEmulator, s3: S3rverHandle, manifest: string, cwd: string, url: string, extraEnv: Record<string, string> = {}) =>
  execa("node", [bin, "run", manifest, "--base-url", emu.url, "--outputs", url, "--json"], {
    cwd,
    reject: false,
    extendEnv: false,
    env: { PATH: process.env.PATH ?? "", OMNIBATCH_API_KEY: emu.apiKey, OMNIBATCH_TIME_SCALE: "0.05", ...s3.env, ...extraEnv },
  });

const sha256Of = async (s3: S3rverHandle, location: StoreLocation, rel: string): Promise<string | undefined> => {
  const store = await openS3Store(location, { env: s3.env });
  try {
    const got = await store.get(rel);
    if (!got) return undefined;
    const hash = createHash("sha256");
    for await (const chunk of got.body) hash.update(chunk as Buffer);
    return hash.digest("hex");
  } finally {
    store.close();
  }
};

t("the demo's results and reports go to the store with their sha256; a new runner past the 30-day deletion downloads nothing and exits 0", async ({ emu, s3 }) => {
  const root = mkdtempSync(join(tmpdir(), "omnibatch-store-e2e-"));
  try {
    copyManifests(root);
    const manifest = join(root, "manifests", "demo.yaml");
    const url = `s3://${s3.bucket}/ci/demo`;
    const location = parseStoreUrl(url) as StoreLocation;
    const first = await run(emu, s3, manifest, root, url);
    assert.is(first.exitCode, 0, first.stderr);
    const summary = JSON.parse(first.stdout.trim().split("\n").at(-1)!);
    assert.is(summary.type, "summary");
    assert.is(summary.outputs, url);
    // No local outputs folder was made: everything is in the store.
    assert.equal(readdirSync(join(root)).sort(), ["manifests"]);
    const lock = await readLockFile(join(root, "manifests", "demo.lock.json"));
    const recorded = Object.values(lock!.tasks).flatMap((task) => task.outputs.filter((o) => o.path !== undefined));
    assert.is(recorded.length, 10, "five keyframes and five clips");
    for (const o of recorded) assert.is(await sha256Of(s3, location, o.path!), o.sha256, o.path);
    const store = await openS3Store(location, { env: s3.env });
    const keys = [...(await store.list()).keys()];
    store.close();
    for (const f of ["results.jsonl", "billing.csv", "billing.json", "billing.md", "report.html"]) assert.ok(keys.includes(f), f);
    assert.is(keys.filter((k) => k.endsWith("/task.json")).length, 10, "a task.json beside each task's files");
    assert.ok(keys.some((k) => k.endsWith("metadata.jsonl")));
    // The store's secret is in no output: stdout, stderr, the lockfile folder, the store's objects.
    const texts = [first.stdout, first.stderr, ...filesUnder(root).map((f) => readFileSync(f, "latin1")), ...filesUnder(s3.directory).map((f) => readFileSync(f, "latin1"))];
    for (const text of texts) assert.not.ok(text.includes(s3.secretAccessKey), "the secret key leaked");

    // pull: the keyframes (then only the studio ones) to a local folder, verified.
    const pull = (args: string[]) =>
      execa("node", [bin, "pull", manifest, ...args, "--outputs", url, "--json"], { cwd: root, reject: false, extendEnv: false, env: { PATH: process.env.PATH ?? "", ...s3.env } });
    const studio = await pull([join(root, "studio"), "--where", "style=studio"]);
    assert.is(studio.exitCode, 0, studio.stderr);
    assert.is(JSON.parse(studio.stdout).pulled, 3, "three products in studio light");
    const pulled = await pull([join(root, "pulled"), "--only", "keyframes"]);
    assert.is(pulled.exitCode, 0, pulled.stderr);
    const p = JSON.parse(pulled.stdout);
    assert.equal([p.pulled, p.present, p.problems], [5, 0, []]);
    const keyframes = Object.values(lock!.tasks).filter((task) => task.job === "keyframes").flatMap((task) => task.outputs.filter((o) => o.path));
    for (const o of keyframes) assert.is(createHash("sha256").update(readFileSync(join(root, "pulled", o.path!))).digest("hex"), o.sha256);
    assert.ok(readFileSync(join(root, "pulled", "report.html"), "utf8").includes("<html"));
    const twice = await pull([join(root, "pulled"), "--only", "keyframes"]);
    assert.equal([JSON.parse(twice.stdout).pulled, JSON.parse(twice.stdout).present], [0, 5]);
    const bad = await pull([join(root, "x"), "--where", "nokey"]);
    assert.is(bad.exitCode, 2);
    assert.match(bad.stderr, /--where 'nokey' must be key=value/);

    // Each result's record keeps the store's ETag fingerprint (its MD5's first 8 hex digits).
    for (const o of recorded) assert.match(o.etag ?? "", /^[0-9a-f]{8}$/, o.path);

    // status and plan take --outputs too, and count the results in the store (one listing);
    // a store that cannot be listed is one line naming it, the rest from the lockfile, exit 2.
    const cli = (args: string[], env: Record<string, string> = {}) =>
      execa("node", [bin, ...args], { cwd: root, reject: false, extendEnv: false, env: { PATH: process.env.PATH ?? "", ...env } });
    const status = await cli(["status", manifest, "--outputs", url, "--json"], s3.env);
    assert.is(status.exitCode, 0, status.stderr);
    assert.is(JSON.parse(status.stdout).outputs, url);
    assert.equal(JSON.parse(status.stdout).results, { present: 10, restorable: 0, lost: 0, lost_results: [] });
    const unlisted = await cli(["status", manifest, "--outputs", url, "--json"], { ...s3.env, AWS_ENDPOINT_URL_S3: "http://127.0.0.1:9" });
    assert.is(unlisted.exitCode, 2, unlisted.stderr);
    assert.is(unlisted.stderr.trim().split("\n").length, 1, unlisted.stderr);
    assert.match(unlisted.stderr, /^omnibatch: cannot list the outputs store s3:\/\/results\/ci\/demo: .*the rest is from the lockfile alone$/m);
    assert.not.match(unlisted.stderr, /\n\s+at /);
    const partial = JSON.parse(unlisted.stdout);
    assert.is(partial.results, undefined);
    assert.match(partial.results_unknown, /cannot list the outputs store s3:\/\/results\/ci\/demo/);
    assert.is((partial.jobs as { states: { downloaded: number } }[]).reduce((n, j) => n + j.states.downloaded, 0), 10, "what the lockfile knows is still shown");
    const planUnlisted = await cli(["plan", manifest, "--outputs", url]);
    assert.is(planUnlisted.exitCode, 2);
    assert.match(planUnlisted.stderr, /^omnibatch: cannot list the outputs store s3:\/\/results\/ci\/demo: no region: set AWS_REGION/m);
    assert.not.match(planUnlisted.stderr, /\n\s+at /);
    const reportUnlisted = await cli(["report", manifest, "--outputs", url], { ...s3.env, AWS_ENDPOINT_URL_S3: "http://127.0.0.1:9" });
    assert.is(reportUnlisted.exitCode, 2);
    assert.match(reportUnlisted.stderr, /^omnibatch: cannot use the outputs store s3:\/\/results\/ci\/demo: /);
    assert.is(reportUnlisted.stderr.trim().split("\n").length, 1, reportUnlisted.stderr);
    const badUrl = await cli(["plan", manifest, "--outputs", "s3://No_Such/x"]);
    assert.is(badUrl.exitCode, 2);
    assert.match(badUrl.stderr, /--outputs 's3:\/\/No_Such\/x': write s3:\/\/bucket\/prefix/);

    // A new runner: only what is committed (manifest, data, lockfile), the service's copies deleted.
    const runner = mkdtempSync(join(tmpdir(), "omnibatch-store-runner-"));
    try {
      cpSync(join(root, "manifests"), join(runner, "manifests"), { recursive: true });
      await fetch(`${emu.url}/_emulator/clock`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ advanceMs: 31 * 24 * 3600 * 1000 }) });
      const downloadsBefore = emu.stats().downloads;
      const listsBefore = listRequests(s3);
      const second = await run(emu, s3, join(runner, "manifests", "demo.yaml"), runner, url);
      assert.is(second.exitCode, 0, second.stderr);
      const again = JSON.parse(second.stdout.trim().split("\n").at(-1)!);
      assert.is(again.created, 0);
      assert.is(again.downloaded, 0);
      assert.is(emu.stats().downloads - downloadsBefore, 0, "nothing downloaded from the service");
      assert.ok(listRequests(s3) - listsBefore <= 2, `one listing of the prefix (and one by the reports), not one request per file: ${listRequests(s3) - listsBefore}`);
      const after = await readLockFile(join(runner, "manifests", "demo.lock.json"));
      const kept = Object.values(after!.tasks).flatMap((task) => task.outputs.filter((o) => o.path !== undefined));
      assert.equal(kept.map((o) => o.sha256).sort(), recorded.map((o) => o.sha256).sort());
    } finally {
      rmSync(runner, { recursive: true, force: true });
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

t("a store that cannot be reached stops the run before anything is created (exit 2, a clear message, no stack)", async ({ emu, s3 }) => {
  const root = mkdtempSync(join(tmpdir(), "omnibatch-store-e2e-"));
  try {
    copyManifests(root);
    const createsBefore = emu.stats().requests?.["POST /v1/images/omni-image"] ?? 0;
    const r = await run(emu, s3, join(root, "manifests", "demo.yaml"), root, `s3://${s3.bucket}/x`, { AWS_ENDPOINT_URL_S3: "http://127.0.0.1:9" });
    assert.is(r.exitCode, 2, r.stderr);
    assert.match(r.stderr, /cannot use the outputs store s3:\/\/results\/x: .*nothing was sent to the service/);
    assert.not.match(r.stderr, /\n\s+at /);
    assert.not.match(r.stderr, /AWS SDK|NodeVersionSupportWarning/);
    assert.not.ok(r.stderr.includes(s3.secretAccessKey));
    assert.is(emu.stats().requests?.["POST /v1/images/omni-image"] ?? 0, createsBefore);
    // A plan before anything is recorded has no result to look for: it does not ask the store.
    const plan = await execa("node", [bin, "plan", join(root, "manifests", "demo.yaml"), "--outputs", `s3://${s3.bucket}/x`, "--json"], {
      cwd: root,
      reject: false,
      extendEnv: false,
      env: { PATH: process.env.PATH ?? "", ...s3.env, AWS_ENDPOINT_URL_S3: "http://127.0.0.1:9" },
    });
    assert.is(plan.exitCode, 0, plan.stderr);
    assert.is(JSON.parse(plan.stdout).total["+"], 5);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

t.run();
