// A service answering with times no Date can show (create_time 1e300, an integer to JSON
// Schema) over loopback: the task carrying them is an anomaly saying what was wrong (asked
// about again at the next poll), the good tasks of the answer come through, and a create
// answered so is an unreadable success (outcome unknown: looked up, never sent again).
// Before the wire schema bounded `timestampMs`, such a time was recorded and every report
// write then threw "Invalid time value".

import { Effect, Either, Redacted } from "effect";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import type { ApiError } from "../../src/api/ApiError.js";
import { classify } from "../../src/api/classify.js";
import { OmniClient, type OmniClientService } from "../../src/api/OmniClient.js";
import { envelope, startCannedServer, type CannedServer } from "./cannedServer.js";

const test = suite<{ service: CannedServer }>("huge service times", { service: undefined as unknown as CannedServer });
test.before(async (ctx) => {
  ctx.service = await startCannedServer();
});
test.after(async (ctx) => {
  await ctx.service.close();
});

const run = <A>(baseUrl: string, use: (client: OmniClientService) => Effect.Effect<A, ApiError>): Promise<Either.Either<A, ApiError>> =>
  Effect.runPromise(Effect.scoped(Effect.flatMap(OmniClient.make({ baseUrl, apiKey: Redacted.make("sk-times"), timeoutMs: 5_000 }), use)).pipe(Effect.either));
const ok = (data: unknown) => ({ code: 0, message: "success", request_id: "r-1", data });
const video = (id: string, extra: Record<string, unknown> = {}) => ({ id, status: "processing", message: "", create_time: 1, update_time: 2, external_id: `x-${id}`, ...extra });

test("a video whose create_time or update_time is past year 9999 is an anomaly naming the field; the others come through", async ({ service }) => {
  for (const [field, value] of [["create_time", 1e300], ["update_time", 1e300], ["create_time", 253402300800000]] as const) {
    service.handle((_req, res) => envelope(res, 200, ok([video("a"), video("b", { [field]: value }), video("c", { create_time: 253402300799999, update_time: 253402300799999 })])));
    const checked = Either.getOrThrow(await run(service.url, (c) => c.queryVideosChecked({ taskIds: ["a", "b", "c"] })));
    assert.equal(checked.tasks.map((t) => t.id), ["a", "c"], `${field} ${value}`);
    assert.is(checked.anomalies.length, 1);
    assert.is(checked.anomalies[0]!.taskId, "b");
    assert.match(checked.anomalies[0]!.problems, `/data/1/${field}`);
  }
});

test("an image whose created_at is 1e300 is an anomaly in a list page", async ({ service }) => {
  const image = (id: string, created_at: number) => ({ task_id: id, task_status: "processing", created_at, updated_at: 1, task_info: { external_task_id: `x-${id}` } });
  service.handle((_req, res) => envelope(res, 200, ok([image("i1", 1), image("i2", 1e300)])));
  const checked = Either.getOrThrow(await run(service.url, (c) => c.listImagesChecked({ pageNum: 1, pageSize: 50 })));
  assert.equal(checked.tasks.map((t) => t.task_id), ["i1"]);
  assert.match(checked.anomalies[0]!.problems, "/data/1/created_at");
});

test("a create answered with create_time 1e300 is an unreadable success: outcome unknown, never a recorded time", async ({ service }) => {
  service.handle((_req, res) => envelope(res, 200, ok({ id: "v1", status: "submitted", create_time: 1e300, update_time: 1e300 })));
  const created = await run(service.url, (c) => c.createVideo({ contents: [{ type: "prompt", text: "a calm street" }], settings: { aspect_ratio: "16:9" } } as never));
  assert.ok(Either.isLeft(created), "not taken as a create with that time");
  assert.is(classify((created as Either.Left<ApiError, unknown>).left), "unknown-outcome");
});

test.run();
