// Configuration from the environment (OMNIBATCH_API_KEY, OMNIBATCH_BASE_URL), the key
// kept redacted, and a request abandoned when its fiber is interrupted.

import { Effect, Either, Exit, Fiber, Layer, Redacted } from "effect";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { BEIJING_BASE_URL, DEFAULT_BASE_URL, OmniClient } from "../../src/api/OmniClient.js";
import { exitCodeFor } from "../../src/exit/ExitCode.js";
import { envelope, startCannedServer } from "./cannedServer.js";

const test = suite("api client config");

test("configFromEnv reads the key as a Redacted value and the base URL", () => {
  const config = Either.getOrThrow(OmniClient.configFromEnv({ OMNIBATCH_API_KEY: " key-123 ", OMNIBATCH_BASE_URL: "http://127.0.0.1:9" }));
  assert.is(config.baseUrl, "http://127.0.0.1:9");
  assert.ok(Redacted.isRedacted(config.apiKey));
  assert.is(Redacted.value(config.apiKey), "key-123");
  assert.not.match(String(config.apiKey), "key-123");
  assert.not.match(JSON.stringify(config), "key-123");
});

test("overrides win over the environment", () => {
  const config = Either.getOrThrow(
    OmniClient.configFromEnv({ OMNIBATCH_API_KEY: "k", OMNIBATCH_BASE_URL: "http://a.example" }, { baseUrl: "http://b.example", timeoutMs: 5 }),
  );
  assert.is(config.baseUrl, "http://b.example");
  assert.is(config.timeoutMs, 5);
});

test("a missing or empty key is MissingApiKey, which exits 2", () => {
  for (const env of [{}, { OMNIBATCH_API_KEY: "  " }]) {
    const result = OmniClient.configFromEnv({ ...env, OMNIBATCH_BASE_URL: "http://x.example" });
    assert.ok(Either.isLeft(result));
    if (Either.isRight(result)) return;
    assert.is(result.left._tag, "MissingApiKey");
    assert.match(result.left.message, "OMNIBATCH_API_KEY");
    assert.is(exitCodeFor(result.left), 2);
  }
});

test("a malformed base URL is ClientConfigInvalid, which exits 2", () => {
  for (const base of ["not a url", "ftp://x.example"]) {
    const result = OmniClient.configFromEnv({ OMNIBATCH_API_KEY: "k", OMNIBATCH_BASE_URL: base });
    assert.ok(Either.isLeft(result) && result.left._tag === "ClientConfigInvalid", String(base));
    if (Either.isLeft(result)) assert.is(exitCodeFor(result.left), 2);
  }
});

// The resolved configuration only: nothing here connects to the real host.
test("no address given: the real service's global host; OMNIBATCH_BASE_URL or --base-url (override) for Beijing or a gateway", () => {
  const resolved = (env: Record<string, string>, overrides = {}) => {
    const r = OmniClient.configFromEnv({ OMNIBATCH_API_KEY: "k", ...env }, overrides);
    if (Either.isLeft(r)) throw new Error(r.left.message);
    return r.right;
  };
  assert.is(DEFAULT_BASE_URL, "https://api-singapore.klingai.com");
  assert.is(BEIJING_BASE_URL, "https://api-beijing.klingai.com");
  assert.is(resolved({}).baseUrl, DEFAULT_BASE_URL);
  assert.is(resolved({ OMNIBATCH_BASE_URL: "  " }).baseUrl, DEFAULT_BASE_URL, "an empty variable is no address");
  assert.is(resolved({ OMNIBATCH_BASE_URL: BEIJING_BASE_URL }).baseUrl, BEIJING_BASE_URL);
  assert.is(resolved({ OMNIBATCH_BASE_URL: BEIJING_BASE_URL }, { baseUrl: "https://gw.example/kling" }).baseUrl, "https://gw.example/kling", "the flag wins");
});

test("the service's name: kling, else OMNIBATCH_SERVICE, else the flag (override); a name that cannot be one exits 2", () => {
  const nameOf = (env: Record<string, string>, overrides = {}) => {
    const r = OmniClient.configFromEnv({ OMNIBATCH_API_KEY: "k", ...env }, overrides);
    return Either.isLeft(r) ? r.left : r.right.service;
  };
  assert.is(nameOf({}), "kling");
  assert.is(nameOf({ OMNIBATCH_SERVICE: "acme" }), "acme");
  assert.is(nameOf({ OMNIBATCH_SERVICE: "acme" }, { service: "svc" }), "svc");
  for (const bad of ["a/b", "x y", "-x"]) {
    const e = nameOf({ OMNIBATCH_SERVICE: bad });
    assert.ok(typeof e === "object" && e._tag === "ClientConfigInvalid", bad);
    if (typeof e === "object") assert.is(exitCodeFor(e), 2);
  }
});

test("fromEnv fails building the layer without a key", async () => {
  const exit = await Effect.runPromiseExit(Effect.provide(OmniClient, OmniClient.fromEnv({ OMNIBATCH_BASE_URL: "http://x.example" })));
  assert.ok(Exit.isFailure(exit));
  assert.match(JSON.stringify(exit), "MissingApiKey");
});

test("interrupting a call aborts its HTTP request at once", async () => {
  const server = await startCannedServer();
  let closed = 0;
  server.handle((req, res) => {
    res.on("close", () => {
      closed += 1;
    });
    if (req.url.startsWith("/v1/images/omni-image/slow")) return; // never answers
    envelope(res, 200, { code: 0, message: "", request_id: "r", data: [] });
  });
  const layer = OmniClient.fromEnv({ OMNIBATCH_API_KEY: "k-interrupt", OMNIBATCH_BASE_URL: server.url });
  try {
    const closedByInterrupt = await Effect.runPromise(
      Effect.gen(function* () {
        const client = yield* OmniClient;
        const fiber = yield* Effect.fork(client.getImage("slow"));
        // Interrupt once the server holds the request (a fixed sleep lost that race on a loaded machine).
        for (let i = 0; i < 500 && server.seen.length === 0; i++) yield* Effect.sleep("10 millis");
        yield* Fiber.interrupt(fiber);
        // The server sees the connection close shortly after (bounded wait).
        for (let i = 0; i < 100 && closed === 0; i++) yield* Effect.sleep("20 millis");
        return closed;
      }).pipe(Effect.provide(Layer.fresh(layer))),
    );
    assert.is(server.seen.length, 1);
    assert.is(closedByInterrupt, 1);
  } finally {
    await server.close();
  }
});

test.run();
