// The client against a service at its worst, over loopback: redirects that would carry
// the key to another origin (another port of 127.0.0.1), text that echoes the key or
// holds terminal escapes, and answers where one task is unreadable among good ones or
// varies the way the real service does (null fields, no request_id, numbers for decimals).

import { Effect, Either, Redacted } from "effect";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import type { ApiError } from "../../src/api/ApiError.js";
import { classify } from "../../src/api/classify.js";
import { OmniClient, type OmniClientService } from "../../src/api/OmniClient.js";
import { neutralise, scrubSecret } from "../../src/api/neutralise.js";
import { envelope, startCannedServer, type CannedServer } from "./cannedServer.js";

const apiKey = "sk-hostile-Qm3Rt7Yu9Io1Pa5";
const test = suite<{ service: CannedServer; other: CannedServer }>("hostile service", {
  service: undefined as unknown as CannedServer,
  other: undefined as unknown as CannedServer,
});

test.before(async (ctx) => {
  ctx.service = await startCannedServer();
  ctx.other = await startCannedServer();
});
test.after(async (ctx) => {
  await ctx.service.close();
  await ctx.other.close();
});
test.before.each((ctx) => {
  ctx.service.seen.length = 0;
  ctx.other.seen.length = 0;
});

const run = <A>(baseUrl: string, use: (client: OmniClientService) => Effect.Effect<A, ApiError>): Promise<Either.Either<A, ApiError>> =>
  Effect.runPromise(Effect.scoped(Effect.flatMap(OmniClient.make({ baseUrl, apiKey: Redacted.make(apiKey), timeoutMs: 5_000 }), use)).pipe(Effect.either));

const ok = (data: unknown) => ({ code: 0, message: "success", request_id: "r-1", data });
const task = (id: string, extra: Record<string, unknown> = {}) => ({ id, status: "processing", message: "", create_time: 1, update_time: 2, external_id: `x-${id}`, ...extra });
const authsSeen = (server: CannedServer) => server.seen.map((r) => r.headers["authorization"]);

// ---------------------------------------------------------------- item 7: redirects

test("an API answer redirecting to another port of 127.0.0.1 is not followed: the other origin never sees the key", async ({ service, other }) => {
  service.handle((_req, res) => {
    res.writeHead(302, { location: `${other.url}/tasks?task_ids=a` });
    res.end();
  });
  other.handle((_req, res) => envelope(res, 200, ok([])));
  const result = await run(service.url, (c) => c.queryVideos({ taskIds: ["a"] }));
  assert.ok(Either.isLeft(result), "the redirect must fail the call");
  const error = (result as Either.Left<ApiError, unknown>).left;
  assert.is(error._tag, "TransportError");
  assert.match(error.message, "another origin");
  assert.is(other.seen.length, 0, "nothing reached the other origin");
  assert.equal(authsSeen(other), []);
});

test("a create answered 307 to another origin is refused and classified unknown-outcome (look it up, never resend blindly)", async ({ service, other }) => {
  service.handle((_req, res) => {
    res.writeHead(307, { location: `${other.url}/omni-video/kling-o1` });
    res.end();
  });
  const result = await run(service.url, (c) => c.createVideo({ contents: [{ type: "prompt", text: "x" }], options: { external_task_id: "e1" } }));
  const error = (result as Either.Left<ApiError, unknown>).left;
  assert.is(classify(error), "unknown-outcome");
  assert.is(other.seen.length, 0);
});

test("a redirect within the service's exact origin is followed for a GET, with the key", async ({ service }) => {
  service.handle((req, res) => {
    if (req.url.startsWith("/tasks?")) {
      res.writeHead(301, { location: "/v2/tasks?task_ids=a" });
      res.end();
    } else envelope(res, 200, ok([task("a")]));
  });
  const result = await run(service.url, (c) => c.queryVideos({ taskIds: ["a"] }));
  assert.equal(Either.getOrThrow(result).map((t) => t.id), ["a"]);
  assert.equal(authsSeen(service), [`Bearer ${apiKey}`, `Bearer ${apiKey}`]);
});

test("a download redirected to another port is followed without any Authorization header", async ({ service, other }) => {
  service.handle((_req, res) => {
    res.writeHead(302, { location: `${other.url}/cdn/v.mp4` });
    res.end();
  });
  other.handle((_req, res) => {
    res.writeHead(200, { "content-type": "video/mp4", "content-length": "4" });
    res.end("mp4!");
  });
  const response = Either.getOrThrow(await run(service.url, (c) => c.download(`${service.url}/_files/1/video.mp4?sig=s`)));
  let text = "";
  for await (const part of response.body) text += String(part);
  assert.is(text, "mp4!");
  assert.equal(authsSeen(service), [undefined]);
  assert.equal(authsSeen(other), [undefined]);
});

