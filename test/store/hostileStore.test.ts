// The store client and sink against a small S3 look-alike written here, misbehaving in
// the ways s3rver cannot: 5xx answers, a stalled answer, an upload it truncates, a wrong
// checksum, a refusal, and `If-None-Match: *` honoured (s3rver ignores it). Nothing of a
// failed write counts as a result, and nothing is overwritten.

import { createHash } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Readable } from "node:stream";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { StoreError } from "../../src/store/ObjectStore.js";
import { openS3Store } from "../../src/store/S3Store.js";
import { storeSink } from "../../src/outputs/StoreSink.js";
import { parseStoreUrl, type StoreLocation } from "../../src/fs/StoreUrl.js";

type Mode = "ok" | "5xx-twice" | "stall-put" | "truncate" | "wrong-etag" | "refuse" | "hide-on-head";

interface Hostile {
  url: string;
  mode: Mode;
  objects: Map<string, Buffer>;
  seen: { method: string; url: string; ifNoneMatch?: string }[];
  server: Server;
}

const md5 = (b: Buffer) => createHash("md5").update(b).digest("hex");
const secret = "hostile-secret-key-4242";

const startHostile = async (): Promise<Hostile> => {
  const h: Hostile = { url: "", mode: "ok", objects: new Map(), seen: [], server: undefined as never };
  let failures = 0;
  const body = (req: IncomingMessage) =>
    new Promise<Buffer>((resolve, reject) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => resolve(Buffer.concat(chunks)));
      req.on("error", reject);
    });
  const xmlError = (res: ServerResponse, status: number, code: string) => {
    res.writeHead(status, { "content-type": "application/xml" });
    res.end(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>${code}</Code><Message>${code}</Message></Error>`);
  };
  h.server = createServer(async (req, res) => {
    const url = new URL(req.url ?? "/", "http://x");
    const ifNoneMatch = req.headers["if-none-match"] as string | undefined;
    h.seen.push({ method: req.method ?? "", url: req.url ?? "", ...(ifNoneMatch ? { ifNoneMatch } : {}) });
    const [, , ...rest] = url.pathname.split("/");
    const key = decodeURIComponent(rest.join("/"));
    if (h.mode === "refuse") return xmlError(res, 403, "SignatureDoesNotMatch");
    if (h.mode === "5xx-twice" && failures < 2) {
      failures++;
      await body(req);
      return xmlError(res, 503, "SlowDown");
    }
    if (req.method === "GET" && url.searchParams.get("list-type") === "2") {
      const items = [...h.objects].map(([k, v]) => `<Contents><Key>${k}</Key><Size>${v.length}</Size><ETag>"${md5(v)}"</ETag></Contents>`).join("");
      res.writeHead(200, { "content-type": "application/xml" });
      return res.end(`<?xml version="1.0" encoding="UTF-8"?><ListBucketResult><IsTruncated>false</IsTruncated>${items}</ListBucketResult>`);
    }
    if (req.method === "HEAD") {
      const o = h.objects.get(key);
      if (!o || h.mode === "hide-on-head") {
        res.writeHead(404);
        return res.end();
      }
      res.writeHead(200, { "content-length": String(o.length), etag: `"${md5(o)}"` });
      return res.end();
    }
    if (req.method === "PUT") {
      if (h.mode === "stall-put") return; // reads nothing, answers nothing
      const data = await body(req);
      if (ifNoneMatch === "*" && h.objects.has(key)) return xmlError(res, 412, "PreconditionFailed");
      const stored = h.mode === "truncate" ? data.subarray(0, Math.floor(data.length / 2)) : data;
      h.objects.set(key, stored);
      res.writeHead(200, { etag: `"${h.mode === "wrong-etag" ? "0".repeat(32) : md5(stored)}"` });
      return res.end();
    }
    if (req.method === "GET") {
      const o = h.objects.get(key);
      if (!o) return xmlError(res, 404, "NoSuchKey");
      res.writeHead(200, { "content-length": String(o.length), etag: `"${md5(o)}"` });
      return res.end(o);
    }
    if (req.method === "DELETE") {
      h.objects.delete(key);
      res.writeHead(204);
      return res.end();
    }
    xmlError(res, 400, "NotImplemented");
  });
  await new Promise<void>((resolve) => h.server.listen(0, "127.0.0.1", resolve));
  h.url = `http://127.0.0.1:${(h.server.address() as AddressInfo).port}`;
  return h;
};

const test = suite<{ h: Hostile }>("hostile store", { h: undefined as never });
test.before(async (ctx) => {
  ctx.h = await startHostile();
});
test.after(async (ctx) => {
  ctx.h.server.closeAllConnections();
  await new Promise((resolve) => ctx.h.server.close(resolve));
});
test.before.each((ctx) => {
  ctx.h.mode = "ok";
  ctx.h.objects.clear();
  ctx.h.seen.length = 0;
});

const location = parseStoreUrl("s3://bucket/p") as StoreLocation;
const env = (h: Hostile) => ({ AWS_ENDPOINT_URL_S3: h.url, AWS_ACCESS_KEY_ID: "AKHOSTILE", AWS_SECRET_ACCESS_KEY: secret, AWS_REGION: "us-east-1" });
const open = (h: Hostile, extra: { idleTimeoutMs?: number; maxAttempts?: number } = {}) => openS3Store(location, { env: env(h), idleTimeoutMs: 2000, ...extra });
const signal = new AbortController().signal;
const source = (data: Buffer) => ({ body: Readable.from([data]), type: "image", cap: 1e9, contentLength: data.length });

test("two 503 answers are retried and the result lands once", async ({ h }) => {
  h.mode = "5xx-twice";
  const sink = storeSink(await open(h));
  const data = Buffer.from("result bytes");
  const written = await sink.write("j/t/image-1.png", source(data), signal);
  assert.is(written.size, data.length);
  assert.equal(h.objects.get("p/j/t/image-1.png"), data);
  await sink.close();
});

test("a stalled answer fails the attempt within the idle limit, and nothing counts as a result", async ({ h }) => {
  h.mode = "stall-put";
  const sink = storeSink(await open(h, { idleTimeoutMs: 300, maxAttempts: 1 }));
  const started = Date.now();
  await sink.write("j/t/image-1.png", source(Buffer.from("x")), signal).then(
    () => assert.unreachable("a stalled store cannot succeed"),
    (e: Error) => assert.instance(e, StoreError),
  );
  assert.ok(Date.now() - started < 10_000, `gave up in ${Date.now() - started} ms`);
  assert.is(h.objects.size, 0);
  await sink.close();
});

test("an upload the store truncates, or answers with a wrong checksum, is removed and fails the attempt", async ({ h }) => {
  for (const mode of ["truncate", "wrong-etag"] as const) {
    h.mode = mode;
    const sink = storeSink(await open(h));
    await sink.write("j/t/image-1.png", source(Buffer.from("0123456789abcdef")), signal).then(
      () => assert.unreachable(`${mode}: must fail`),
      (e: Error & { fatal?: boolean }) => {
        assert.match(e.message, /checksum of the upload does not match/);
        assert.is(e.fatal, false, "worth another attempt");
      },
    );
    assert.is(h.objects.size, 0, `${mode}: the bad object was removed`);
    assert.ok(h.seen.some((r) => r.method === "DELETE"));
    await sink.close();
  }
});

test("If-None-Match: * is sent, and a store honouring it keeps a concurrent writer's object", async ({ h }) => {
  h.objects.set("p/j/t/image-1.png", Buffer.from("the other writer's"));
  h.mode = "hide-on-head"; // the HEAD misses it, as if it appeared between the check and the write
  const sink = storeSink(await open(h));
  await sink.write("j/t/image-1.png", source(Buffer.from("mine")), signal).then(
    () => assert.unreachable("must not overwrite"),
    (e: Error) => assert.match(e.message, /appeared in the store during the upload/),
  );
  assert.ok(h.seen.some((r) => r.method === "PUT" && r.ifNoneMatch === "*"));
  assert.equal(h.objects.get("p/j/t/image-1.png")?.toString(), "the other writer's");
  await sink.close();
});

test("a refusal (403) says what to check, is not retried, and never shows the secret", async ({ h }) => {
  h.mode = "refuse";
  const store = await open(h);
  try {
    await store.list();
    assert.unreachable("must refuse");
  } catch (error) {
    assert.instance(error, StoreError);
    assert.is((error as StoreError).kind, "refused");
    assert.match((error as Error).message, /SignatureDoesNotMatch .*check the store credentials/);
    assert.not.ok((error as Error).message.includes(secret));
  }
  assert.is(h.seen.length, 1, "no retry of a refusal");
  store.close();
});

test.run();
