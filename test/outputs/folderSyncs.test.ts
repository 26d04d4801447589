// Shared folder fsyncs (src/outputs/folderSyncs.ts): a change is made durable only by an
// fsync of its folder that started after the change; such an fsync, running or waiting
// to start, is shared instead of starting another. Driven with a folder fsync whose end
// the test decides, so the order of starts and ends is exact; then on a real file system,
// where many task folders made in one parent while its fsync runs need far fewer fsyncs
// of that parent than folders.

import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { fsyncDir } from "../../src/fs/durable.js";
import { folderSink } from "../../src/outputs/FolderSink.js";
import { makeFolderSyncs } from "../../src/outputs/folderSyncs.js";

const test = suite("folderSyncs");

/** A folder fsync that ends when the test says: each start recorded with its folder. */
const controlled = () => {
  const starts: { dir: string; end: (error?: Error) => void }[] = [];
  const fsync = (dir: string) =>
    new Promise<void>((resolve, reject) => {
      starts.push({ dir, end: (error) => (error ? reject(error) : resolve()) });
    });
  return { starts, fsync };
};

/** What a promise ended with, observed from now on (so a rejection is never left unhandled). */
const outcome = (p: Promise<unknown>): Promise<string> => p.then(() => "ok", (e: Error) => e.message);

const settle = () => new Promise((resolve) => setImmediate(resolve));

test("a change made before a running fsync started is covered by it; one made after waits for the next, which all later changes share", async () => {
  const c = controlled();
  const syncs = makeFolderSyncs(c.fsync);
  const first = syncs.stamp();
  const a = syncs.sync("/p", first);
  await settle();
  assert.is(c.starts.length, 1);
  // Made before the running fsync started: shared.
  let bDone = false;
  const b = syncs.sync("/p", first).then(() => (bDone = true));
  // Made after it started: must wait for another, which the later changes share.
  const second = syncs.stamp();
  let cDone = false;
  const cc = syncs.sync("/p", second).then(() => (cDone = true));
  const third = syncs.stamp();
  let dDone = false;
  const d = syncs.sync("/p", third).then(() => (dDone = true));
  await settle();
  assert.is(c.starts.length, 1, "the second fsync waits for the running one to end");
  c.starts[0]!.end();
  await a;
  await b;
  assert.ok(bDone);
  await settle();
  assert.is(c.starts.length, 2, "one more fsync for the two changes made after the first started");
  assert.not.ok(cDone, "not durable before an fsync that started after the change has ended");
  assert.not.ok(dDone);
  c.starts[1]!.end();
  await Promise.all([cc, d]);
  assert.is(syncs.started(), 2);
});

test("a change already made durable by an fsync that started after it and ended needs no other", async () => {
  const c = controlled();
  const syncs = makeFolderSyncs(c.fsync);
  const s = syncs.stamp();
  const a = syncs.sync("/p", s);
  await settle();
  c.starts[0]!.end();
  await a;
  await syncs.sync("/p", s);
  assert.is(c.starts.length, 1);
  // A change after it still needs its own.
  const later = syncs.sync("/p", syncs.stamp());
  await settle();
  assert.is(c.starts.length, 2);
  c.starts[1]!.end();
  await later;
});

test("folders are independent: an fsync of one folder covers nothing in another", async () => {
  const c = controlled();
  const syncs = makeFolderSyncs(c.fsync);
  const s = syncs.stamp();
  const a = syncs.sync("/p", s);
  const b = syncs.sync("/q", s);
  await settle();
  assert.equal(
    c.starts.map((x) => x.dir),
    ["/p", "/q"],
  );
  for (const x of c.starts) x.end();
  await Promise.all([a, b]);
});

test("a failed fsync fails every change it covered; the next change starts a new one, which succeeds", async () => {
  const c = controlled();
  const syncs = makeFolderSyncs(c.fsync);
  const s = syncs.stamp();
  const a = outcome(syncs.sync("/p", s));
  await settle();
  const b = outcome(syncs.sync("/p", s));
  c.starts[0]!.end(new Error("EIO"));
  assert.is(await a, "EIO");
  assert.is(await b, "EIO");
  const later = syncs.sync("/p", syncs.stamp());
  await settle();
  assert.is(c.starts.length, 2);
  c.starts[1]!.end();
  await later;
});

