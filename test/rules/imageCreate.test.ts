// B1 (create image task) structural rules on both sides of each bound.

import { test } from "uvu";
import * as assert from "uvu/assert";
import { checkImageCreate, type RuleContext, type Violation } from "../../src/rules/index.js";

const rules = (vs: Violation[]) => vs.map((v) => v.rule);
const images = (n: number) => Array.from({ length: n }, (_, i) => ({ image: `https://example.com/${i}.png` }));
const elements = (n: number) => Array.from({ length: n }, (_, i) => ({ element_id: 100 + i }));
const check = (extra: Record<string, unknown>, ctx?: RuleContext) => checkImageCreate({ prompt: "a red chair", ...extra }, ctx);

test("a prompt alone is a valid request; every documented field at a valid value too", () => {
  assert.equal(check({}), []);
  assert.equal(
    check({
      model_name: "kling-v3-omni",
      prompt: "like <<<image_1>>> with <<<element_1>>>",
      image_list: images(1),
      element_list: elements(1),
      resolution: "4k",
      result_type: "series",
      n: 1,
      series_amount: "auto",
      aspect_ratio: "21:9",
      watermark_info: { enabled: true },
      callback_url: "http://127.0.0.1:9/cb",
      external_task_id: "",
    }),
    [],
  );
});

test("a body that is not an object is one violation", () => {
  assert.equal(rules(checkImageCreate([])), ["image.body.object"]);
});

test("model_name: both models pass, others fail; the service name is configurable", () => {
  assert.equal(check({ model_name: "kling-image-o1" }), []);
  assert.equal(check({ model_name: "kling-v3-omni", aspect_ratio: "1:1" }), []);
  assert.equal(rules(check({ model_name: "svc-o1" })), ["image.model_name.enum"]);
  assert.equal(check({ model_name: "acme-image-o1" }, { service: "acme" }), []);
  assert.equal(rules(check({ model_name: "kling-image-o1" }, { service: "acme" })), ["image.model_name.enum"]);
  // The spec's placeholder is no model of the real service (the default name is kling).
  assert.equal(rules(check({ model_name: "svc-image-o1" })), ["image.model_name.enum"]);
  assert.equal(check({ model_name: "svc-image-o1" }, { service: "svc" }), []);
});

test("a model of another service's name gets the same model under this one's as a suggestion", () => {
  const [v] = check({ model_name: "svc-image-o1" });
  assert.match(v!.message, /did you mean kling-image-o1\?/);
  assert.match(check({ model_name: "svc-v3-omni", aspect_ratio: "1:1" })[0]!.message, /did you mean kling-v3-omni\?/);
  assert.match(check({ model_name: "kling-image-o2" })[0]!.message, /did you mean kling-image-o1\?/, "a typo");
  assert.match(check({ model_name: "kling-image-o1" }, { service: "acme" })[0]!.message, /did you mean acme-image-o1\?/);
  assert.not.match(check({ model_name: "something-else-entirely" })[0]!.message, /did you mean/);
});

test("prompt is required, non-empty, and at most 2500 characters counted as code points", () => {
  assert.equal(rules(checkImageCreate({})), ["image.prompt.required"]);
  assert.equal(rules(check({ prompt: "" })), ["image.prompt.required"]);
  assert.equal(rules(check({ prompt: 5 })), ["image.prompt.required"]);
  assert.equal(check({ prompt: "x".repeat(2500) }), []);
  assert.equal(rules(check({ prompt: "x".repeat(2501) })), ["image.prompt.length"]);
  assert.equal(check({ prompt: "🎨".repeat(2500) }), []);
  const vs = check({ prompt: "🎨".repeat(2501) });
  assert.equal(rules(vs), ["image.prompt.length"]);
  assert.is(vs[0]!.message, "prompt: must be at most 2500 characters (got 2501)");
});

test("image_list items need a non-empty image string", () => {
  assert.equal(rules(check({ image_list: "x" })), ["image.image_list.type"]);
  const vs = check({ image_list: [{ image: "" }, {}, "x", { image: 3 }] });
  assert.equal(rules(vs), [
    "image.image_list.image.required",
    "image.image_list.image.required",
    "image.image_list.item",
    "image.image_list.image.required",
  ]);
  assert.equal(vs.map((v) => v.field), ["image_list[0].image", "image_list[1].image", "image_list[2]", "image_list[3].image"]);
});

test("element_list items need an integer element_id", () => {
  assert.equal(rules(check({ element_list: {} })), ["image.element_list.type"]);
  assert.equal(rules(check({ element_list: [{ element_id: "101" }, { element_id: 1.5 }, {}] })), [
    "image.element_list.element_id.required",
    "image.element_list.element_id.required",
    "image.element_list.element_id.required",
  ]);
});

test("unknown element ids are answered with 1203 when the library is known", () => {
  const ctx: RuleContext = { elements: (id) => (id === "100" ? { id, name: "A", element_type: "multi_image_elements" } : undefined) };
  assert.equal(check({ element_list: elements(1) }, ctx), []);
  const vs = check({ element_list: [{ element_id: 100 }, { element_id: 7 }] }, ctx);
  assert.equal(rules(vs), ["image.element.unknown"]);
  assert.is(vs[0]!.code, 1203);
  assert.is(vs[0]!.field, "element_list[1].element_id");
});

