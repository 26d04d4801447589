// Never pay twice across manifests (issue 31) with results in an object store and at the
// service: the built CLI against the emulator as a server (loopback HTTP; its creates
// counted per request) and s3rver (loopback). A CI runner with an empty outputs folder (a
// fresh clone: the committed lockfile, nothing else) reuses what the store holds, into a
// folder (downloaded, checked by sha256) or into a store (a server-side copy, checked);
// an object with other bytes than recorded is never used. A source whose files are gone
// is fetched from the service by its task id while the service holds it (0 creates, each
// file's sha256 the record's), and a folder's files are uploaded into a store target; past
// the service's 30 days a source whose files are gone is created, and plan says why.
//
// test-runner: AWS SDK process (s3rverServer.ts: the AWS SDK sets process-wide state).

import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execa } from "execa";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { startEmulator, type RunningEmulator } from "../../src/emulator/Emulator.js";
import { readLockFile } from "../../src/state/readLockFile.js";
import { openS3Store } from "../../src/store/S3Store.js";
import { parseStoreUrl, type StoreLocation } from "../../src/fs/StoreUrl.js";
import type { LockFile } from "../../src/state/LockFile.js";
import { startS3rver, type S3rverHandle } from "../store/s3rverServer.js";
import { bin, manifestHead, stillsJob } from "./runFixture.js";

const DAY = 86_400_000;
const t = suite<{ emu: RunningEmulator; s3: S3rverHandle }>("reuse from a store and from the service", {} as never);

t.before(async (ctx) => {
  ctx.emu = await startEmulator({ timing: { scale: 0.1 }, slots: { video: 20, image: 40 } }, { port: 0 });
  ctx.s3 = await startS3rver();
});
t.after(async (ctx) => {
  await ctx.emu.close();
  await ctx.s3.close();
});

/** Two stills and a clip of each: four paid tasks, the clips' requests naming the stills by content. */
const yamlOf = (name: string, outputs: string) => `${manifestHead(name, { outputs })}${stillsJob(["apple", "boat"])}  clips:
    kind: video
    for_each: stills.outputs
    contents:
      - first_frame: "{{ item.url }}"
        id: start
    prompt: "@start turns slowly"
`;

const cli = (emu: RunningEmulator, s3: S3rverHandle, cwd: string, args: readonly string[]) =>
  execa("node", [bin, ...args], {
    cwd,
    reject: false,
    all: true,
    extendEnv: false,
    timeout: 120_000,
    env: { PATH: process.env.PATH ?? "", OMNIBATCH_API_KEY: emu.apiKey, OMNIBATCH_BASE_URL: emu.url, OMNIBATCH_TIME_SCALE: "0.05", ...s3.env },
  });
const git = (cwd: string, args: readonly string[]) => execa("git", ["-c", "user.email=t@example.com", "-c", "user.name=t", "-c", "init.defaultBranch=main", ...args], { cwd, timeout: 30_000 });
const summaryOf = (stdout: string) => JSON.parse(stdout.trim().split("\n").at(-1)!) as { created: number; outcome: string };
const creates = (emu: RunningEmulator) => Object.values(emu.stats().creates).reduce((n, c) => n + c, 0);
const sha = (file: string) => createHash("sha256").update(readFileSync(file)).digest("hex");
const lockOf = async (dir: string, name: string): Promise<LockFile> => (await readLockFile(join(dir, `${name}.lock.json`)))!;