test("a result link that is not http(s), or a redirect to one, is never fetched", async ({ service }) => {
  const direct = await run(service.url, (c) => c.download("file:///etc/passwd"));
  assert.ok(Either.isLeft(direct));
  assert.match((direct as Either.Left<ApiError, unknown>).left.message, "not http(s)");
  service.handle((_req, res) => {
    res.writeHead(302, { location: "file:///etc/passwd" });
    res.end();
  });
  const redirected = await run(service.url, (c) => c.download(`${service.url}/_files/1/a.png`));
  assert.ok(Either.isLeft(redirected));
  assert.match((redirected as Either.Left<ApiError, unknown>).left.message, "not http(s)");
});

// ---------------------------------------------------------------- item 8: scrubbing

test("neutralise renders escapes and control characters inert and visible; scrubSecret removes the key", () => {
  assert.is(neutralise("\u001b[2J\u001b]0;pwned\u0007ok"), "\\x1b[2J\\x1b]0;pwned\\x07ok");
  assert.is(neutralise("line1\nline2\tx\r"), "line1 line2 x ");
  assert.is(neutralise("abc\u202edef\u009b"), "abc\\u202edef\\x9b");
  assert.is(neutralise("plain text, ünïcode ✓"), "plain text, ünïcode ✓");
  assert.is(scrubSecret(`key=${apiKey}&k2=${encodeURIComponent("a b+" + apiKey)}`, apiKey), "key=[redacted]&k2=a%20b%2B[redacted]");
});

test("every string of an answer is scrubbed of the key and neutralised before it leaves the client", async ({ service }) => {
  service.handle((_req, res) =>
    envelope(res, 200, ok([task("a", { status: "failed", message: `failed for Bearer ${apiKey} \u001b[31mred\u001b[0m`, outputs: [{ type: "video", url: `https://cdn/v.mp4?k=${apiKey}` }] })])),
  );
  const tasks = Either.getOrThrow(await run(service.url, (c) => c.queryVideos({ taskIds: ["a"] })));
  const text = JSON.stringify(tasks);
  assert.not.ok(text.includes(apiKey), text);
  assert.not.ok(text.includes("\u001b"), text);
  assert.is(tasks[0]!.message, "failed for Bearer [redacted] \\x1b[31mred\\x1b[0m");
  const checked = Either.getOrThrow(await run(service.url, (c) => c.queryVideosChecked({ taskIds: ["a"] })));
  assert.not.ok(JSON.stringify(checked).includes(apiKey));
});

test("an error envelope echoing the key is scrubbed in the ApiError", async ({ service }) => {
  service.handle((req, res) => envelope(res, 400, { code: 1201, message: `bad request; you sent ${req.headers["authorization"]}\u001b[0m`, request_id: "r" }));
  const error = (await run(service.url, (c) => c.getImage("i1"))) as Either.Left<ApiError, unknown>;
  assert.is(error.left.message, "bad request; you sent Bearer [redacted]\\x1b[0m");
});

// ---------------------------------------------------------------- item 11: per-task validation

test("one task with a 1e309 charge among good ones: the good ones come through, the odd one is an anomaly saying what was wrong", async ({ service }) => {
  const bad = task("b", { status: "succeeded", billing: [{ charge_type: "cash", amount: "1e309", currency: "USD" }] });
  service.handle((_req, res) => envelope(res, 200, ok([task("a"), bad, task("c")])));
  const checked = Either.getOrThrow(await run(service.url, (c) => c.queryVideosChecked({ taskIds: ["a", "b", "c"] })));
  assert.equal(checked.tasks.map((t) => t.id), ["a", "c"]);
  assert.is(checked.anomalies.length, 1);
  const anomaly = checked.anomalies[0]!;
  assert.is(anomaly.taskId, "b");
  assert.is(anomaly.externalId, "x-b");
  assert.match(anomaly.problems, "/data/1/billing/0/amount");
  assert.match(anomaly.problems, "1e309");
  // The strict reading kept for existing callers still refuses the whole answer.
  const strict = await run(service.url, (c) => c.queryVideos({ taskIds: ["a", "b", "c"] }));
  assert.is((strict as Either.Left<ApiError, unknown>).left._tag, "DecodeError");
});

