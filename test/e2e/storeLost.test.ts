// Lost results with the outputs in a store (issue 16), end to end: the built CLI runs the
// demo against the emulator (over loopback) into a real S3-compatible server (s3rver, in
// this process). Before the service's deletion, objects deleted from the store or replaced
// by other bytes of the same size are restorable and fetched again. On a new runner (the
// manifest folder and lockfile copied to an empty folder) past the 30-day deletion, the
// results whose objects are gone or replaced are reported lost by job and matrix values
// on status, plan, the run (exit 6), results.jsonl, report.html and the step summary;
// every output record stays in the lockfile.

import { createHash } from "node:crypto";
import { cpSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { execa } from "execa";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { startEmulator, type RunningEmulator } from "../../src/emulator/Emulator.js";
import type { LockOutput, LockTask } from "../../src/state/LockFile.js";
import { readLockFile } from "../../src/state/readLockFile.js";
import { openS3Store } from "../../src/store/S3Store.js";
import { parseStoreUrl, type StoreLocation } from "../../src/fs/StoreUrl.js";
import { listRequests, startS3rver, type S3rverHandle } from "../store/s3rverServer.js";
import { bin } from "./runFixture.js";
import { copyManifests } from "../checkoutFiles.js";

const DAY = 86_400_000;
const t = suite<{ emu: RunningEmulator; s3: S3rverHandle }>("lost results in a store", {} as never);

t.before(async (ctx) => {
  ctx.emu = await startEmulator({ timing: { scale: 0.15 }, slots: { video: 20, image: 40 } }, { port: 0 });
  ctx.s3 = await startS3rver();
});
t.after(async (ctx) => {
  await ctx.emu.close();
  await ctx.s3.close();
});

const cli = (s3: S3rverHandle, emu: RunningEmulator, cwd: string, args: readonly string[], env: Record<string, string> = {}) =>
  execa("node", [bin, ...args], {
    cwd,
    reject: false,
    extendEnv: false,
    env: { PATH: process.env.PATH ?? "", OMNIBATCH_API_KEY: emu.apiKey, OMNIBATCH_TIME_SCALE: "0.05", ...s3.env, ...env },
  });
const summaryOf = (stdout: string) => JSON.parse(stdout.trim().split("\n").at(-1)!);
const results = (lock: { tasks: Record<string, LockTask> }) =>
  Object.entries(lock.tasks)
    .flatMap(([id, task]) => task.outputs.filter((o) => o.path !== undefined).map((o) => ({ id, task, o })))
    .sort((a, b) => a.o.path!.localeCompare(b.o.path!));

/** Replaces an object by other bytes of the same size (its ETag changes, its size does not). */
const replaceSameSize = async (location: StoreLocation, s3: S3rverHandle, o: LockOutput) => {
  const store = await openS3Store(location, { env: s3.env });
  try {
    await store.put(o.path!, Readable.from([Buffer.alloc(o.size!, 7)]));
    assert.is((await store.head(o.path!))?.size, o.size);
  } finally {
    store.close();
  }
};
const removeObject = async (location: StoreLocation, s3: S3rverHandle, o: LockOutput) => {
  const store = await openS3Store(location, { env: s3.env });
  try {
    await store.remove(o.path!);
  } finally {
    store.close();
  }
};
const sha256Of = async (location: StoreLocation, s3: S3rverHandle, key: string): Promise<string | undefined> => {
  const store = await openS3Store(location, { env: s3.env });
  try {
    const got = await store.get(key);
    if (!got) return undefined;
    const hash = createHash("sha256");
    for await (const chunk of got.body) hash.update(chunk as Buffer);
    return hash.digest("hex");
  } finally {
    store.close();
  }
};
const textOf = async (location: StoreLocation, s3: S3rverHandle, key: string): Promise<string> => {
  const store = await openS3Store(location, { env: s3.env });
  try {
    const got = await store.get(key);
    const chunks: Buffer[] = [];
    for await (const chunk of got!.body) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).toString("utf8");
  } finally {
    store.close();
  }
};

