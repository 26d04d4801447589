// The client against a canned loopback server: every error shape of
// spec/service-behaviour.md becomes the right ApiError and class, and no error text
// ever carries the API key.

import { inspect } from "node:util";
import { Effect, Either, Redacted, Schedule } from "effect";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import type { ApiError } from "../../src/api/ApiError.js";
import { classify, isOutcomeUnknown } from "../../src/api/classify.js";
import { OmniClient, type OmniClientConfig, type OmniClientService } from "../../src/api/OmniClient.js";
import { envelope, startCannedServer, type CannedServer } from "./cannedServer.js";

const apiKey = "sk-canned-Zq9Xw8Vv7Uu6Tt5";
const test = suite<{ server: CannedServer }>("api client errors", { server: undefined as unknown as CannedServer });

test.before(async (ctx) => {
  ctx.server = await startCannedServer();
});
test.after(async (ctx) => {
  await ctx.server.close();
});
test.before.each((ctx) => {
  ctx.server.seen.length = 0;
});

const provoked: unknown[] = [];

/** Runs `use` with a fresh client against `baseUrl`; the error (if any) is kept for the key check. */
const run = async <A>(
  baseUrl: string,
  use: (client: OmniClientService) => Effect.Effect<A, ApiError>,
  config: Partial<OmniClientConfig> = {},
): Promise<Either.Either<A, ApiError>> => {
  const result = await Effect.runPromise(
    Effect.scoped(Effect.flatMap(OmniClient.make({ baseUrl, apiKey: Redacted.make(apiKey), ...config }), use)).pipe(Effect.either),
  );
  if (Either.isLeft(result)) provoked.push(result.left);
  return result;
};

const failure = <A>(result: Either.Either<A, ApiError>): ApiError => {
  if (Either.isRight(result)) throw new Error(`expected a failure, got ${JSON.stringify(result.right)}`);
  return result.left;
};

const videoRequest = { contents: [{ type: "prompt" as const, text: "a cat" }], options: { external_task_id: "m-job-1" } };
const videoTask = { id: "v1", status: "processing", message: "", create_time: 1, update_time: 2 };

test("401 code 1001 is a ServiceError classified refused, with the service's message and request id", async ({ server }) => {
  server.handle((_req, res) => envelope(res, 401, { code: 1001, message: "Authorization header is empty", request_id: "req-1001" }));
  const error = failure(await run(server.url, (c) => c.queryVideos({ taskIds: ["a"] })));
  assert.is(error._tag, "ServiceError");
  if (error._tag !== "ServiceError") return;
  assert.is(error.code, 1001);
  assert.is(error.httpStatus, 401);
  assert.is(error.message, "Authorization header is empty");
  assert.is(error.requestId, "req-1001");
  assert.is(error.operation, "queryVideos");
  assert.is(classify(error), "refused");
});

test("429 code 1303 is no-slot, and a create refused so is not of unknown outcome", async ({ server }) => {
  server.handle((_req, res) => envelope(res, 429, { code: 1303, message: "parallel task over resource pack limit", request_id: "r" }));
  const error = failure(await run(server.url, (c) => c.createVideo(videoRequest)));
  assert.is(classify(error), "no-slot");
  assert.is(isOutcomeUnknown("createVideo", error), false);
});

test("429 code 1102 is refused even with a Retry-After header", async ({ server }) => {
  server.handle((_req, res) => envelope(res, 429, { code: 1102, message: "balance not enough", request_id: "r" }, { "retry-after": "3" }));
  const error = failure(await run(server.url, (c) => c.createImage({ prompt: "x" })));
  assert.is(classify(error), "refused");
  assert.is(error._tag === "ServiceError" && error.retryAfterMs, 3000);
});

test("400 code 1301 is task-rejected with the service's message", async ({ server }) => {
  server.handle((_req, res) => envelope(res, 400, { code: 1301, message: "input rejected by content safety", request_id: "r" }));
  const error = failure(await run(server.url, (c) => c.createVideo(videoRequest)));
  assert.is(classify(error), "task-rejected");
  assert.is(error.message, "input rejected by content safety");
});

test("500 code 5000 on a create is unknown-outcome; on a query it is retry", async ({ server }) => {
  server.handle((_req, res) => envelope(res, 500, { code: 5000, message: "internal error", request_id: "r" }));
  const create = failure(await run(server.url, (c) => c.createVideo(videoRequest)));
  assert.is(isOutcomeUnknown("createVideo", create), true);
  assert.is(classify(create), "unknown-outcome");
  const query = failure(await run(server.url, (c) => c.queryVideos({ taskIds: ["a"] })));
  assert.is(classify(query), "retry");
});

