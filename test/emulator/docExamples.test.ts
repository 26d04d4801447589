// Requests written the way the service's own documentation writes them (empty strings
// for unused options, string timestamps, URLs of public images) are accepted unchanged.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { Client, fixture, start } from "./harness.js";

const emu = await start({ slots: { video: 100, image: 100 } });
const c = new Client(emu);
const png = fixture("img_300x300.png").toString("base64");

test("A1: first frame plus a reference image at duration 3, empty external_task_id and callback_url", async () => {
  const r = await c.createVideo({
    contents: [
      { type: "prompt", text: "The girl in @image_1 walks into the scene of @image_2" },
      { type: "first_frame", url: "https://cdn.example.com/inputs/girl.png", id: "image_1" },
      { type: "refer_image", url: png, id: "image_2" },
    ],
    settings: { audio: "off", resolution: "720p", duration: 3 },
    options: { callback_url: "", external_task_id: "", watermark_info: { enabled: false } },
  });
  assert.is(r.status, 200);
  assert.is(r.body.code, 0);
  assert.is(r.body.data.status, "submitted");
  assert.is(r.body.data.external_id, undefined, "an empty external_task_id is treated as absent");
});

test("A1: text only with every setting spelled out", async () => {
  const r = await c.createVideo({
    contents: [{ type: "prompt", text: "A paper boat drifts down a rainy street, close-up" }],
    settings: { audio: "off", resolution: "1080p", aspect_ratio: "9:16", duration: 5 },
    options: { external_task_id: "doc-example-1", watermark_info: { enabled: true } },
  });
  assert.is(r.body.code, 0);
  assert.is(r.body.data.external_id, "doc-example-1");
});

test("A1: an element with its id referred to in the prompt", async () => {
  const r = await c.createVideo({
    contents: [
      { type: "prompt", text: "@hero rides a bicycle through the market" },
      { type: "element", element_id: "800000000001", id: "hero" },
    ],
    settings: { aspect_ratio: "16:9", duration: 5 },
  });
  assert.is(r.body.code, 0);
});

test("A2: query by task_ids and by external_task_ids", async () => {
  const id = (await c.createVideo({ contents: [{ type: "prompt", text: "x y" }], settings: { aspect_ratio: "1:1" }, options: { external_task_id: "doc-2" } })).body.data.id;
  assert.is((await c.get(`/tasks?task_ids=${id}`)).body.data[0].id, id);
  assert.is((await c.get("/tasks?external_task_ids=doc-2")).body.data[0].id, id);
});

test("A3: an empty cursor with string timestamps and filters", async () => {
  const now = emu.now();
  const r = await c.post("/tasks", {
    start_time: String(now - 86_400_000),
    end_time: String(now + 1000),
    cursor: "",
    limit: 20,
    filters: [
      { key: "status", values: ["submitted", "processing", "succeeded", "failed"] },
      { key: "product_type", values: ["video"] },
    ],
  });
  assert.is(r.body.code, 0);
  assert.ok(r.body.data.count >= 1);
  assert.type(r.body.data.next_cursor, "string");
  assert.type(r.body.data.has_more, "boolean");
});

test("B1: image with image_list, labels in the prompt, series auto and every option", async () => {
  // The documentation's own example asks kling-image-o1 for a series, which its per-model
  // table rules out: it is accepted with the limits off (a service falling back silently).
  emu.configure({ faults: { modelLimits: false } });
  const r = await c.createImage({
    model_name: "kling-image-o1",
    prompt: "Put the product in <<<image_1>>> on the table of <<<image_2>>>, soft light",
    image_list: [{ image: "https://cdn.example.com/inputs/product.jpg" }, { image: png }],
    resolution: "2k",
    result_type: "series",
    series_amount: "auto",
    aspect_ratio: "auto",
    watermark_info: { enabled: false },
    callback_url: "",
    external_task_id: "",
  });
  emu.configure({ faults: { modelLimits: true } });
  assert.is(r.body.code, 0);
  assert.equal(r.body.data.task_info, {});
});

test("B1: single result with n and an element_list", async () => {
  const r = await c.createImage({
    prompt: "<<<element_1>>> in a studio portrait",
    element_list: [{ element_id: 800000000001 }],
    n: 2,
    aspect_ratio: "3:4",
  });
  assert.is(r.body.code, 0);
});

test("B2 and B3: one task by id, and the first page", async () => {
  const id = (await c.createImage({ prompt: "a teapot" })).body.data.task_id;
  assert.is((await c.get(`/v1/images/omni-image/${id}`)).body.data.task_id, id);
  const page = await c.get("/v1/images/omni-image?pageNum=1&pageSize=30");
  assert.is(page.body.data[0].task_id, id);
});

test.after(() => emu.close());
test.run();
