// The client's own HTTP transport (node:http, src/api/httpTransport.ts) against small
// hostile loopback servers: answers that stall after their headers, end early, grow past
// the size limit, come compressed unasked or with a byte order mark, and downloads cut
// short or redirected in a loop. Each must end as the right ApiError (or a failing
// stream), within its time limit, and leave the client usable. Three found by a review:
// a download compressed unasked (stored as the compressed bytes, it passed its own size
// check), a redirect whose body never ends (it kept a socket of the pool for good), an
// answer in millions of one-byte chunks (a Buffer object kept per chunk exhausted memory).

import { once } from "node:events";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import http from "node:http";
import https from "node:https";
import net, { type AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TLSSocket } from "node:tls";
import { gzipSync } from "node:zlib";
import { Effect, Either, Redacted } from "effect";
import { execa } from "execa";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import type { ApiError } from "../../src/api/ApiError.js";
import { classify } from "../../src/api/classify.js";
import { OmniClient, type OmniClientConfig, type OmniClientService } from "../../src/api/OmniClient.js";
import { destroyAgents, makeAgents, readBody, RequestWithheld, sendRequest } from "../../src/api/httpTransport.js";
import { envelope, startCannedServer, type CannedServer } from "./cannedServer.js";

const apiKey = "sk-transport-Hj4Kl5Mn6Op7";
const test = suite<{ server: CannedServer }>("http transport", { server: undefined as unknown as CannedServer });

test.before(async (ctx) => {
  ctx.server = await startCannedServer();
});
test.after(async (ctx) => {
  await ctx.server.close();
});
test.before.each((ctx) => {
  ctx.server.seen.length = 0;
});

const run = <A>(baseUrl: string, use: (client: OmniClientService) => Effect.Effect<A, ApiError>, config: Partial<OmniClientConfig> = {}) =>
  Effect.runPromise(Effect.scoped(Effect.flatMap(OmniClient.make({ baseUrl, apiKey: Redacted.make(apiKey), timeoutMs: 5_000, ...config }), use)).pipe(Effect.either));

const failure = <A>(result: Either.Either<A, ApiError>): ApiError => {
  if (Either.isRight(result)) throw new Error(`expected a failure, got ${JSON.stringify(result.right)}`);
  return result.left;
};

const imageTask = { task_id: "t1", task_status: "succeed", task_status_msg: "", task_info: {}, watermark_info: { enabled: false }, created_at: 1, updated_at: 2 };
const ok = (data: unknown) => ({ code: 0, message: "", request_id: "r-1", data });

test("an answer that stalls after its headers ends as RequestTimeout within timeoutMs, and the next call works", async ({ server }) => {
  server.handle((_req, res) => {
    res.writeHead(200, { "content-type": "application/json", "content-length": "500" });
    res.write('{"code":0,');
  });
  const started = Date.now();
  const error = failure(await run(server.url, (c) => c.getImage("t1"), { timeoutMs: 200 }));
  assert.is(error._tag, "RequestTimeout");
  assert.ok(Date.now() - started < 2_000, `took ${Date.now() - started} ms`);
  assert.is(classify(error), "retry");
  server.handle((_req, res) => envelope(res, 200, ok(imageTask)));
  const again = await run(server.url, (c) => c.getImage("t1"));
  assert.is(Either.getOrThrow(again).task_id, "t1");
});

test("an answer cut short (connection closed before Content-Length was reached) is a TransportError, never a parsed answer", async ({ server }) => {
  server.handle((_req, res) => {
    res.writeHead(200, { "content-type": "application/json", "content-length": "400" });
    res.write(JSON.stringify(ok(imageTask)).slice(0, 40));
    setTimeout(() => res.socket?.destroy(), 20);
  });
  const error = failure(await run(server.url, (c) => c.getImage("t1")));
  assert.is(error._tag, "TransportError");
  assert.is(error._tag === "TransportError" && error.phase, "sent");
  const create = failure(await run(server.url, (c) => c.createImage({ prompt: "x", external_task_id: "e-1" })));
  assert.is(classify(create), "unknown-outcome");
});