const objectSha = async (s3: S3rverHandle, location: StoreLocation, rel: string): Promise<string | undefined> => {
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
const storeAt = (url: string): StoreLocation => {
  const l = parseStoreUrl(url);
  if ("problem" in l) throw new Error(l.problem);
  return l;
};

/** A repository holding `name.yaml` run once and committed with its lockfile. */
const paidRepo = async (emu: RunningEmulator, s3: S3rverHandle, name: string, outputs: string) => {
  const repo = mkdtempSync(join(tmpdir(), "omnibatch-reuse-repo-"));
  writeFileSync(join(repo, `${name}.yaml`), yamlOf(name, outputs));
  const first = await cli(emu, s3, repo, ["run", `${name}.yaml`, "--json"]);
  assert.is(first.exitCode, 0, first.all);
  assert.is(summaryOf(first.stdout).created, 4);
  await git(repo, ["init", "-q"]);
  await git(repo, ["add", `${name}.yaml`, `${name}.lock.json`]);
  await git(repo, ["commit", "-q", "-m", "paid"]);
  return repo;
};

t("a CI runner with an empty outputs folder reuses what the committed lockfile and the store hold: into a folder, into the store (server-side), never an object with other bytes", async ({ emu, s3 }) => {
  emu.reset();
  const repo = await paidRepo(emu, s3, "a", "s3://results/a");
  const runner = mkdtempSync(join(tmpdir(), "omnibatch-reuse-runner-"));
  try {
    await git(tmpdir(), ["clone", "-q", repo, runner]);
    const source = await lockOf(runner, "a");
    const paid = creates(emu);

    // Into a folder: the objects downloaded, each checked by sha256.
    writeFileSync(join(runner, "b.yaml"), yamlOf("b", "out/b"));
    const plan = await cli(emu, s3, runner, ["plan", "b.yaml"]);
    assert.is(plan.exitCode, 0, plan.all);
    assert.match(plan.stdout, /= b-stills-\S+ +stills\/apple +\(reused: same request as a\.yaml stills subject=apple, paid \d{4}-\d\d-\d\d\)/);
    assert.match(plan.stdout, "reused 4:");
    const run = await cli(emu, s3, runner, ["run", "b.yaml", "--json"]);
    assert.is(run.exitCode, 0, run.all);
    assert.is(summaryOf(run.stdout).created, 0);
    assert.is(creates(emu), paid, "no create reached the service");
    const b = await lockOf(runner, "b");
    assert.is(Object.keys(b.tasks).length, 4);
    for (const [id, x] of Object.entries(b.tasks)) {
      assert.is(x.reused_from?.lockfile, "a.lock.json", id);
      const from = source.tasks[x.reused_from!.id]!;
      for (const o of x.outputs.filter((o) => o.path)) {
        assert.is(sha(join(runner, "out/b", o.path!)), o.sha256, o.path);
        assert.ok(from.outputs.some((f) => f.sha256 === o.sha256), `${o.path}: the source's bytes`);
      }
    }

    // Into a store: each object copied server-side (no byte through the runner), then read back and checked.
    writeFileSync(join(runner, "c.yaml"), yamlOf("c", "s3://results/c"));
    const seenBefore = s3.seen.length;
    const toStore = await cli(emu, s3, runner, ["run", "c.yaml", "--json"]);
    assert.is(toStore.exitCode, 0, toStore.all);
    assert.is(summaryOf(toStore.stdout).created, 0);
    assert.is(creates(emu), paid);
    const c = await lockOf(runner, "c");
    const files = Object.values(c.tasks).flatMap((x) => x.outputs.filter((o) => o.path));
    assert.is(files.length, 4);
    const copies = s3.seen.slice(seenBefore).filter((r) => r.method === "PUT" && r.copyFrom !== undefined);
    assert.is(copies.length, files.length, "one server-side copy per file");
    assert.ok(copies.every((r) => /^\/?results\/a\//.test(decodeURIComponent(r.copyFrom!))), "copied from a's prefix only");
    for (const o of files) assert.is(await objectSha(s3, storeAt("s3://results/c"), o.path!), o.sha256, o.path);

    // An object of a's with other bytes (the same size) is never used: that still is created, and so is its clip (a new input).
    const apple = Object.values(source.tasks).find((x) => x.job === "stills" && x.vars["subject"] === "apple")!;
    const key = apple.outputs.find((o) => o.path)!;
    const store = await openS3Store(storeAt("s3://results/a"), { env: s3.env });
    try {
      const got = await store.get(key.path!);
      const bytes = Buffer.from(await got!.body.toArray().then((cs) => Buffer.concat(cs as Buffer[])));
      bytes[bytes.length - 1] ^= 0xff;
      const { Readable } = await import("node:stream");
      await store.put(key.path!, Readable.from([bytes]));
    } finally {
      store.close();
    }
    writeFileSync(join(runner, "e.yaml"), yamlOf("e", "out/e"));
    // b's and c's copies hold the same request, but their lockfiles are not committed: not sources.
    // The changed object is passed over; the service still holds a's task: its own bytes are fetched by task id.
    const changed = await cli(emu, s3, runner, ["plan", "e.yaml"]);
    assert.match(changed.stdout, /= e-stills-\S+ +stills\/apple +\(reused: same request as a\.yaml stills subject=apple, paid [\d-]+, fetched again from the service by its task id\)/);
    assert.match(changed.stdout, /= e-stills-\S+ +stills\/boat +\(reused: same request as a\.yaml stills subject=boat, paid [\d-]+\)/);
    const made = await cli(emu, s3, runner, ["run", "e.yaml", "--json"]);
    assert.is(made.exitCode, 0, made.all);
    assert.is(summaryOf(made.stdout).created, 0);
    assert.is(creates(emu), paid);
    const e = await lockOf(runner, "e");
    const still = Object.values(e.tasks).find((x) => x.job === "stills" && x.vars["subject"] === "apple")!;
    const placed = still.outputs.find((o) => o.path)!;
    assert.is(placed.sha256, key.sha256, "the recorded bytes, not the changed object's");
    assert.is(sha(join(runner, "out/e", placed.path!)), key.sha256);
    assert.is.not(await objectSha(s3, storeAt("s3://results/a"), key.path!), key.sha256, "the store's object is still the changed one (left as it is)");

    // A committed lockfile whose manifest names a store that cannot be listed (no such bucket): one warning naming it; the rest is reused.
    writeFileSync(join(runner, "z.yaml"), yamlOf("a", "s3://no-such-bucket/z"));
    writeFileSync(join(runner, "z.lock.json"), readFileSync(join(runner, "a.lock.json")));
    await git(runner, ["add", "z.yaml", "z.lock.json"]);
    await git(runner, ["commit", "-q", "-m", "z"]);
    writeFileSync(join(runner, "f.yaml"), yamlOf("f", "out/f"));
    const unlisted = await cli(emu, s3, runner, ["plan", "f.yaml"]);
    assert.is(unlisted.exitCode, 0, unlisted.all);
    assert.is(unlisted.stderr.split("\n").filter((l) => l.includes("s3://no-such-bucket/z")).length, 1, unlisted.stderr);
    assert.match(unlisted.stderr, "reuse: the results in s3://no-such-bucket/z are not looked at");
    assert.match(unlisted.stdout, "reused 4:");
  } finally {
    rmSync(repo, { recursive: true, force: true });
    rmSync(runner, { recursive: true, force: true });
  }
});

t("files gone, the service still holds the tasks: fetched by task id (0 creates, sha256 as recorded); past its 30 days: created, and plan says why", async ({ emu, s3 }) => {
  emu.reset();
  const repo = await paidRepo(emu, s3, "m", "out/m");
  try {
    const source = await lockOf(repo, "m");
    rmSync(join(repo, "out"), { recursive: true, force: true });
    const paid = creates(emu);
    writeFileSync(join(repo, "n.yaml"), yamlOf("n", "out/n"));
    const plan = await cli(emu, s3, repo, ["plan", "n.yaml"]);
    assert.is(plan.exitCode, 0, plan.all);
    assert.match(plan.stdout, /= n-stills-\S+ +stills\/apple +\(reused: same request as m\.yaml stills subject=apple, paid [\d-]+, fetched again from the service by its task id\)/);
    assert.match(plan.stdout, "reused 4:");
    const run = await cli(emu, s3, repo, ["run", "n.yaml", "--json"]);
    assert.is(run.exitCode, 0, run.all);
    assert.is(summaryOf(run.stdout).created, 0);
    assert.is(creates(emu), paid, "no create reached the service");
    const n = await lockOf(repo, "n");
    assert.is(Object.keys(n.tasks).length, 4);
    for (const [id, x] of Object.entries(n.tasks)) {
      const from = source.tasks[x.reused_from!.id]!;
      assert.is(x.task_id, from.task_id, `${id}: the source's task at the same service`);
      const files = x.outputs.filter((o) => o.path && o.variant === "main");
      assert.ok(files.length > 0, id);
      for (const o of files) {
        assert.is(sha(join(repo, "out/n", o.path!)), o.sha256, o.path);
        assert.is(o.sha256, from.outputs.find((f) => f.index === o.index && f.variant === o.variant)?.sha256, `${o.path}: the recorded bytes`);
      }
    }

    // n committed: its folder is a source for a manifest whose outputs are in a store (each file uploaded, checked).
    await git(repo, ["add", "n.yaml", "n.lock.json"]);
    await git(repo, ["commit", "-q", "-m", "n"]);
    writeFileSync(join(repo, "s.yaml"), yamlOf("s", "s3://results/s"));
    const up = await cli(emu, s3, repo, ["run", "s.yaml", "--json"]);
    assert.is(up.exitCode, 0, up.all);
    assert.is(summaryOf(up.stdout).created, 0);
    assert.is(creates(emu), paid);
    const sLock = await lockOf(repo, "s");
    const uploaded = Object.values(sLock.tasks).flatMap((x) => x.outputs.filter((o) => o.path && o.variant === "main"));
    assert.is(uploaded.length, 4);
    for (const o of uploaded) assert.is(await objectSha(s3, storeAt("s3://results/s"), o.path!), o.sha256, o.path);
    assert.ok(Object.values(sLock.tasks).every((x) => x.reused_from?.lockfile === "n.lock.json"), "from n's folder (m's files are gone)");
  } finally {
    rmSync(repo, { recursive: true, force: true });
  }

  // Paid 31 days ago (the service's clock then), its files gone since, the service past its 30 days.
  // An account with no tasks whose clock is 31 days behind (saving reads the clock: reset again before the restore).
  emu.reset();
  const blank = emu.saveState();
  emu.reset();
  emu.restoreState({ ...blank, clock: { offsetMs: -31 * DAY, lastMs: 0 } });
  assert.ok(emu.now() < Date.now() - 30 * DAY, "the service's clock is 31 days behind");
  const old = await paidRepo(emu, s3, "p", "out/p");
  try {
    emu.advanceClock(31 * DAY);
    rmSync(join(old, "out"), { recursive: true, force: true });
    const paid = creates(emu);
    writeFileSync(join(old, "q.yaml"), yamlOf("q", "out/q"));
    const plan = await cli(emu, s3, old, ["plan", "q.yaml"]);
    assert.is(plan.exitCode, 0, plan.all);
    assert.match(plan.stdout, /\+ q-stills-\S+ +stills\/apple.*not reused \(files gone, past the service's 30 days\)/);
    assert.not.match(plan.stdout, "reused 4");
    const run = await cli(emu, s3, old, ["run", "q.yaml", "--json"]);
    assert.is(run.exitCode, 0, run.all);
    assert.is(summaryOf(run.stdout).created, 4);
    assert.is(creates(emu), paid + 4);
  } finally {
    rmSync(old, { recursive: true, force: true });
  }
});

t.run();
