// Review finding: a create answered with a same-origin 307/308 is sent AGAIN by the
// client (OmniClient.ts `send(next, sendMethod, hops + 1)` for a POST). A create is not
// idempotent: a service (or a proxy in front of it) that carried out the create and then
// answered 307 gets a second create, up to 6 per intent with maxRedirects 5. Against a
// service that accepts a reused external_task_id (service-behaviour.md: the runner must
// survive it) every re-send is a second paid task. Expected: a redirect answering a create
// is an unknown outcome (look the id up, never re-send blindly), as a cross-origin one is.

import { Effect, Either, Redacted } from "effect";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import type { ApiError } from "../../src/api/ApiError.js";
import { classify } from "../../src/api/classify.js";
import { OmniClient, type OmniClientService } from "../../src/api/OmniClient.js";
import { envelope, startCannedServer, type CannedServer } from "./cannedServer.js";

const test = suite<{ service: CannedServer }>("create answered with a same-origin redirect", { service: undefined as unknown as CannedServer });
test.before(async (ctx) => {
  ctx.service = await startCannedServer();
});
test.after(async (ctx) => {
  await ctx.service.close();
});

const run = <A>(baseUrl: string, use: (client: OmniClientService) => Effect.Effect<A, ApiError>): Promise<Either.Either<A, ApiError>> =>
  Effect.runPromise(Effect.scoped(Effect.flatMap(OmniClient.make({ baseUrl, apiKey: Redacted.make("k"), timeoutMs: 5_000 }), use)).pipe(Effect.either));

for (const status of [307, 308]) {
  test(`a video create answered ${status} to the same path is sent once, and its outcome is unknown`, async ({ service }) => {
    service.seen.length = 0;
    let creates = 0;
    service.handle((req, res) => {
      if (req.method === "POST") {
        creates++; // the service carried the create out, then redirected
        res.writeHead(status, { location: req.url });
        res.end();
      } else envelope(res, 200, { code: 0, message: "", request_id: "r", data: [] });
    });
    const result = await run(service.url, (c) => c.createVideo({ contents: [{ type: "prompt", text: "x" }], options: { external_task_id: "e1" } }));
    assert.is(creates, 1, `the create must be POSTed once, was POSTed ${creates} times (each a paid task on a service that accepts a reused id)`);
    assert.ok(Either.isLeft(result));
    assert.is(classify((result as Either.Left<ApiError, unknown>).left), "unknown-outcome");
  });
}

test.run();