test("an answer announcing more than 32 MB is refused without reading it; one growing past 32 MB is cut off", async ({ server }) => {
  server.handle((_req, res) => {
    res.writeHead(200, { "content-type": "application/json", "content-length": String(64 * 1024 ** 2) });
    res.write("{");
  });
  const announced = failure(await run(server.url, (c) => c.getImage("t1")));
  assert.is(announced._tag, "TransportError");
  assert.match(announced.message, "larger than 33554432 bytes");
  // No Content-Length (chunked): 40 MB of spaces, sent as fast as the socket takes them.
  let sent = 0;
  server.handle((_req, res) => {
    res.writeHead(200, { "content-type": "application/json" });
    const piece = Buffer.alloc(1024 ** 2, 0x20);
    const more = () => {
      while (sent < 40 * 1024 ** 2) {
        sent += piece.length;
        if (!res.write(piece)) return void res.once("drain", more);
      }
      res.end("{}");
    };
    res.socket?.on("error", () => undefined);
    res.on("error", () => undefined);
    more();
  });
  const grown = failure(await run(server.url, (c) => c.getImage("t1"), { timeoutMs: 20_000 }));
  assert.is(grown._tag, "TransportError");
  assert.match(grown.message, "larger than 33554432 bytes");
  assert.ok(sent < 40 * 1024 ** 2 + 1, "the server's loop is bounded");
});

test("an answer compressed although nothing asked for it is decoded; one with a byte order mark is read", async ({ server }) => {
  server.handle((req, res) => {
    assert.is(req.headers["accept-encoding"], undefined, "the client asks for no compression");
    const body = gzipSync(JSON.stringify(ok(imageTask)));
    res.writeHead(200, { "content-type": "application/json", "content-encoding": "gzip", "content-length": String(body.length) });
    res.end(body);
  });
  assert.is(Either.getOrThrow(await run(server.url, (c) => c.getImage("t1"))).task_id, "t1");
  server.handle((_req, res) => {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(`\ufeff${JSON.stringify(ok(imageTask))}`);
  });
  assert.is(Either.getOrThrow(await run(server.url, (c) => c.getImage("t1"))).task_id, "t1");
  server.handle((_req, res) => {
    res.writeHead(200, { "content-type": "application/json", "content-encoding": "gzip" });
    res.end("not gzip at all");
  });
  const garbled = failure(await run(server.url, (c) => c.getImage("t1")));
  assert.is(garbled._tag, "TransportError");
  assert.match(garbled.message, "compressed body could not be read");
});

test("a POST body is sent with its Content-Length (not chunked), and bigint element ids exactly", async ({ server }) => {
  server.handle((_req, res) => envelope(res, 200, ok({ task_id: "t9", task_info: {}, task_status: "submitted", created_at: 1, updated_at: 1 })));
  const created = await run(server.url, (c) => c.createImage({ prompt: "é x", element_list: [{ element_id: 829836802793406551n }] }));
  assert.is(Either.getOrThrow(created).task_id, "t9");
  const seen = server.seen[0]!;
  assert.is(seen.headers["transfer-encoding"], undefined);
  assert.is(Number(seen.headers["content-length"]), Buffer.byteLength(seen.body));
  assert.match(seen.body, '"element_id":829836802793406551');
});

test("a download cut short fails its stream; the bytes before the cut are all that came", async ({ server }) => {
  server.handle((_req, res) => {
    res.writeHead(200, { "content-type": "image/png", "content-length": "1000" });
    res.write(Buffer.alloc(300, 1));
    setTimeout(() => res.socket?.destroy(), 20);
  });
  const response = Either.getOrThrow(await run(server.url, (c) => c.download(`${server.url}/_files/1/a.png`)));
  assert.is(response.contentLength, 1000);
  let bytes = 0;
  let failed: unknown;
  try {
    for await (const part of response.body) bytes += (part as Buffer).length;
  } catch (error) {
    failed = error;
  }
  assert.ok(failed !== undefined, "the stream fails");
  assert.is(bytes, 300);
});

test("a download redirected in a loop stops after 5 hops; one whose headers never come is a RequestTimeout", async ({ server }) => {
  server.handle((req, res) => {
    res.writeHead(302, { location: `${req.url}x` });
    res.end();
  });
  const looped = failure(await run(server.url, (c) => c.download(`${server.url}/_files/loop`)));
  assert.is(looped._tag, "TransportError");
  assert.match(looped.message, "more than 5 redirects");
  assert.is(server.seen.length, 6);
  server.handle(() => {
    /* never answers */
  });
  const started = Date.now();
  const hung = failure(await run(server.url, (c) => c.download(`${server.url}/_files/2/b.png`), { timeoutMs: 200 }));
  assert.is(hung._tag, "RequestTimeout");
  assert.ok(Date.now() - started < 2_000);
});

