// The answer schemas (schemas/api/) accept every shape spec/omni-api.md describes,
// with extra fields, and reject what the client could not rely on, naming the path.

import { test } from "uvu";
import * as assert from "uvu/assert";
import { loadAnswerSchemas } from "../../src/api/AnswerSchemas.js";
import { fillImageTask, fillVideoTask } from "../../src/api/fillDefaults.js";
import type { ImageTask, VideoTask } from "../../src/protocol/wire.js";

// Checked against the JSON Schema meta-schema too: a malformed schema fails here.
const schemas = loadAnswerSchemas({ checkSchemas: true });
const ok = (data: unknown) => ({ code: 0, message: "success", request_id: "req-1", data });

const fullVideoTask = {
  id: "842250903629086785",
  status: "succeeded",
  message: "",
  create_time: 1781080778802,
  update_time: 1781080794151,
  external_id: "spring-clips-ab12",
  outputs: [
    { type: "video", id: "o1", url: "https://cdn/v.mp4", watermark_url: "https://cdn/vw.mp4", duration: "5" },
    { type: "image", url: "https://cdn/i.png", watermark_url: "https://cdn/iw.png", group_id: "g1" },
    { type: "audio", id: "a1", mp3_url: "https://cdn/a.mp3", wav_url: "https://cdn/a.wav", mp3_duration: "5.0", wav_duration: "5.0" },
    { type: "voice", id: "vo1", name: "Narrator", url: "https://cdn/voice", owned_by: "svc", status: "succeeded" },
    {
      type: "element",
      id: "e1",
      name: "hero",
      description: "the hero",
      element_type: "multi_image_elements",
      references: [
        { type: "image", role: "frontal", url: "https://cdn/f.png" },
        { type: "video", role: "refer", url: "https://cdn/r.mp4" },
        { type: "voice", role: "refer", url: "https://cdn/v", id: "vo1", name: "n", owned_by: "12345" },
      ],
      owned_by: "12345",
      status: "deleted",
      tags: [{ id: 1, name: "t", description: "d" }],
    },
  ],
  billing: [
    { charge_type: "cash", cash_type: "balance", amount: "1.75", currency: "USD", list_price: "2.50" },
    { charge_type: "unit", amount: "5", package_type: "video" },
  ],
  future_field: { anything: true },
};

const fullImageTask = {
  task_id: "img-1",
  task_status: "succeed",
  task_status_msg: "",
  task_info: { external_task_id: "spring-keyframes-cd34" },
  task_result: {
    result_type: "series",
    images: [],
    series_images: [
      { index: 0, url: "https://cdn/0.png", watermark_url: "https://cdn/0w.png" },
      { index: 1, url: "https://cdn/1.png" },
    ],
  },
  watermark_info: { enabled: true },
  final_unit_deduction: "2",
  final_balance_deduction: { quota: "0.06", list_price: "0.08" },
  created_at: 1781080778802,
  updated_at: 1781080794151,
};

test("every documented answer shape is accepted, extra fields included", () => {
  assert.equal(schemas.problems("createVideo", ok({ id: "1", status: "submitted", create_time: 1, update_time: 1, external_id: "e" })), []);
  assert.equal(schemas.problems("queryVideos", ok([fullVideoTask])), []);
  assert.equal(schemas.problems("queryVideos", ok([])), []);
  assert.equal(schemas.problems("cursorVideos", ok({ result: [fullVideoTask], count: 1, next_cursor: "c2", has_more: true })), []);
  assert.equal(
    schemas.problems("createImage", ok({ task_id: "i", task_info: { external_task_id: "e" }, task_status: "submitted", created_at: 1, updated_at: 1 })),
    [],
  );
  assert.equal(schemas.problems("getImage", ok(fullImageTask)), []);
  assert.equal(schemas.problems("listImages", ok([fullImageTask, { ...fullImageTask, task_status: "processing", task_result: undefined }])), []);
});

