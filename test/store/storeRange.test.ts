// Ranged gets from a real S3-compatible server (s3rver on 127.0.0.1) with the client the
// product uses (the review page seeks a video through them): exactly the bytes asked
// for, the part's length and the object's whole size from Content-Range; a range past
// the end, and a key that is not there, are "no object"; and a read-only opener that
// names the store in one line when it cannot list it.

import { randomBytes } from "node:crypto";
import { Readable } from "node:stream";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { openS3Store } from "../../src/store/S3Store.js";
import { openStoreReader } from "../../src/store/openStoreReader.js";
import { parseStoreUrl, type StoreLocation } from "../../src/fs/StoreUrl.js";
import { startS3rver, type S3rverHandle } from "./s3rverServer.js";

const test = suite<{ s3: S3rverHandle }>("ranged store gets", { s3: undefined as unknown as S3rverHandle });
test.before(async (ctx) => {
  ctx.s3 = await startS3rver();
});
test.after(async (ctx) => {
  await ctx.s3.close();
});

const read = async (body: Readable): Promise<Buffer> => {
  const chunks: Buffer[] = [];
  for await (const c of body) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
};

test("a range gives exactly its bytes, its length and the object's size; past the end or no key: nothing", async ({ s3 }) => {
  const store = await openS3Store(parseStoreUrl(`s3://${s3.bucket}/ranges`) as StoreLocation, { env: s3.env });
  try {
    const data = randomBytes(50_000);
    await store.put("clips/a/video-1.mp4", Readable.from([data]));
    const part = (await store.get("clips/a/video-1.mp4", undefined, { start: 1000, end: 1999 }))!;
    assert.is(part.size, 1000);
    assert.is(part.total, 50_000);
    assert.ok((await read(part.body)).equals(data.subarray(1000, 2000)));
    const last = (await store.get("clips/a/video-1.mp4", undefined, { start: 49_990, end: 49_999 }))!;
    assert.ok((await read(last.body)).equals(data.subarray(49_990)));
    const whole = (await store.get("clips/a/video-1.mp4"))!;
    assert.is(whole.size, 50_000);
    assert.is(whole.total, undefined);
    assert.ok((await read(whole.body)).equals(data));
    assert.is(await store.get("clips/a/video-1.mp4", undefined, { start: 60_000, end: 60_100 }), undefined);
    assert.is(await store.get("clips/a/none.mp4", undefined, { start: 0, end: 10 }), undefined);
  } finally {
    store.close();
  }
});

test("the read-only opener lists once; an unreachable store is one line naming it", async ({ s3 }) => {
  const store = await openS3Store(parseStoreUrl(`s3://${s3.bucket}/reader`) as StoreLocation, { env: s3.env });
  await store.put("keyframes/a/image-1.png", Readable.from([Buffer.from("png")]));
  store.close();
  const listed = s3.seen.length;
  const reader = await openStoreReader(`s3://${s3.bucket}/reader`, { env: s3.env });
  try {
    assert.equal([...reader.listing.keys()], ["keyframes/a/image-1.png"]);
    assert.is(s3.seen.length - listed, 1, "one listing request");
  } finally {
    reader.store.close();
  }
  const error = await openStoreReader(`s3://${s3.bucket}/reader`, { env: { ...s3.env, AWS_ENDPOINT_URL_S3: "http://127.0.0.1:9" }, maxAttempts: 1 }).then(
    () => undefined,
    (e: Error & { _tag?: string }) => e,
  );
  assert.is(error?._tag, "StoreUnavailable");
  assert.match(error!.message, /^cannot read the outputs store s3:\/\/results\/reader: /);
  assert.not.match(error!.message, /\n/);
  assert.not.ok(error!.message.includes(s3.secretAccessKey));
  const bad = await openStoreReader("s3://No_Such/x", { env: s3.env }).then(() => undefined, (e: Error) => e);
  assert.match(bad!.message, /^outputs: .*bucket name/);
});

test.run();