test("an interrupted call destroys its request: the server sees the connection close", async ({ server }) => {
  let closed: Promise<unknown> | undefined;
  server.handle((req, res) => {
    closed = once(res, "close");
    void req;
  });
  const result = await Effect.runPromise(
    Effect.scoped(
      Effect.flatMap(OmniClient.make({ baseUrl: server.url, apiKey: Redacted.make(apiKey), timeoutMs: 5_000 }), (c) =>
        c.getImage("t1").pipe(Effect.timeout("150 millis"), Effect.either),
      ),
    ),
  );
  assert.ok(Either.isLeft(result), "the call was cut off");
  assert.ok(closed !== undefined, "the request reached the server");
  await Promise.race([closed, new Promise((_, reject) => setTimeout(() => reject(new Error("the connection stayed open")), 2_000))]);
});

test("a header Node cannot send (a user agent with a line break) fails the call as a TransportError, not a crash", async ({ server }) => {
  server.handle((_req, res) => envelope(res, 200, ok(imageTask)));
  const error = failure(await run(server.url, (c) => c.getImage("t1"), { userAgent: "omnibatch\r\nX-Injected: 1" }));
  assert.is(error._tag, "TransportError");
  assert.is(server.seen.length, 0);
  const download = failure(await run(server.url, (c) => c.download(`${server.url}/_files/1/a.png`), { userAgent: "bad\nagent" }));
  assert.is(download._tag, "TransportError");
});