test("a task just submitted, without outputs, billing or messages, is accepted", () => {
  assert.equal(schemas.problems("queryVideos", ok([{ id: "1", status: "submitted", create_time: 1, update_time: 1 }])), []);
  assert.equal(schemas.problems("getImage", ok({ task_id: "i", task_status: "submitted", created_at: 1, updated_at: 1 })), []);
});

test("what the client relies on is checked strictly, each problem with its path", () => {
  const badVideo = {
    ...fullVideoTask,
    status: "succeed",
    outputs: [{ type: "video", id: "o" }, { type: "hologram", url: "u" }],
    billing: [{ charge_type: "cash", amount: 1.75, currency: "EUR" }],
  };
  const problems = schemas.problems("queryVideos", ok([badVideo]), 20);
  assert.ok(problems.includes('/data/0/status: must be one of "submitted", "processing", "succeeded", "failed" (got "succeed")'), problems.join("\n"));
  assert.ok(problems.includes("/data/0/outputs/0: missing 'url'"), problems.join("\n"));
  assert.ok(problems.some((p) => p.startsWith("/data/0/outputs/1/type: must be one of")), problems.join("\n"));
  assert.ok(problems.includes("/data/0/billing/0/amount: must be string (got 1.75)"), problems.join("\n"));
  assert.ok(problems.some((p) => p.startsWith("/data/0/billing/0/currency: must be one of")), problems.join("\n"));

  const badImage = { ...fullImageTask, task_status: "succeeded", created_at: 1.5, final_unit_deduction: "two" };
  const imageProblems = schemas.problems("getImage", ok(badImage), 20);
  assert.ok(imageProblems.includes('/data/task_status: must be one of "submitted", "processing", "succeed", "failed" (got "succeeded")'));
  assert.ok(imageProblems.includes("/data/created_at: must be integer (got 1.5)"));
  assert.ok(imageProblems.some((p) => p.startsWith("/data/final_unit_deduction: must match pattern")));
});

test("a unit charge needs its package type and a cash charge its currency", () => {
  const problems = schemas.problems(
    "queryVideos",
    ok([{ ...fullVideoTask, billing: [{ charge_type: "unit", amount: "1" }, { charge_type: "cash", amount: "1" }] }]),
  );
  assert.equal(problems, ["/data/0/billing/0: missing 'package_type'", "/data/0/billing/1: missing 'currency'"]);
});

test("success answers need code 0 and data; the envelope needs code and message (request_id is not always sent)", () => {
  assert.equal(schemas.problems("listImages", { code: 0, message: "", request_id: "r" }), ["(answer): missing 'data'"]);
  assert.equal(schemas.envelopeProblems({ code: 1201, message: "m", request_id: "r" }), []);
  assert.equal(schemas.envelopeProblems({ code: 1201, message: "m" }), []);
  assert.equal(schemas.envelopeProblems({ code: "1201" }), ["(answer): missing 'message'", '/code: must be integer (got "1201")']);
});

test("long lists of problems are cut, saying how many more there are", () => {
  const tasks = Array.from({ length: 12 }, (_, i) => ({ ...fullVideoTask, id: `t${i}`, status: "bogus" }));
  const problems = schemas.problems("queryVideos", ok(tasks), 3);
  assert.is(problems.length, 4);
  assert.is(problems[3], "... and 9 more");
});

test("fillDefaults gives optional descriptive fields their empty values", () => {
  const video = fillVideoTask({ id: "1", status: "submitted", create_time: 1, update_time: 1 } as VideoTask);
  assert.is(video.message, "");
  const image = fillImageTask({ task_id: "i", task_status: "succeed", created_at: 1, updated_at: 1, task_result: { series_images: [{ index: 0, url: "u" }] } } as ImageTask);
  assert.equal(image.task_info, {});
  assert.is(image.task_status_msg, "");
  assert.equal(image.watermark_info, { enabled: false });
  assert.is(image.task_result?.result_type, "series");
});

test.run();