test("negative, NaN and non-finite charges are anomalies, never amounts", async ({ service }) => {
  for (const amount of ["-0.35", "NaN", -1, "Infinity"]) {
    service.handle((_req, res) => res.writeHead(200, { "content-type": "application/json" }).end(
      JSON.stringify(ok([task("a", { status: "succeeded", billing: [{ charge_type: "cash", amount, currency: "USD" }] })])),
    ));
    const checked = Either.getOrThrow(await run(service.url, (c) => c.queryVideosChecked({ taskIds: ["a"] })));
    assert.equal(checked.tasks, [], String(amount));
    assert.is(checked.anomalies.length, 1, String(amount));
  }
  // A JSON number too large for a double parses as Infinity: an anomaly as well.
  service.handle((_req, res) => res.writeHead(200, { "content-type": "application/json" }).end(
    `{"code":0,"message":"","request_id":"r","data":[{"id":"a","status":"succeeded","create_time":1,"update_time":2,"billing":[{"charge_type":"cash","amount":1e309,"currency":"USD"}]}]}`,
  ));
  const checked = Either.getOrThrow(await run(service.url, (c) => c.queryVideosChecked({ taskIds: ["a"] })));
  assert.is(checked.anomalies.length, 1);
});

test("lenient where the real service varies: null optional fields, no request_id, numbers for decimal strings", async ({ service }) => {
  service.handle((_req, res) =>
    res.writeHead(200, { "content-type": "application/json" }).end(
      JSON.stringify({
        code: 0,
        message: "success",
        data: [
          task("a", { message: null, external_id: null, outputs: [{ type: "video", url: "https://cdn/v.mp4", duration: 5, watermark_url: null }], billing: [{ charge_type: "cash", amount: 0.35, currency: "USD", list_price: 0.5 }] }),
        ],
      }),
    ),
  );
  const tasks = Either.getOrThrow(await run(service.url, (c) => c.queryVideos({ taskIds: ["a"] })));
  assert.is(tasks[0]!.message, "");
  assert.is(tasks[0]!.external_id, undefined);
  assert.is(tasks[0]!.billing?.[0]?.amount, "0.35");
  assert.is(tasks[0]!.billing?.[0]?.list_price, "0.5");
  assert.is((tasks[0]!.outputs?.[0] as { duration?: string } | undefined)?.duration, "5");
});

test("a null where a required string was expected is an anomaly for that task only (image list and B2)", async ({ service }) => {
  const image = (id: string, extra: Record<string, unknown> = {}) => ({ task_id: id, task_status: "submitted", created_at: 1, updated_at: 2, task_info: { external_task_id: `x-${id}` }, ...extra });
  service.handle((req, res) =>
    envelope(res, 200, ok(req.url.startsWith("/v1/images/omni-image?") ? [image("i1"), image("i2", { task_status: null }), image("i3")] : image("i9", { task_status: "exploded" }))),
  );
  const list = Either.getOrThrow(await run(service.url, (c) => c.listImagesChecked({ pageNum: 1, pageSize: 30 })));
  assert.equal(list.tasks.map((t) => t.task_id), ["i1", "i3"]);
  assert.is(list.anomalies[0]!.externalId, "x-i2");
  assert.match(list.anomalies[0]!.problems, "task_status");
  const one = Either.getOrThrow(await run(service.url, (c) => c.getImageChecked("i9")));
  assert.equal(one.tasks, []);
  assert.is(one.anomalies[0]!.taskId, "i9");
});

test("A3 pages validate per task too and keep has_more and next_cursor", async ({ service }) => {
  service.handle((_req, res) => envelope(res, 200, ok({ result: [task("a"), task("b", { status: 7 })], has_more: true, next_cursor: "c2" })));
  const page = Either.getOrThrow(await run(service.url, (c) => c.cursorVideosChecked({})));
  assert.equal(page.result.map((t) => t.id), ["a"]);
  assert.is(page.has_more, true);
  assert.is(page.next_cursor, "c2");
  assert.is(page.anomalies[0]!.taskId, "b");
});

test("finding an image by external id fails (not 'not found') when an unreadable task may be the one asked for", async ({ service }) => {
  service.handle((_req, res) => envelope(res, 200, ok([{ task_id: "i2", task_status: "bogus", created_at: 1, updated_at: 2, task_info: { external_task_id: "wanted-1" } }])));
  const result = await run(service.url, (c) => c.findImagesByExternalIds(["wanted-1", "w2", "w3", "w4"]));
  assert.ok(Either.isLeft(result), "an unreadable candidate must not read as absent");
});

test.run();