test("a 502 HTML page without an envelope is a ServiceError without code, classified retry", async ({ server }) => {
  server.handle((_req, res) => {
    res.writeHead(502, { "content-type": "text/html" });
    res.end("<html><body>Bad gateway</body></html>");
  });
  const error = failure(await run(server.url, (c) => c.getImage("t1")));
  assert.is(error._tag, "ServiceError");
  assert.is(error._tag === "ServiceError" && error.code, undefined);
  assert.is(classify(error), "retry");
  assert.match(error.message, "Bad gateway");
});

test("HTTP 200 carrying a non-zero code is an error: the envelope decides, not the status", async ({ server }) => {
  server.handle((_req, res) => envelope(res, 200, { code: 1201, message: "duration: must be 5 or 10", request_id: "r" }));
  const error = failure(await run(server.url, (c) => c.createVideo(videoRequest)));
  assert.is(error._tag === "ServiceError" && error.code, 1201);
  assert.is(classify(error), "task-rejected");
});

test("a malformed JSON body on 200 is a DecodeError saying the body is not JSON", async ({ server }) => {
  server.handle((_req, res) => {
    res.writeHead(200, { "content-type": "application/json" });
    res.end('{"code":0,"data":[');
  });
  const error = failure(await run(server.url, (c) => c.queryVideos({ taskIds: ["a"] })));
  assert.is(error._tag, "DecodeError");
  assert.match(error._tag === "DecodeError" ? error.problems : "", /not JSON: \{"code":0,"data":\[/);
  assert.is(classify(error), "retry");
});

test("an answer that does not match the schema is a DecodeError listing each wrong path", async ({ server }) => {
  server.handle((_req, res) =>
    envelope(res, 200, { code: 0, message: "", request_id: "r-bad", data: [{ ...videoTask, status: "done", create_time: "yesterday" }] }),
  );
  const error = failure(await run(server.url, (c) => c.queryVideos({ taskIds: ["v1"] })));
  assert.is(error._tag, "DecodeError");
  if (error._tag !== "DecodeError") return;
  assert.match(error.problems, '/data/0/status: must be one of "submitted", "processing", "succeeded", "failed" (got "done")');
  assert.match(error.problems, '/data/0/create_time: must be integer (got "yesterday")');
  assert.is(error.requestId, "r-bad");
});

test("a create answered with a non-matching success is of unknown outcome", async ({ server }) => {
  server.handle((_req, res) => envelope(res, 200, { code: 0, message: "", request_id: "r", data: { status: "submitted" } }));
  const error = failure(await run(server.url, (c) => c.createVideo(videoRequest)));
  assert.is(error._tag, "DecodeError");
  assert.is(classify(error), "unknown-outcome");
});

test("Retry-After as an HTTP date becomes a delay in ms", async ({ server }) => {
  const at = new Date(Date.now() + 120_000).toUTCString();
  server.handle((_req, res) => envelope(res, 429, { code: 1302, message: "too fast", request_id: "r" }, { "retry-after": at }));
  const error = failure(await run(server.url, (c) => c.listImages({ pageNum: 1, pageSize: 10 })));
  assert.is(classify(error), "retry");
  const ms = error._tag === "ServiceError" ? (error.retryAfterMs ?? -1) : -1;
  assert.ok(ms > 100_000 && ms <= 120_000, `retryAfterMs ${ms}`);
});

test("a connection reset after the body was read is TransportError phase sent: a create's outcome is unknown", async ({ server }) => {
  server.handle((_req, res) => res.socket?.destroy());
  const error = failure(await run(server.url, (c) => c.createImage({ prompt: "x", external_task_id: "m-img-1" })));
  assert.is(error._tag, "TransportError");
  assert.is(error._tag === "TransportError" && error.phase, "sent");
  assert.is(classify(error), "unknown-outcome");
  assert.is(server.seen.length, 1);
  assert.match(server.seen[0]!.body, "m-img-1");
});

test("a service that never answers gives RequestTimeout after timeoutMs", async ({ server }) => {
  server.handle(() => {
    /* hang */
  });
  const started = Date.now();
  const error = failure(await run(server.url, (c) => c.getImage("t1"), { timeoutMs: 150 }));
  assert.is(error._tag, "RequestTimeout");
  assert.is(error._tag === "RequestTimeout" && error.afterMs, 150);
  assert.ok(Date.now() - started < 2_000);
  assert.is(classify(error), "retry");
  const create = failure(await run(server.url, (c) => c.createVideo(videoRequest), { timeoutMs: 100 }));
  assert.is(classify(create), "unknown-outcome");
});

test("a refused connection is TransportError phase connect: even a create may simply be sent again", async ({ server }) => {
  const closed = await startCannedServer();
  const url = closed.url;
  await closed.close();
  const error = failure(await run(url, (c) => c.createVideo(videoRequest)));
  assert.is(error._tag, "TransportError");
  assert.is(error._tag === "TransportError" && error.phase, "connect");
  assert.is(classify(error), "retry");
  assert.is(server.seen.length, 0);
});

test("requests carry Bearer auth, JSON content type, and the create body as given", async ({ server }) => {
  server.handle((_req, res) =>
    envelope(res, 200, { code: 0, message: "", request_id: "r", data: { id: "v1", status: "submitted", create_time: 1, update_time: 1, external_id: "m-job-1" } }),
  );
  const result = await run(server.url, (c) => c.createVideo(videoRequest), { service: "acme" });
  assert.equal(Either.getOrThrow(result), { id: "v1", status: "submitted", create_time: 1, update_time: 1, external_id: "m-job-1" });
  const [req] = server.seen;
  assert.is(req!.method, "POST");
  assert.is(req!.url, "/omni-video/acme-o1");
  assert.is(req!.headers["authorization"], `Bearer ${apiKey}`);
  assert.is(req!.headers["content-type"], "application/json");
  assert.equal(JSON.parse(req!.body), videoRequest);
});

test("queryVideos splits 120 ids into calls of 20 (the live service's limit) and concatenates the answers", async ({ server }) => {
  server.handle((req, res) => {
    const ids = new URL(req.url, "http://x").searchParams.get("task_ids")!.split(",");
    envelope(res, 200, { code: 0, message: "", request_id: "r", data: ids.map((id) => ({ ...videoTask, id })) });
  });
  const ids = Array.from({ length: 120 }, (_, i) => `task-${i}`);
  const tasks = Either.getOrThrow(await run(server.url, (c) => c.queryVideos({ taskIds: ids })));
  assert.is(server.seen.length, 6);
  const sizes = server.seen.map((r) => new URL(r.url, "http://x").searchParams.get("task_ids")!.split(",").length).sort((a, b) => b - a);
  assert.equal(sizes, [20, 20, 20, 20, 20, 20]);
  assert.equal(tasks.map((t) => t.id).sort(), [...ids].sort());
});

test("queryVideos never mixes task_ids and external_task_ids in one call, and sends nothing for no ids", async ({ server }) => {
  server.handle((_req, res) => envelope(res, 200, { code: 0, message: "", request_id: "r", data: [] }));
  const none = Either.getOrThrow(await run(server.url, (c) => c.queryVideos({})));
  assert.equal(none, []);
  assert.is(server.seen.length, 0);
  await run(server.url, (c) => c.queryVideos({ taskIds: ["a", "b"], externalTaskIds: ["x"] }));
  assert.equal(server.seen.map((r) => r.url).sort(), ["/tasks?external_task_ids=x", "/tasks?task_ids=a,b"]);
});

test("a batch answered 1201 is split in halves, and later calls use the size that worked", async ({ server }) => {
  server.handle((req, res) => {
    const ids = new URL(req.url, "http://x").searchParams.get("task_ids")!.split(",");
    if (ids.length > 10) return envelope(res, 400, { code: 1201, message: "task_ids and external_task_ids cannot exceed 10 in total", request_id: "r" });
    envelope(res, 200, { code: 0, message: "", request_id: "r", data: ids.map((id) => ({ ...videoTask, id })) });
  });
  const ids = Array.from({ length: 50 }, (_, i) => `s-${i}`);
  const tasks = Either.getOrThrow(
    await run(server.url, (c) =>
      Effect.gen(function* () {
        const first = yield* c.queryVideos({ taskIds: ids });
        const sentFirst = server.seen.length;
        const second = yield* c.queryVideos({ taskIds: ids });
        return { first, second, sentFirst };
      }),
    ),
  );
  // Calls of 20, 20 and 10: each 20 answered 1201 -> 10 + 10: 7 calls; then 50 ids in calls of 10: 5 calls.
  assert.is(tasks.sentFirst, 7);
  assert.is(server.seen.length - tasks.sentFirst, 5);
  assert.equal(tasks.first.map((t) => t.id).sort(), [...ids].sort());
  assert.equal(tasks.second.map((t) => t.id).sort(), [...ids].sort());
});

test("a single id answered 1201 is an error, not an empty answer", async ({ server }) => {
  server.handle((_req, res) => envelope(res, 400, { code: 1201, message: "task_ids: malformed", request_id: "r" }));
  const error = failure(await run(server.url, (c) => c.queryVideos({ taskIds: ["a", "b"] })));
  assert.is(error._tag === "ServiceError" && error.code, 1201);
  assert.is(server.seen.length, 2);
});

test("the configured retry schedule retries a 1302 query and gives up on 1102 at once", async ({ server }) => {
  let calls = 0;
  server.handle((_req, res) => {
    calls += 1;
    if (calls < 3) envelope(res, 429, { code: 1302, message: "too fast", request_id: "r" });
    else envelope(res, 200, { code: 0, message: "", request_id: "r", data: [] });
  });
  const retry = Schedule.spaced("5 millis").pipe(Schedule.compose(Schedule.recurs(5)));
  const ok = await run(server.url, (c) => c.listImages({ pageNum: 1, pageSize: 30 }), { retry });
  assert.ok(Either.isRight(ok));
  assert.is(calls, 3);
  calls = 0;
  server.handle((_req, res) => {
    calls += 1;
    envelope(res, 429, { code: 1102, message: "balance not enough", request_id: "r" });
  });
  const refused = failure(await run(server.url, (c) => c.listImages({ pageNum: 1, pageSize: 30 }), { retry }));
  assert.is(classify(refused), "refused");
  assert.is(calls, 1);
});

test("a create is never retried by the client, whatever the schedule", async ({ server }) => {
  server.handle((_req, res) => envelope(res, 503, { code: 5001, message: "maintenance", request_id: "r" }));
  const retry = Schedule.recurs(5);
  failure(await run(server.url, (c) => c.createVideo(videoRequest), { retry }));
  assert.is(server.seen.length, 1);
});

test("stats count HTTP requests per operation", async ({ server }) => {
  server.handle((_req, res) => envelope(res, 200, { code: 0, message: "", request_id: "r", data: [] }));
  const stats = Either.getOrThrow(
    await run(server.url, (c) =>
      Effect.gen(function* () {
        yield* c.listImages({ pageNum: 1, pageSize: 5 });
        yield* c.queryVideos({ externalTaskIds: Array.from({ length: 60 }, (_, i) => `e${i}`) });
        return yield* c.stats;
      }),
    ),
  );
  assert.equal(stats.requests, { listImages: 1, queryVideos: 3 });
});

test("download never sends the key, not even to the service's own origin (result links are signed)", async ({ server }) => {
  server.handle((_req, res) => {
    res.writeHead(200, { "content-type": "image/png", "content-length": "3" });
    res.end("png");
  });
  const sameOrigin = Either.getOrThrow(await run(server.url, (c) => c.download(`${server.url}/_files/1/a.png?sig=x`)));
  sameOrigin.body.resume();
  const elsewhere = server.url.replace("127.0.0.1", "localhost");
  const other = Either.getOrThrow(await run(server.url, (c) => c.download(`${elsewhere}/cdn/a.png?sig=x`)));
  let text = "";
  for await (const part of other.body) text += String(part);
  assert.is(text, "png");
  assert.is(other.contentLength, 3);
  assert.is(server.seen[0]!.headers["authorization"], undefined);
  assert.is(server.seen[1]!.headers["authorization"], undefined);
});

test("a download whose body stalls errors its stream after downloadTimeoutMs", async ({ server }) => {
  server.handle((_req, res) => {
    res.writeHead(200, { "content-type": "video/mp4", "content-length": "1000" });
    res.write(Buffer.alloc(100));
  });
  const response = Either.getOrThrow(await run(server.url, (c) => c.download(`${server.url}/_files/2/v.mp4`), { downloadTimeoutMs: 300 }));
  const started = Date.now();
  let bytes = 0;
  let failed: unknown;
  try {
    for await (const part of response.body) bytes += (part as Buffer).length;
  } catch (error) {
    failed = error;
  }
  assert.ok(failed !== undefined, "the stream should fail");
  assert.is(bytes, 100);
  assert.ok(Date.now() - started < 2_000);
});

test("a download answered 404 with an envelope keeps the code; the message omits the link's query", async ({ server }) => {
  server.handle((_req, res) => envelope(res, 404, { code: 1203, message: "no such result", request_id: "r-404" }));
  const error = failure(await run(server.url, (c) => c.download(`${server.url}/_files/3/x.png?expires=1&sig=SECRETSIG`)));
  assert.is(error._tag === "ServiceError" && error.code, 1203);
  assert.is(error._tag === "ServiceError" && error.httpStatus, 404);
  assert.is(classify(error), "task-rejected");
  assert.match(error.message, "no such result");
  assert.not.match(error.message, "SECRETSIG");
});

test("a service message echoing the key is scrubbed before it reaches the error", async ({ server }) => {
  server.handle((req, res) =>
    envelope(res, 401, { code: 1002, message: `invalid header '${req.headers["authorization"]}'`, request_id: "r" }),
  );
  const error = failure(await run(server.url, (c) => c.getImage("t1")));
  assert.is(error.message, "invalid header 'Bearer [redacted]'");
});

test("no error provoked in this file mentions the API key", () => {
  assert.ok(provoked.length >= 12, `only ${provoked.length} errors provoked`);
  for (const error of provoked) {
    for (const text of [String(error), JSON.stringify(error), inspect(error, { depth: 5 }), (error as Error).message]) {
      assert.not.match(text, apiKey);
    }
  }
});

test.run();
