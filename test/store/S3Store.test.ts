// The object store against a real S3-compatible server (s3rver on 127.0.0.1) with the
// client the product uses: listing pages of 1,000 keys, streaming puts (in parts when
// large), sha256 recorded from the bytes sent, no silent overwrite, gets that stream.

import { createHash, randomBytes } from "node:crypto";
import { Readable } from "node:stream";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { openS3Store } from "../../src/store/S3Store.js";
import { storeSink } from "../../src/outputs/StoreSink.js";
import { parseStoreUrl, type StoreLocation } from "../../src/fs/StoreUrl.js";
import { listRequests, startS3rver, type S3rverHandle } from "./s3rverServer.js";

const test = suite<{ s3: S3rverHandle }>("s3 store", { s3: undefined as unknown as S3rverHandle });
test.before(async (ctx) => {
  ctx.s3 = await startS3rver();
});
test.after(async (ctx) => {
  await ctx.s3.close();
});

const at = (s3: S3rverHandle, prefix: string) => parseStoreUrl(`s3://${s3.bucket}/${prefix}`) as StoreLocation;
const signal = new AbortController().signal;
const sha = (b: Buffer) => createHash("sha256").update(b).digest("hex");
const source = (data: Buffer) => ({ body: Readable.from([data]), type: "image", cap: 1e9, contentLength: data.length });

test("a result streamed into the store is recorded with the sha256 of its bytes and the store's ETag (its MD5), and a get gives them back; it is held only with its size and ETag", async ({ s3 }) => {
  const store = await openS3Store(at(s3, "one"), { env: s3.env });
  const sink = storeSink(store);
  const data = randomBytes(70_000);
  const written = await sink.write("job/a/image-1.png", { body: Readable.from([data.subarray(0, 1000), data.subarray(1000)]), type: "image", cap: 1e9, contentLength: data.length }, signal);
  assert.equal(written, { size: data.length, sha256: sha(data), etag: createHash("md5").update(data).digest("hex") });
  const got = await store.get("job/a/image-1.png");
  const chunks: Buffer[] = [];
  for await (const c of got!.body) chunks.push(c as Buffer);
  assert.equal(sha(Buffer.concat(chunks)), sha(data));
  assert.ok(await sink.holds([{ type: "image", index: 0, variant: "main", path: "job/a/image-1.png", size: data.length, sha256: sha(data) }]));
  assert.not.ok(await sink.holds([{ type: "image", index: 0, variant: "main", path: "job/a/image-1.png", size: data.length + 1, sha256: sha(data) }]));
  const fingerprint = written.etag!.slice(0, 8);
  assert.ok(await sink.holds([{ type: "image", index: 0, variant: "main", path: "job/a/image-1.png", size: data.length, sha256: sha(data), etag: fingerprint }]));
  // The right size and another ETag: not this result (it is fetched again while the service has it).
  const other = fingerprint === "00000000" ? "11111111" : "00000000";
  assert.not.ok(await sink.holds([{ type: "image", index: 0, variant: "main", path: "job/a/image-1.png", size: data.length, sha256: sha(data), etag: other }]));
  await sink.close();
});

test("a large video goes up in parts, never whole, and its composite checksum is verified", async ({ s3 }) => {
  const store = await openS3Store(at(s3, "big"), { env: s3.env, partSize: 5 * 1024 * 1024 });
  const sink = storeSink(store, { partSize: 5 * 1024 * 1024 });
  const data = randomBytes(12 * 1024 * 1024 + 17);
  const chunks = Array.from({ length: Math.ceil(data.length / 65536) }, (_, i) => data.subarray(i * 65536, (i + 1) * 65536));
  const before = s3.seen.length;
  const written = await sink.write("clips/x/video-1.mp4", { body: Readable.from(chunks), type: "video", cap: 1e9, contentLength: data.length }, signal);
  assert.equal(written.sha256, sha(data));
  const parts = s3.seen.slice(before).filter((r) => r.method === "PUT" && /partNumber=/.test(r.url)).length;
  assert.equal(parts, 3, "three parts of 5 MiB, 5 MiB and the rest");
  assert.equal((await store.head("clips/x/video-1.mp4"))?.size, data.length);
  await sink.close();
});