test("a change made after a failed fsync started, while it ran, gets its own fsync after it (the failure is not shared)", async () => {
  const c = controlled();
  const syncs = makeFolderSyncs(c.fsync);
  const a = outcome(syncs.sync("/p", syncs.stamp()));
  await settle();
  const b = outcome(syncs.sync("/p", syncs.stamp()));
  c.starts[0]!.end(new Error("EIO"));
  assert.is(await a, "EIO");
  await settle();
  assert.is(c.starts.length, 2);
  c.starts[1]!.end();
  assert.is(await b, "ok");
});

test("on a real file system: 64 task folders written at once under one parent take far fewer fsyncs of the parent than 64", async () => {
  const root = mkdtempSync(join(tmpdir(), "omnibatch-foldersyncs-"));
  try {
    const outputs = join(root, "out");
    mkdirSync(join(outputs, "job"), { recursive: true });
    const tasks = 64;
    // The parent's fsyncs, counted around the real folder fsync.
    const parent = join(outputs, "job");
    let parentSyncs = 0;
    const counted = makeFolderSyncs((dir) => {
      if (dir === parent) parentSyncs++;
      return fsyncDir(dir);
    });
    const sink = folderSink(outputs, counted);
    const written = await Promise.all(
      Array.from({ length: tasks }, (_, i) =>
        sink.write(`job/t${i}/out.png`, { body: Readable.from([Buffer.from(`image ${i}`)]), type: "image", cap: 1024 }, new AbortController().signal),
      ),
    );
    assert.is(written.length, tasks);
    assert.ok(parentSyncs >= 1, "the parent folder was fsynced");
    assert.ok(parentSyncs < tasks / 2, `parent fsyncs: ${parentSyncs} for ${tasks} folders made`);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

/** A sink whose folder fsyncs of `slow` end only when the test says; the others at once. Each fsync's folder is recorded. */
const sinkWithSlowFolder = (outputs: string, slow: string) => {
  const synced: string[] = [];
  const held: { end: (error?: Error) => void }[] = [];
  const sink = folderSink(
    outputs,
    makeFolderSyncs((dir) => {
      synced.push(dir);
      if (dir !== slow) return fsyncDir(dir);
      return new Promise<void>((resolve, reject) => held.push({ end: (error) => (error ? reject(error) : resolve()) }));
    }),
  );
  const write = (rel: string) => sink.write(rel, { body: Readable.from([Buffer.from(rel)]), type: "image", cap: 1024 }, new AbortController().signal);
  return { synced, held, write };
};

test("a file in a folder another write made is not reported written before that folder's entry in its parent is durable", async () => {
  const root = mkdtempSync(join(tmpdir(), "omnibatch-foldersyncs-"));
  try {
    const outputs = join(root, "out");
    mkdirSync(outputs);
    const { held, write } = sinkWithSlowFolder(outputs, outputs);
    // t1's write makes job/ and job/t1; t2's finds job/ made: both need job/'s entry in the outputs folder.
    const first = outcome(write("job/t1/a.png"));
    const second = outcome(write("job/t2/a.png"));
    for (let i = 0; i < 50 && held.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    assert.is(held.length, 1, "one fsync of the outputs folder, held");
    let ended = 0;
    void first.then(() => ended++);
    void second.then(() => ended++);
    await new Promise((r) => setTimeout(r, 50));
    assert.is(ended, 0, "no write returned while job/'s entry was not durable");
    held[0]!.end();
    assert.equal([await first, await second], ["ok", "ok"]);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test("a write retried after the fsync of a parent failed fsyncs that parent again", async () => {
  const root = mkdtempSync(join(tmpdir(), "omnibatch-foldersyncs-"));
  try {
    const outputs = join(root, "out");
    mkdirSync(outputs);
    const { synced, held, write } = sinkWithSlowFolder(outputs, outputs);
    const first = outcome(write("job/t1/a.png"));
    for (let i = 0; i < 50 && held.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    held[0]!.end(new Error("EIO: the disk said no"));
    assert.is(await first, "EIO: the disk said no");
    const before = synced.filter((d) => d === outputs).length;
    const retry = outcome(write("job/t1/a.png"));
    for (let i = 0; i < 50 && held.length < 2; i++) await new Promise((r) => setTimeout(r, 10));
    assert.is(synced.filter((d) => d === outputs).length, before + 1, "the outputs folder fsynced again for job/'s entry");
    held[1]!.end();
    assert.is(await retry, "ok");
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test.run();