t("before the deletion, a deleted object and one replaced by other bytes of the same size are restorable and fetched again; after it, on a new runner, they are lost by name on status, plan, run (exit 6) and the reports", async ({ emu, s3 }) => {
  const root = mkdtempSync(join(tmpdir(), "omnibatch-store-lost-"));
  const runner = mkdtempSync(join(tmpdir(), "omnibatch-store-lost-runner-"));
  try {
    copyManifests(root);
    const manifest = join(root, "manifests", "demo.yaml");
    const url = `s3://${s3.bucket}/lost/demo`;
    const location = parseStoreUrl(url) as StoreLocation;
    const first = await cli(s3, emu, root, ["run", manifest, "--base-url", emu.url, "--outputs", url, "--json", "--no-callbacks"]);
    assert.is(first.exitCode, 0, first.stderr);
    const made = (await readLockFile(join(root, "manifests", "demo.lock.json")))!;
    const all = results(made);
    assert.is(all.length, 10);
    const keyframes = all.filter((r) => r.task.job === "keyframes");
    const clips = all.filter((r) => r.task.job === "clips");

    // In place, before the deletion: one object deleted, one replaced by other bytes of its size.
    await removeObject(location, s3, keyframes[0]!.o);
    await replaceSameSize(location, s3, clips[0]!.o);
    const before = await cli(s3, emu, root, ["status", manifest, "--outputs", url, "--json"]);
    assert.is(before.exitCode, 0, before.stderr);
    assert.equal(JSON.parse(before.stdout).results, { present: 8, restorable: 2, lost: 0, lost_results: [] });
    const downloadsBefore = emu.stats().downloads;
    const again = await cli(s3, emu, root, ["run", manifest, "--base-url", emu.url, "--outputs", url, "--json", "--no-callbacks"]);
    assert.is(again.exitCode, 0, again.stderr);
    assert.is(summaryOf(again.stdout).created, 0);
    assert.is(emu.stats().downloads - downloadsBefore, 2, "the missing object and the replaced one, fetched again from the service");
    for (const r of [keyframes[0]!, clips[0]!]) assert.is(await sha256Of(location, s3, r.o.path!), r.o.sha256, `${r.o.path} holds its result again`);
    const restored = await cli(s3, emu, root, ["status", manifest, "--outputs", url, "--json"]);
    assert.equal(JSON.parse(restored.stdout).results, { present: 10, restorable: 0, lost: 0, lost_results: [] });

    // A new runner: the manifest folder with its committed lockfile, nothing else; the service's 30 days pass.
    cpSync(join(root, "manifests"), join(runner, "manifests"), { recursive: true });
    const runnerManifest = join(runner, "manifests", "demo.yaml");
    const committed = (await readLockFile(join(runner, "manifests", "demo.lock.json")))!;
    emu.advanceClock(31 * DAY);
    // Two objects deleted from the store, one replaced by other bytes of the same size.
    const gone = [keyframes[1]!, clips[2]!];
    const replaced = keyframes[3]!;
    for (const r of gone) await removeObject(location, s3, r.o);
    await replaceSameSize(location, s3, replaced.o);
    const lostPaths = [...gone, replaced].map((r) => r.o.path!).sort();

    // Before a run asks the service, the lockfile cannot know it deleted them (its clock is
    // the emulator's): missing or replaced in the store, they are restorable as far as it knows.
    const unasked = await cli(s3, emu, runner, ["status", runnerManifest, "--outputs", url, "--json"]);
    assert.equal([JSON.parse(unasked.stdout).results.present, JSON.parse(unasked.stdout).results.restorable], [7, 3]);

    const stepSummary = join(runner, "step-summary.md");
    const later = await cli(s3, emu, runner, ["run", runnerManifest, "--base-url", emu.url, "--outputs", url, "--json", "--no-callbacks"], {
      GITHUB_STEP_SUMMARY: stepSummary,
    });
    assert.is(later.exitCode, 6, later.stderr);
    const summary = summaryOf(later.stdout);
    assert.is(summary.outcome, "lost");
    assert.is(summary.created, 0, "nothing paid for again");
    assert.equal(summary.lost.map((l: { path: string }) => l.path).sort(), lostPaths);
    for (const l of summary.lost) assert.ok(l.job === "keyframes" || l.job === "clips", JSON.stringify(l));
    // Every output record is still in the lockfile, with its path, size and sha256.
    const after = (await readLockFile(join(runner, "manifests", "demo.lock.json")))!;
    assert.equal(Object.keys(after.tasks).sort(), Object.keys(committed.tasks).sort());
    for (const [id, task] of Object.entries(committed.tasks)) {
      const kept = after.tasks[id]!;
      assert.is(kept.outputs.length, task.outputs.length, id);
      for (const [i, o] of task.outputs.entries()) {
        assert.equal([kept.outputs[i]!.path, kept.outputs[i]!.size, kept.outputs[i]!.sha256, kept.outputs[i]!.etag], [o.path, o.size, o.sha256, o.etag], id);
        if (lostPaths.includes(o.path!)) assert.ok(kept.outputs[i]!.deleted_at !== undefined, `${o.path}: deleted at the service`);
      }
    }
    // Once the run found them deleted at the service: lost, on status and plan too.
    const listsBefore = listRequests(s3);
    const status = await cli(s3, emu, runner, ["status", runnerManifest, "--outputs", url, "--json"]);
    assert.is(status.exitCode, 0, status.stderr);
    assert.is(listRequests(s3) - listsBefore, 1, "one listing of the prefix");
    const view = JSON.parse(status.stdout).results;
    assert.equal([view.present, view.restorable, view.lost], [7, 0, 3]);
    assert.equal(view.lost_results.map((l: { path: string }) => l.path).sort(), lostPaths);
    const human = await cli(s3, emu, runner, ["status", runnerManifest, "--outputs", url]);
    assert.match(human.stdout, /3 lost/);
    for (const r of [...gone, replaced]) assert.ok(human.stdout.includes(`(${r.o.path})`), human.stdout);
    assert.ok(human.stdout.includes(`keyframes product=${JSON.stringify(replaced.task.vars.product)} style=${replaced.task.vars.style}`), human.stdout);
    const plan = await cli(s3, emu, runner, ["plan", runnerManifest, "--outputs", url, "--json"]);
    assert.is(plan.exitCode, 0, plan.stderr);
    const planned = JSON.parse(plan.stdout);
    assert.equal([planned.results.present, planned.results.lost], [7, 3]);
    assert.is(planned.total["+"], 0, "nothing to create: paying again is never automatic");
    assert.is(planned.jobs.clips["="], 5, "every clip still in the plan");

    // The replaced object was not overwritten by anything, nor counted.
    assert.is.not(await sha256Of(location, s3, replaced.o.path!), replaced.o.sha256);
    // The reports in the store and the step summary name the lost results.
    const lines = (await textOf(location, s3, "results.jsonl")).trim().split("\n").map((l) => JSON.parse(l));
    const states = lines.flatMap((l: { outputs?: { path?: string; state?: string }[] }) => (l.outputs ?? []).filter((o) => o.state === "lost").map((o) => o.path!)).sort();
    assert.equal(states, lostPaths);
    const html = await textOf(location, s3, "report.html");
    for (const p of lostPaths) assert.ok(html.includes(p), `report.html names ${p}`);
    const md = readFileSync(stepSummary, "utf8");
    for (const p of lostPaths) assert.ok(md.includes(p), `the step summary names ${p}`);
    // report, run again by hand, says the same.
    const report = await cli(s3, emu, runner, ["report", runnerManifest, "--outputs", url]);
    assert.is(report.exitCode, 0, report.stderr);
    assert.ok((await textOf(location, s3, "billing.md")).includes(replaced.o.path!));
  } finally {
    rmSync(root, { recursive: true, force: true });
    rmSync(runner, { recursive: true, force: true });
  }
});

t.run();
