// The request schemas of schemas/api/ (shape and per-field ranges of what the client
// sends) are valid JSON Schemas, accept requests the spec allows and reject ones it
// does not, with the offending path.

import { readFileSync, readdirSync } from "node:fs";
import { Ajv2020 } from "ajv/dist/2020.js";
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { CursorQueryRequest, ImageCreateRequest, VideoCreateRequest } from "../../src/protocol/wire.js";

const dir = new URL("../../schemas/api/", import.meta.url);
const ajv = new Ajv2020({ allErrors: true, strict: true, strictRequired: false });
for (const file of readdirSync(dir).filter((f) => f.endsWith(".schema.json"))) {
  ajv.addSchema(JSON.parse(readFileSync(new URL(file, dir), "utf8")) as object);
}
const check = (file: string, body: unknown): string[] => {
  const validate = ajv.getSchema(`https://omnibatch.local/schemas/api/${file}`)!;
  return validate(body) ? [] : (validate.errors ?? []).filter((e) => e.keyword !== "if").map((e) => `${e.instancePath} ${e.message}`);
};

test("every schema file compiles against the 2020-12 meta-schema", () => {
  for (const file of readdirSync(dir).filter((f) => f.endsWith(".schema.json"))) {
    assert.ok(ajv.getSchema(`https://omnibatch.local/schemas/api/${file}`), file);
  }
});

test("documented video creates are accepted; out-of-range fields are named", () => {
  const ok: VideoCreateRequest = {
    contents: [
      { type: "prompt", text: "@start turns slowly" },
      { type: "first_frame", url: "https://x/a.png", id: "start" },
      { type: "element", element_id: "123", id: "hero" },
    ],
    settings: { audio: "off", resolution: "1080p", aspect_ratio: "9:16", duration: 10 },
    options: { external_task_id: "m-j-1", callback_url: "http://127.0.0.1/cb", watermark_info: { enabled: true } },
  };
  assert.equal(check("video-create.request.schema.json", ok), []);
  const bad = {
    contents: [{ type: "prompt" }, { type: "refer_image" }, { type: "sketch" }],
    settings: { resolution: "4k", duration: 11 },
  };
  assert.equal(check("video-create.request.schema.json", bad), [
    "/contents/0 must have required property 'text'",
    "/contents/1 must have required property 'url'",
    "/contents/2/type must be equal to one of the allowed values",
    "/settings/resolution must be equal to one of the allowed values",
    "/settings/duration must be <= 10",
  ]);
  assert.equal(check("video-create.request.schema.json", { contents: [] }), ["/contents must NOT have fewer than 1 items"]);
});

test("documented image creates are accepted; n, series_amount and the prompt length are bounded", () => {
  const ok: ImageCreateRequest = {
    model_name: "kling-v3-omni",
    prompt: "like <<<image_1>>>",
    image_list: [{ image: "https://x/a.png" }],
    element_list: [{ element_id: 42 }],
    resolution: "2k",
    result_type: "series",
    series_amount: "auto",
    aspect_ratio: "21:9",
    external_task_id: "m-k-1",
  };
  assert.equal(check("image-create.request.schema.json", ok), []);
  assert.equal(check("image-create.request.schema.json", { ...ok, series_amount: 4, n: 9 }), []);
  // The spec's placeholder name is no model of the real service.
  assert.equal(check("image-create.request.schema.json", { ...ok, model_name: "svc-v3-omni" }).length, 1);
  const problems = check("image-create.request.schema.json", { prompt: "x".repeat(2501), n: 10, series_amount: 1, element_list: [{ element_id: "42" }] });
  assert.ok(problems.includes("/prompt must NOT have more than 2500 characters"), problems.join("\n"));
  assert.ok(problems.includes("/n must be <= 9"), problems.join("\n"));
  assert.ok(problems.includes("/series_amount must be >= 2"), problems.join("\n"));
  assert.ok(problems.includes("/element_list/0/element_id must be integer"), problems.join("\n"));
});

test("cursor queries take time bounds as digit strings and a limit up to 500", () => {
  const ok: CursorQueryRequest = {
    start_time: "1781080778802",
    end_time: "1781080794151",
    limit: 500,
    filters: [
      { key: "status", values: ["succeeded", "failed"] },
      { key: "product_type", values: ["video"] },
    ],
  };
  assert.equal(check("video-cursor.request.schema.json", ok), []);
  const problems = check("video-cursor.request.schema.json", { start_time: 1781080778802, limit: 501, filters: [{ key: "status", values: ["succeed"] }] });
  assert.ok(problems.includes("/start_time must be string"), problems.join("\n"));
  assert.ok(problems.includes("/limit must be <= 500"), problems.join("\n"));
  assert.ok(problems.includes("/filters/0/values/0 must be equal to one of the allowed values"), problems.join("\n"));
});

test("a task query names one kind of ids, never both; list pages stay in range", () => {
  assert.equal(check("video-query.request.schema.json", { task_ids: "a,b" }), []);
  assert.equal(check("video-query.request.schema.json", { external_task_ids: "x" }), []);
  assert.ok(check("video-query.request.schema.json", { task_ids: "a", external_task_ids: "x" }).length > 0);
  assert.ok(check("video-query.request.schema.json", {}).length > 0);
  assert.equal(check("image-list.request.schema.json", { pageNum: 1000, pageSize: 500 }), []);
  assert.equal(check("image-list.request.schema.json", { pageNum: 0, pageSize: 501 }), ["/pageNum must be >= 1", "/pageSize must be <= 500"]);
});

test.run();
