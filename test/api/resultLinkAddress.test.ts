// Result links from a service that is not on this machine may not lead to it or to the
// local network (server-side request forgery: the run would fetch local data and store
// it as a result). The client's download is run against servers over real sockets: the
// "service" listens on this machine's non-loopback address, a "secret" server on
// loopback counts every connection it gets. The address is judged at connect time: by
// the literal, by what a name resolves to (the lookup hook), and on every redirect hop.

import http from "node:http";
import type { AddressInfo } from "node:net";
import { networkInterfaces } from "node:os";
import { Effect, Either, Redacted } from "effect";
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { ApiError } from "../../src/api/ApiError.js";
import { OmniClient } from "../../src/api/OmniClient.js";

const nonLoopback = Object.values(networkInterfaces())
  .flat()
  .find((a) => a !== undefined && a.family === "IPv4" && !a.internal)?.address;

const serve = async (host: string, handler: http.RequestListener) => {
  const server = http.createServer(handler);
  let connections = 0;
  server.on("connection", () => connections++);
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const { port } = server.address() as AddressInfo;
  return { port, connections: () => connections, close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }) };
};

const download = (baseUrl: string, url: string): Promise<Either.Either<string, ApiError>> =>
  Effect.runPromise(
    Effect.scoped(
      Effect.flatMap(OmniClient.make({ baseUrl, apiKey: Redacted.make("sk-links"), timeoutMs: 5_000 }), (c) =>
        Effect.flatMap(c.download(url), (r) =>
          Effect.promise(async () => {
            const chunks: Buffer[] = [];
            for await (const chunk of r.body) chunks.push(chunk as Buffer);
            return Buffer.concat(chunks).toString();
          }),
        ),
      ),
    ).pipe(Effect.either),
  );

if (nonLoopback === undefined) {
  console.log("SKIPPED: this machine has no non-loopback IPv4 address to serve the service on");
} else {
  test(`a service at ${nonLoopback}: links to loopback (literal, name, redirect) are refused before connecting; its own links are fetched`, async () => {
    const secret = await serve("127.0.0.1", (_req, res) => res.end('{"secret":"local data"}'));
    const service = await serve(nonLoopback, (req, res) => {
      if (req.url === "/result.png") return void res.end("PNG");
      res.writeHead(302, { location: `http://127.0.0.1:${secret.port}/stats` }).end();
    });
    const base = `http://${nonLoopback}:${service.port}/v1`;
    try {
      for (const link of [`http://127.0.0.1:${secret.port}/stats`, `http://localhost:${secret.port}/stats`, `http://[::ffff:127.0.0.1]:${secret.port}/stats`, `http://${nonLoopback}:${service.port}/redirect`]) {
        const got = await download(base, link);
        assert.ok(Either.isLeft(got), `${link} was fetched: ${Either.isRight(got) ? got.right : ""}`);
        const error = (got as Either.Left<ApiError, string>).left;
        assert.is(error._tag, "TransportError", link);
        assert.match(error.message, "refusing to fetch a result link that leads to", link);
        assert.match(error.message, "(a loopback address)", link);
        assert.match(error.message, "before the request was sent", link);
      }
      assert.is(secret.connections(), 0, "the loopback server was never connected to");
      assert.equal(await download(base, `http://${nonLoopback}:${service.port}/result.png`), Either.right("PNG"));
    } finally {
      await secret.close();
      await service.close();
    }
  });
}

test("a service on loopback (the emulator): its loopback links are fetched", async () => {
  const local = await serve("127.0.0.1", (_req, res) => res.end("PNG"));
  try {
    assert.equal(await download(`http://127.0.0.1:${local.port}`, `http://localhost:${local.port}/result.png`), Either.right("PNG"));
    assert.equal(await download(`http://localhost:${local.port}`, `http://127.0.0.1:${local.port}/result.png`), Either.right("PNG"));
  } finally {
    await local.close();
  }
});

test.run();
