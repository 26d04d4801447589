// The line a refused run (and `doctor`) prints: the address, what it lacks or refused,
// what to check; never the key.

import { test } from "uvu";
import * as assert from "uvu/assert";
import { Effect, Redacted } from "effect";
import { ServiceError, TransportError, type ApiError, type Operation } from "../../src/api/ApiError.js";
import { OmniClient } from "../../src/api/OmniClient.js";
import { paths } from "../../src/protocol/wire.js";
import { startEmulator } from "../../src/emulator/Emulator.js";
import { refusalCheck, refusalLine } from "../../src/api/refusal.js";

const answer = (code: number, httpStatus: number, message: string, operation: Operation = "createVideo", request?: string) =>
  new ServiceError({ operation, code, httpStatus, message, requestId: "r", ...(request ? { request } : {}) });
const address = "https://gw.example.com/v2";

test("1202: names the address and the path, and says to check the base URL and the service's name", () => {
  const line = refusalLine(answer(1202, 404, "no such API", "createVideo", "POST /omni-video/svc-o1"), { address });
  assert.is(
    line,
    "the service at https://gw.example.com/v2 has no POST /omni-video/svc-o1 (HTTP 404, code 1202: no such API): check the base URL (--base-url / OMNIBATCH_BASE_URL) and the service's name (--service / OMNIBATCH_SERVICE)",
  );
  assert.not.match(line, "\n");
});

test("1000 to 1004: the key was refused; OMNIBATCH_API_KEY is named, never its value", () => {
  for (const code of [1000, 1001, 1002, 1003, 1004]) {
    const line = refusalLine(answer(code, 401, "Authorization header is invalid", "queryVideos", "GET /tasks"), { address });
    assert.match(line, "refused the API key");
    assert.match(line, "OMNIBATCH_API_KEY");
    assert.match(line, address);
    assert.is(refusalCheck(answer(code, 401, "x")), "key");
  }
});

test("1203 naming a model on a create: names the model and says to check it and the service's name", () => {
  const line = refusalLine(answer(1203, 404, "model does not exist", "createImage", "POST /v1/images/omni-image"), { address, model: "svc-image-o1" });
  assert.match(line, "has no model svc-image-o1 (POST /v1/images/omni-image)");
  assert.match(line, "check the job's model and the service's name (--service");
  assert.match(refusalLine(answer(1203, 404, "The model is discontinued", "createVideo", "POST /omni-video/old-o1"), { address }), "has no model named by POST /omni-video/old-o1");
});

test("1103: no access to this API or model; 1102 and the other account codes: the account", () => {
  assert.match(refusalLine(answer(1103, 403, "no access", "createVideo", "POST /omni-video/kling-o1"), { address }), "gives this key no access to POST /omni-video/kling-o1");
  assert.is(refusalCheck(answer(1103, 403, "x")), "permission");
  const balance = refusalLine(answer(1102, 429, "balance not enough", "createImage", "POST /v1/images/omni-image"), { address });
  assert.match(balance, "the account was refused at https://gw.example.com/v2 (HTTP 429, code 1102: balance not enough)");
  assert.is(refusalCheck(answer(1102, 429, "x")), "account");
  assert.is(refusalCheck(answer(1201, 400, "x")), undefined);
  assert.is(refusalCheck(new TransportError({ operation: "createVideo", phase: "connect", reason: "ECONNREFUSED" })), undefined);
});

test("the client names its own request on a service's error answer: method and path, never the query", async () => {
  const emu = await startEmulator({ service: "other-gateway" }, { port: 0 });
  try {
    const call = <A>(key: string, use: (c: OmniClient["Type"]) => Effect.Effect<A, ApiError>) =>
      Effect.runPromise(Effect.scoped(Effect.flatMap(OmniClient.make({ baseUrl: emu.url, apiKey: Redacted.make(key) }), (c) => Effect.flip(use(c)))));
    const create = await call(emu.apiKey, (c) => c.createVideo({ prompt: "a street", duration: "5" } as never));
    assert.is(create._tag === "ServiceError" ? create.request : undefined, `POST ${paths.videoCreate("kling-o1")}`);
    assert.is(create._tag === "ServiceError" ? create.code : undefined, 1202);
    const query = await call("not-the-key", (c) => c.queryVideos({ externalTaskIds: ["x"] }));
    assert.is(query._tag === "ServiceError" ? query.request : undefined, "GET /tasks");
    assert.match(refusalLine(query, { address: emu.url }), `the service at ${emu.url} refused the API key`);
    assert.not.match(refusalLine(query, { address: emu.url }), "not-the-key");
  } finally {
    await emu.close();
  }
});

test.run();