test("resolution, result_type and aspect_ratio accept exactly their enums", () => {
  const v3 = { model_name: "kling-v3-omni", aspect_ratio: "1:1" };
  for (const resolution of ["1k", "2k", "4k"]) assert.equal(check({ ...v3, resolution }), []);
  for (const result_type of ["single", "series"]) assert.equal(check({ ...v3, result_type }), []);
  for (const aspect_ratio of ["16:9", "9:16", "1:1", "4:3", "3:4", "3:2", "2:3", "21:9", "auto"]) assert.equal(check({ aspect_ratio }), []);
  assert.equal(rules(check({ resolution: "8k", result_type: "batch", aspect_ratio: "5:4" })), [
    "image.resolution.enum",
    "image.result_type.enum",
    "image.aspect_ratio.enum",
  ]);
});

test("n: 1 and 9 pass, 0 and 10 fail, non-integers fail", () => {
  assert.equal(check({ n: 1 }), []);
  assert.equal(check({ n: 9 }), []);
  assert.equal(rules(check({ n: 0 })), ["image.n.range"]);
  assert.equal(rules(check({ n: 10 })), ["image.n.range"]);
  assert.equal(rules(check({ n: 2.5 })), ["image.n.type"]);
  assert.equal(rules(check({ n: "2" })), ["image.n.type"]);
});

test('series_amount: 2, 9 and "auto" pass; 1, 10 and other strings fail', () => {
  const at = (series_amount: unknown) => rules(check({ model_name: "kling-v3-omni", aspect_ratio: "1:1", result_type: "series", series_amount }));
  assert.equal(at(2), []);
  assert.equal(at(9), []);
  assert.equal(at("auto"), []);
  assert.equal(at(1), ["image.series_amount.range"]);
  assert.equal(at(10), ["image.series_amount.range"]);
  assert.equal(at("4"), ["image.series_amount.range"]);
});

test("reference images + elements: 10 pass, 11 fail", () => {
  assert.equal(check({ image_list: images(10) }), []);
  assert.equal(check({ image_list: images(6), element_list: elements(4) }), []);
  assert.equal(rules(check({ image_list: images(11) })), ["image.references.count"]);
  const vs = check({ image_list: images(7), element_list: elements(4) });
  assert.equal(rules(vs), ["image.references.count"]);
  assert.is(vs[0]!.message, "image_list: reference images + elements must be at most 10 (got 7 + 4)");
});

test("<<<image_N>>> and <<<element_N>>> labels must point at an existing position", () => {
  assert.equal(check({ prompt: "<<<image_1>>> and <<<image_2>>>", image_list: images(2) }), []);
  assert.equal(rules(check({ prompt: "<<<image_3>>>", image_list: images(2) })), ["image.prompt.label.image"]);
  assert.equal(rules(check({ prompt: "<<<image_0>>>", image_list: images(2) })), ["image.prompt.label.image"]);
  assert.equal(rules(check({ prompt: "<<<image_1>>>" })), ["image.prompt.label.image"]);
  assert.equal(check({ prompt: "<<<element_2>>>", element_list: elements(2) }), []);
  const vs = check({ prompt: "<<<element_2>>>", element_list: elements(1) });
  assert.equal(rules(vs), ["image.prompt.label.element"]);
  assert.is(vs[0]!.message, "prompt: label <<<element_2>>> points at no entry: element_list has 1 entry (labels count from 1)");
});

test("watermark_info, callback_url and external_task_id shapes", () => {
  assert.equal(rules(check({ watermark_info: "on" })), ["image.watermark_info.object"]);
  assert.equal(rules(check({ watermark_info: { enabled: 1 } })), ["image.watermark_info.enabled"]);
  assert.equal(rules(check({ callback_url: 1, external_task_id: null })), ["image.callback_url.type", "image.external_task_id.type"]);
});

test("per-model limits: kling-image-o1 takes no 4k and no series; kling-v3-omni without reference images takes no auto ratio", () => {
  assert.equal(rules(check({ resolution: "4k" })), ["image.model.resolution"]);
  assert.equal(rules(check({ model_name: "kling-image-o1", result_type: "series" })), ["image.model.result_type"]);
  assert.equal(rules(check({ model_name: "kling-v3-omni", aspect_ratio: "auto" })), ["image.model.aspect_ratio"]);
  assert.equal(rules(check({ model_name: "kling-v3-omni" })), ["image.model.aspect_ratio"], "auto is the default ratio");
  assert.equal(check({ model_name: "kling-v3-omni", image_list: images(1) }), [], "with a reference image auto is fine");
  assert.equal(check({ model_name: "acme-v3-omni", aspect_ratio: "16:9", resolution: "4k", result_type: "series" }, { service: "acme" }), []);
  assert.equal(check({ resolution: "4k", result_type: "series" }, { modelLimits: false }), []);
});

test.run();