test("an object with other content is never overwritten; the same content is kept without a second write", async ({ s3 }) => {
  const store = await openS3Store(at(s3, "clash"), { env: s3.env });
  const sink = storeSink(store);
  const first = Buffer.from("first result");
  await sink.write("j/t/image-1.png", { body: Readable.from([first]), type: "image", cap: 1e9 }, signal);
  const puts = store.counts.put;
  // The same bytes again (a run killed after the upload, before the lockfile said so): kept.
  const again = await sink.write("j/t/image-1.png", { body: Readable.from([first]), type: "image", cap: 1e9 }, signal);
  assert.equal(again.sha256, sha(first));
  assert.equal(store.counts.put, puts, "nothing written");
  // Other bytes at the same key: refused, loudly, and the object is unchanged.
  const other = Buffer.from("another result!");
  try {
    await sink.write("j/t/image-1.png", { body: Readable.from([other]), type: "image", cap: 1e9 }, signal);
    assert.unreachable("must refuse");
  } catch (error) {
    assert.match((error as Error).message, /already holds other content .* not overwritten/);
    assert.equal((error as { fatal?: boolean }).fatal, true);
  }
  const got = await store.get("j/t/image-1.png");
  const chunks: Buffer[] = [];
  for await (const c of got!.body) chunks.push(c as Buffer);
  assert.equal(Buffer.concat(chunks).toString(), "first result");
  // ...unless the lockfile recorded exactly the new bytes for it: then it is a restore.
  const restored = await sink.write("j/t/image-1.png", { body: Readable.from([other]), type: "image", cap: 1e9, recorded: { sha256: sha(other), size: other.length } }, signal);
  assert.equal(restored.sha256, sha(other));
  assert.equal((await store.head("j/t/image-1.png"))?.size, other.length);
  await sink.close();
});

test("an object that is a cut-short copy of the result (a non-atomic store after a kill) is completed; any other is not", async ({ s3 }) => {
  const store = await openS3Store(at(s3, "cut"), { env: s3.env });
  const sink = storeSink(store);
  const full = Buffer.from("the whole result, as the service sends it");
  await store.put("j/t/image-1.png", Readable.from([full.subarray(0, 9)]));
  await store.put("j/t/image-2.png", Readable.from([Buffer.alloc(0)]));
  await store.put("j/t/image-3.png", Readable.from([Buffer.from("not a prefix")]));
  for (const name of ["image-1.png", "image-2.png"]) {
    const w = await sink.write(`j/t/${name}`, source(full), signal);
    assert.is(w.sha256, sha(full));
    assert.is((await store.head(`j/t/${name}`))?.size, full.length, name);
  }
  await sink.write("j/t/image-3.png", source(full), signal).then(
    () => assert.unreachable("other content must stay"),
    (e: Error) => assert.match(e.message, /already holds other content/),
  );
  assert.is((await store.head("j/t/image-3.png"))?.size, "not a prefix".length);
  await sink.close();
});

test("a truncated body and an oversized one leave no object behind", async ({ s3 }) => {
  const store = await openS3Store(at(s3, "short"), { env: s3.env });
  const sink = storeSink(store);
  await sink.write("j/t/image-1.png", { body: Readable.from([Buffer.alloc(10)]), type: "image", cap: 1e9, contentLength: 20 }, signal).then(
    () => assert.unreachable("truncated must fail"),
    (e: Error) => assert.match(e.message, /truncated download: 10 of 20 bytes/),
  );
  await sink.write("j/t/image-2.png", { body: Readable.from([Buffer.alloc(10), Buffer.alloc(10)]), type: "image", cap: 15 }, signal).then(
    () => assert.unreachable("oversized must fail"),
    (e: Error) => assert.match(e.message, /limit of 15 bytes/),
  );
  assert.equal(await store.head("j/t/image-1.png"), undefined);
  assert.equal(await store.head("j/t/image-2.png"), undefined);
  await sink.close();
});

test("listing 2,001 keys takes 3 requests of 1,000 keys, each with its size", async ({ s3 }) => {
  const location = at(s3, "many");
  const store = await openS3Store(location, { env: s3.env });
  const limit = 16;
  let next = 0;
  await Promise.all(
    Array.from({ length: limit }, async () => {
      while (next < 2001) {
        const i = next++;
        await store.put(`t${i}/image-1.png`, Readable.from([Buffer.from(`x${i}`)]));
      }
    }),
  );
  const before = listRequests(s3);
  const listed = await store.list();
  assert.equal(listRequests(s3) - before, 3);
  assert.equal(listed.size, 2001);
  assert.equal(listed.get("t2000/image-1.png")?.size, 5);
  store.close();
});

test.run();