test("readBody: a body that closes without an end is an error, not a short body", async () => {
  const server = http.createServer((_req, res) => {
    res.writeHead(200, { "content-length": "100" });
    res.write("abc");
    setTimeout(() => res.socket?.destroy(), 20);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  try {
    const { port } = server.address() as AddressInfo;
    const outcome = await new Promise<{ error: Error | undefined; body: Buffer }>((resolve, reject) => {
      http
        .get(`http://127.0.0.1:${port}/`, (res) => readBody(res, 1_000, (error, body) => resolve({ error, body })))
        .on("error", reject);
    });
    assert.ok(outcome.error !== undefined);
    assert.is(outcome.body.length, 0);
  } finally {
    server.close();
  }
});

test("a download answered gzip although nothing asked for it is refused (a TransportError, retried), never stored as the compressed bytes", async ({ server }) => {
  const original = Buffer.alloc(4_000, 7);
  const packed = gzipSync(original);
  server.handle((_req, res) => {
    res.writeHead(200, { "content-type": "image/png", "content-encoding": "gzip", "content-length": String(packed.length) });
    res.end(packed);
  });
  const error = failure(await run(server.url, (c) => c.download(`${server.url}/_files/1/a.png`)));
  assert.is(error._tag, "TransportError");
  assert.match(error.message, /Content-Encoding "gzip"/);
  assert.is(classify(error), "retry");
  // "identity" is no encoding: read as it came.
  server.handle((_req, res) => {
    res.writeHead(200, { "content-type": "image/png", "content-encoding": "identity", "content-length": String(original.length) });
    res.end(original);
  });
  const response = Either.getOrThrow(await run(server.url, (c) => c.download(`${server.url}/_files/1/a.png`)));
  let bytes = 0;
  for await (const part of response.body) bytes += (part as Buffer).length;
  assert.is(bytes, original.length);
});

test("a redirect whose body never ends does not keep its connection: calls go on working with a pool of one socket", async ({ server }) => {
  const dripping = new Set<http.ServerResponse>();
  server.handle((req, res) => {
    if ((req.url ?? "").includes("/from")) {
      res.writeHead(302, { location: (req.url ?? "").replace("/from", "/to") });
      res.write("x");
      const drip = setInterval(() => res.write("x"), 50);
      dripping.add(res);
      res.once("close", () => {
        clearInterval(drip);
        dripping.delete(res);
      });
      return;
    }
    envelope(res, 200, ok(imageTask));
  });
  try {
    for (let i = 0; i < 3; i++) {
      const answer = await run(`${server.url}/from`, (c) => c.getImage("t1"), { maxSockets: 1, timeoutMs: 2_000 });
      assert.ok(Either.isRight(answer), `call ${i + 1}: ${JSON.stringify(answer)}`);
    }
    const started = Date.now();
    while (dripping.size > 0 && Date.now() - started < 2_000) await new Promise((r) => setTimeout(r, 20));
    assert.is(dripping.size, 0, "every redirect's connection was closed");
  } finally {
    for (const res of dripping) res.destroy();
  }
});

test("readBody: an answer in many one-byte chunks arrives whole, in memory proportional to its bytes", async () => {
  const frames = 600_000;
  const server = net.createServer((socket) => {
    socket.once("data", () => {
      socket.write("HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n");
      const block = Buffer.from("1\r\nx\r\n".repeat(10_000));
      for (let i = 0; i < frames / 10_000; i++) socket.write(block);
      socket.end("0\r\n\r\n");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  try {
    const { port } = server.address() as AddressInfo;
    const before = process.memoryUsage();
    let peakHeap = 0;
    let seen = 0;
    const outcome = await new Promise<{ error: Error | undefined; body: Buffer }>((resolve, reject) => {
      http
        .get(`http://127.0.0.1:${port}/`, (res) => {
          res.on("data", () => {
            if (++seen % 1_000 === 0) peakHeap = Math.max(peakHeap, process.memoryUsage().heapUsed);
          });
          readBody(res, 32 * 1024 * 1024, (error, body) => resolve({ error, body }));
        })
        .on("error", reject);
    });
    assert.is(outcome.error, undefined);
    assert.is(outcome.body.length, frames);
    assert.ok(outcome.body.every((b) => b === 0x78), "every byte as sent");
    // Kept chunk by chunk, every one-byte chunk is a Buffer object of its own that lives
    // until the end (about 100 MB of heap here; a few million chunks exhaust it). Read into
    // one growing buffer, each chunk is garbage at once and young-generation GC takes it.
    const grownMb = (peakHeap - before.heapUsed) / 1048576;
    assert.ok(grownMb < 40, `the heap grew by ${grownMb.toFixed(1)} MB while reading a ${frames}-byte answer`);
  } finally {
    server.close();
  }
});

test("readBody: bodies in chunks of every size come out byte for byte (one chunk as it came, none as empty)", async () => {
  const sizes = [0, 1, 5, 1_000, 70_000, 300_000];
  for (const total of sizes) {
    const bytes = Buffer.from(Array.from({ length: total }, (_, i) => (i * 31 + 7) % 256));
    const server = http.createServer((_req, res) => {
      res.writeHead(200, { "transfer-encoding": "chunked" });
      let at = 0;
      let step = 1;
      const more = () => {
        while (at < total) {
          const next = Math.min(total, at + step);
          res.write(bytes.subarray(at, next));
          at = next;
          step = (step * 7 + 3) % 9_000 + 1;
          if (at % 3 === 0) return setImmediate(more);
        }
        res.end();
      };
      more();
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const outcome = await new Promise<{ error: Error | undefined; body: Buffer }>((resolve, reject) => {
        http.get(`http://127.0.0.1:${port}/`, (res) => readBody(res, 1_000_000, (error, body) => resolve({ error, body }))).on("error", reject);
      });
      assert.is(outcome.error, undefined, `size ${total}`);
      assert.ok(outcome.body.equals(bytes), `size ${total}: the bytes as sent`);
    } finally {
      server.close();
    }
  }
});

test("sendRequest's lastCheck runs once the socket is connected (a new connection, a kept-alive one), before any byte of the request; false withholds it unwritten, with one callback", async () => {
  const seen: string[] = [];
  const server = http.createServer((req, res) => {
    seen.push(req.url ?? "");
    req.resume();
    req.on("end", () => res.end("ok"));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const agents = makeAgents(1);
  interface Checked {
    readonly connected: boolean;
    readonly reused: boolean;
    readonly headersSent: boolean;
    readonly socket: net.Socket;
    readonly written: number;
  }
  const send = (path: string, allow: boolean) =>
    new Promise<{ checked: Checked | undefined; outcome: string; callbacks: () => number }>((resolve) => {
      let checked: Checked | undefined;
      let callbacks = 0;
      const done = (outcome: string) => {
        callbacks++;
        resolve({ checked, outcome, callbacks: () => callbacks });
      };
      const request = sendRequest(
        new URL(path, base),
        {
          method: "POST",
          headers: { "content-type": "application/json", "content-length": 2 },
          body: "{}",
          agents,
          lastCheck: () => {
            const socket = request.socket as net.Socket;
            checked = { connected: !socket.connecting, reused: request.reusedSocket, headersSent: request.headersSent, socket, written: socket.bytesWritten };
            return allow;
          },
        },
        (response) => {
          response.resume();
          response.on("end", () => done(`answered ${response.statusCode}`));
        },
        (error) => done(error instanceof RequestWithheld ? "withheld" : `failed: ${error.message}`),
      );
    });
  try {
    const first = await send("/first", true);
    assert.equal(first.outcome, "answered 200");
    assert.equal({ ...first.checked!, socket: undefined, written: undefined }, { connected: true, reused: false, headersSent: false, socket: undefined, written: undefined });
    const second = await send("/second", true);
    assert.equal(second.outcome, "answered 200");
    assert.equal({ ...second.checked!, socket: undefined, written: undefined }, { connected: true, reused: true, headersSent: false, socket: undefined, written: undefined });
    const withheld = await send("/withheld", false);
    assert.is(withheld.outcome, "withheld");
    assert.ok(withheld.checked!.socket.destroyed, "its socket is destroyed");
    assert.is(withheld.checked!.socket.bytesWritten, withheld.checked!.written, "nothing written after the check");
    // The pool of one goes on with a new connection; the server never saw the withheld one.
    const after = await send("/after", true);
    assert.equal(after.outcome, "answered 200");
    assert.equal(after.checked!.reused, false);
    assert.equal(seen, ["/first", "/second", "/after"]);
    assert.is(withheld.callbacks(), 1, "one callback for the withheld request");
  } finally {
    destroyAgents(agents);
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  }
});

test("over TLS, lastCheck runs once the handshake is done (a new connection, a kept-alive one), before any byte of the request; false withholds it unwritten", async () => {
  const dir = mkdtempSync(join(tmpdir(), "omnibatch-tls-"));
  try {
    const made = await execa("openssl", ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", join(dir, "key.pem"), "-out", join(dir, "cert.pem"), "-days", "1", "-subj", "/CN=127.0.0.1"], { reject: false, timeout: 30_000 });
    if (made.exitCode !== 0) {
      console.log(`  (skipped: no self-signed certificate: openssl ${made.failed ? "is missing" : "failed"})`);
      return;
    }
    const seen: string[] = [];
    const server = https.createServer({ key: readFileSync(join(dir, "key.pem")), cert: readFileSync(join(dir, "cert.pem")) }, (req, res) => {
      seen.push(req.url ?? "");
      req.resume();
      req.on("end", () => res.end("ok"));
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const base = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
    // The transport's agents, but trusting the test's own certificate.
    const agents = { http: new http.Agent(), https: new https.Agent({ keepAlive: true, maxSockets: 1, rejectUnauthorized: false }) };
    const send = (path: string, allow: boolean) =>
      new Promise<{ at: string; outcome: string }>((resolve) => {
        let at = "";
        const request = sendRequest(
          new URL(path, base),
          {
            method: "POST",
            headers: { "content-type": "application/json", "content-length": 2 },
            body: "{}",
            agents,
            lastCheck: () => {
              const socket = request.socket as TLSSocket;
              // getFinished(): the Finished message this side sent to end its handshake (none before).
              at = `connected ${!socket.connecting}, handshake done ${socket.getFinished() !== undefined}, reused ${request.reusedSocket}, headers sent ${request.headersSent}`;
              return allow;
            },
          },
          (response) => {
            response.resume();
            response.on("end", () => resolve({ at, outcome: `answered ${response.statusCode}` }));
          },
          (error) => resolve({ at, outcome: error instanceof RequestWithheld ? "withheld" : `failed: ${error.message}` }),
        );
      });
    try {
      assert.equal(await send("/first", true), { at: "connected true, handshake done true, reused false, headers sent false", outcome: "answered 200" });
      assert.equal(await send("/second", true), { at: "connected true, handshake done true, reused true, headers sent false", outcome: "answered 200" });
      assert.equal(await send("/withheld", false), { at: "connected true, handshake done true, reused true, headers sent false", outcome: "withheld" });
      assert.equal(await send("/after", true), { at: "connected true, handshake done true, reused false, headers sent false", outcome: "answered 200" });
      assert.equal(seen, ["/first", "/second", "/after"]);
    } finally {
      agents.https.destroy();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
