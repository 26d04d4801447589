// Keys made from a lockfile's paths never leave the store's prefix: the store client
// refuses a path that climbs out (`..`, absolute) before any request is made, the store
// sink refuses such a task folder before fetching, and `pull` refuses a lockfile whose
// records name one (LockfileInvalid, exit 2, the task named) before copying anything.
// Against s3rver on loopback (it resolves `..` in keys on its disk, so a key that got
// through would land outside the prefix, or in another bucket).

import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { Readable } from "node:stream";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { UnsafeOutputPath } from "../../src/outputs/OutputPaths.js";
import type { LockFile, LockTask } from "../../src/state/LockFile.js";
import { LockfileInvalid } from "../../src/state/LockfileError.js";
import { pullResults } from "../../src/run/pullResults.js";
import { openS3Store } from "../../src/store/S3Store.js";
import { storeSink } from "../../src/outputs/StoreSink.js";
import { parseStoreUrl, type StoreLocation } from "../../src/fs/StoreUrl.js";
import { startS3rver, type S3rverHandle } from "./s3rverServer.js";

const test = suite<{ s3: S3rverHandle }>("store keys stay inside the prefix", { s3: undefined as unknown as S3rverHandle });
test.before(async (ctx) => {
  ctx.s3 = await startS3rver();
});
test.after(async (ctx) => {
  await ctx.s3.close();
});

const signal = new AbortController().signal;
const filesUnder = (dir: string): string[] =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
const rejection = (p: Promise<unknown>): Promise<unknown> => p.then(() => undefined, (e: unknown) => e);

test("put, get, head and remove of a key that climbs out of the prefix are refused before any request; nothing lands outside it", async ({ s3 }) => {
  const store = await openS3Store(parseStoreUrl(`s3://${s3.bucket}/pre`) as StoreLocation, { env: s3.env });
  const sink = storeSink(store);
  try {
    const requests = s3.seen.length;
    for (const rel of ["../../other/image-1.png", "../escape.png", "/abs/x.png", "a/../../b.png"]) {
      const put = await rejection(store.put(rel, Readable.from([Buffer.from("not a result")])));
      assert.instance(put, UnsafeOutputPath, rel);
      assert.match((put as Error).message, `refusing a path outside s3://${s3.bucket}/pre`);
      assert.instance(await rejection(store.get(rel)), UnsafeOutputPath, rel);
      assert.instance(await rejection(store.head(rel)), UnsafeOutputPath, rel);
      assert.instance(await rejection(store.remove(rel)), UnsafeOutputPath, rel);
      assert.instance(await rejection(sink.write(rel, { body: Readable.from([Buffer.from("x")]), type: "image", cap: 1e9 }, signal)), UnsafeOutputPath, rel);
    }
    assert.instance(await rejection(sink.prepare("../../other")), UnsafeOutputPath);
    await sink.prepare("keyframes/A-1_studio");
    assert.is(s3.seen.length, requests, "no request was made");
    for (const f of filesUnder(s3.directory)) {
      const rel = relative(s3.directory, f).split("\\").join("/");
      assert.ok(rel.startsWith(`${s3.bucket}/`) || !rel.includes("/"), `outside the bucket: ${rel}`);
      assert.not.ok(rel.includes("escape") || rel.includes("other"), rel);
    }
  } finally {
    await sink.close();
  }
});

test("pull refuses a lockfile whose record names a path out of the folder (LockfileInvalid naming the task) before copying anything", async ({ s3 }) => {
  const store = await openS3Store(parseStoreUrl(`s3://${s3.bucket}/pulled`) as StoreLocation, { env: s3.env });
  const sink = storeSink(store);
  const root = mkdtempSync(join(tmpdir(), "omnibatch-pullpaths-"));
  try {
    const written = await sink.write("job/a/image-1.png", { body: Readable.from([Buffer.from("image bytes")]), type: "image", cap: 1e9 }, signal);
    const record = (dir: string, path: string): LockTask => ({
      job: "job",
      kind: "image",
      vars: {},
      dir,
      request_hash: "h",
      take: 1,
      attempt: 1,
      state: "downloaded",
      updated_at: 1,
      outputs: [{ type: "image", index: 0, variant: "main", path, size: written.size, sha256: written.sha256 }],
      billing: [],
    });
    const lock: LockFile = {
      lockfile_version: 3,
      name: "m",
      tasks: { "m-job-good": record("job/a", "job/a/image-1.png"), "m-job-bad": record("../../up", "../../up/image-1.png") },
    };
    const dir = join(root, "pulled");
    const error = await rejection(pullResults(lock, sink, dir, { only: [], where: [] }, "/here/m.lock.json"));
    assert.instance(error, LockfileInvalid);
    assert.match((error as LockfileInvalid).message, `lockfile /here/m.lock.json is damaged: task m-job-bad: its folder ("dir") "../../up" climbs out`);
    assert.not.ok(existsSync(dir), "nothing copied");
    assert.not.ok(existsSync(join(root, "..", "up")));
    // Without the bad task: copied.
    const { ["m-job-bad"]: _, ...kept } = lock.tasks;
    const fine = await pullResults({ ...lock, tasks: kept }, sink, dir, { only: [], where: [] });
    assert.is(fine.pulled, 1);
  } finally {
    await sink.close();
    rmSync(root, { recursive: true, force: true });
  }
});

test.run();
