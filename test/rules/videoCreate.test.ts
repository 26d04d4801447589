// A1 (create video task) structural rules: every rule on both sides of its bound, the
// combination rules, prompt references and elements, and the spec's own examples.

import { test } from "uvu";
import * as assert from "uvu/assert";
import { checkVideoCreate, type ElementInfo, type RuleContext, type Violation } from "../../src/rules/index.js";

const rules = (vs: Violation[]) => vs.map((v) => v.rule);
const prompt = (text = "a cat walks") => ({ type: "prompt", text });
const first = (id?: string) => ({ type: "first_frame", url: "https://example.com/first.png", ...(id ? { id } : {}) });
const last = () => ({ type: "last_frame", url: "https://example.com/last.png" });
const refer = (id?: string) => ({ type: "refer_image", url: "https://example.com/ref.png", ...(id ? { id } : {}) });
const feature = () => ({ type: "feature_video", url: "https://example.com/f.mp4" });
const base = () => ({ type: "base_video", url: "https://example.com/b.mp4" });
const element = (element_id: string, id: string) => ({ type: "element", element_id, id });
const check = (contents: unknown[], settings?: Record<string, unknown>, options?: Record<string, unknown>, ctx?: RuleContext) =>
  checkVideoCreate({ contents, ...(settings ? { settings } : {}), ...(options ? { options } : {}) }, ctx);
const refers = (n: number) => Array.from({ length: n }, (_, i) => refer(`r${i}`));

const library: Record<string, ElementInfo> = {
  "101": { id: "101", name: "Alice", element_type: "multi_image_elements" },
  "102": { id: "102", name: "Bob", element_type: "multi_image_elements" },
  "103": { id: "103", name: "Bobby", element_type: "multi_image_elements" },
  "104": { id: "104", name: "Dancer", element_type: "video_character_elements" },
  "105": { id: "105", name: "alice", element_type: "multi_image_elements" },
};
const ctx: RuleContext = { elements: (id) => library[id] };

// ---------------------------------------------------------------- spec examples

test("the spec's example: first frame + reference image at duration 3 with an empty external_task_id is accepted", () => {
  const body = {
    contents: [prompt("@ref in the style of the first frame"), first("start"), refer("ref")],
    settings: { duration: 3, resolution: "720p", audio: "off" },
    options: { external_task_id: "", watermark_info: { enabled: false } },
  };
  assert.equal(checkVideoCreate(body), []);
});

test("a text-only task with an aspect ratio and every default is accepted", () => {
  assert.equal(check([prompt()], { aspect_ratio: "16:9" }), []);
});

test("every enum value of audio, resolution and aspect_ratio is accepted", () => {
  for (const audio of ["original", "off"])
    for (const resolution of ["720p", "1080p"])
      for (const aspect_ratio of ["16:9", "9:16", "1:1"])
        assert.equal(check([prompt(), feature()], { audio, resolution, aspect_ratio }), []);
});

// ---------------------------------------------------------------- shapes

test("a body that is not an object is one violation on body", () => {
  for (const body of [null, [], "x", 3, undefined]) assert.equal(rules(checkVideoCreate(body)), ["video.body.object"]);
});

test("contents missing, not an array or empty is reported", () => {
  assert.equal(rules(checkVideoCreate({ settings: { aspect_ratio: "1:1" } })), ["video.contents.required"]);
  assert.equal(rules(checkVideoCreate({ contents: {}, settings: { aspect_ratio: "1:1" } })), ["video.contents.type"]);
  assert.equal(rules(checkVideoCreate({ contents: [], settings: { aspect_ratio: "1:1" } })), ["video.contents.empty"]);
});

test("a content item that is not an object or has an unknown type is reported at its index", () => {
  const vs = check([prompt(), 7, { type: "sound", url: "x" }, { url: "x" }], { aspect_ratio: "1:1" });
  assert.equal(rules(vs), ["video.content.object", "video.content.type", "video.content.type"]);
  assert.equal(vs.map((v) => v.field), ["contents[1]", "contents[2].type", "contents[3].type"]);
});

test("image and video items need a non-empty url", () => {
  const vs = check([{ type: "first_frame" }, { type: "feature_video", url: "" }, { type: "refer_image", url: 5 }]);
  assert.equal(rules(vs), ["video.content.url.required", "video.content.url.required", "video.content.url.required"]);
});

test("an id, when given, must be a non-empty string", () => {
  assert.equal(rules(check([{ ...first(), id: 3 }])), ["video.content.id.type"]);
  assert.equal(rules(check([{ ...first(), id: "" }])), ["video.content.id.type"]);
});

test("settings and options must be objects", () => {
  assert.equal(rules(checkVideoCreate({ contents: [first()], settings: "5s" })), ["video.settings.object"]);
  assert.equal(rules(checkVideoCreate({ contents: [first()], options: [] })), ["video.options.object"]);
});

test("unknown fields are ignored, as the service does", () => {
  assert.equal(checkVideoCreate({ contents: [first()], mode: "pro", settings: { fps: 30 } }), []);
});

// ---------------------------------------------------------------- prompt

test("prompt text of 2500 characters is accepted, 2501 is not", () => {
  assert.equal(check([prompt("a".repeat(2500))], { aspect_ratio: "1:1" }), []);
  const vs = check([prompt("a".repeat(2501))], { aspect_ratio: "1:1" });
  assert.equal(rules(vs), ["video.prompt.length"]);
  assert.equal(vs[0]!.message, "contents[0].text: must be at most 2500 characters (got 2501)");
});

test("prompt length counts characters, not bytes or UTF-16 units: 2500 emoji pass, 2501 do not", () => {
  assert.equal("😀".repeat(2500).length, 5000); // 2 UTF-16 units each, 4 bytes in UTF-8
  assert.equal(check([prompt("😀".repeat(2500))], { aspect_ratio: "1:1" }), []);
  assert.equal(check([prompt("é中".repeat(1250))], { aspect_ratio: "1:1" }), []);
  assert.equal(rules(check([prompt("😀".repeat(2501))], { aspect_ratio: "1:1" })), ["video.prompt.length"]);
});

test("a prompt item needs a non-empty string text", () => {
  for (const text of [undefined, "", 42]) {
    assert.equal(rules(check([{ type: "prompt", text }, first()])), ["video.prompt.text.required"]);
  }
});

test("more than one prompt item is reported on the second", () => {
  const vs = check([prompt(), first(), prompt("again")]);
  assert.equal(rules(vs), ["video.prompt.multiple"]);
  assert.is(vs[0]!.field, "contents[2]");
});

test("a task without a prompt item is accepted (the spec does not require one)", () => {
  assert.equal(check([first()]), []);
});

// ---------------------------------------------------------------- settings

test("bad audio, resolution and aspect_ratio values are reported with what was given", () => {
  const vs = check([first()], { audio: "on", resolution: "4k", aspect_ratio: "4:3" });
  assert.equal(rules(vs), ["video.audio.enum", "video.resolution.enum", "video.aspect_ratio.enum"]);
  assert.is(vs[2]!.message, 'settings.aspect_ratio: must be one of 16:9, 9:16, 1:1 (got "4:3")');
});

test("duration 3 and 10 are accepted, 2 and 11 are not", () => {
  const at = (duration: unknown) => rules(check([prompt()], { aspect_ratio: "16:9", duration }));
  assert.equal(at(3), []);
  assert.equal(at(10), []);
  assert.equal(at(2), ["video.duration.range"]);
  assert.equal(at(11), ["video.duration.range"]);
});

test("duration must be an integer number", () => {
  const at = (duration: unknown) => rules(check([prompt()], { aspect_ratio: "16:9", duration }));
  assert.equal(at("5"), ["video.duration.type"]);
  assert.equal(at(5.5), ["video.duration.type"]);
});

test("with a first frame as the only image input, duration 5 and 10 pass and 3 and 7 do not", () => {
  assert.equal(check([prompt(), first()], { duration: 5 }), []);
  assert.equal(check([prompt(), first()], { duration: 10 }), []);
  assert.equal(check([prompt(), first()]), [], "the default duration is 5");
  const vs = check([prompt(), first()], { duration: 7 });
  assert.equal(rules(vs), ["video.duration.first_frame_only"]);
  assert.is(vs[0]!.message, "settings.duration: must be 5 or 10 when a first frame is the only image input (got 7)");
  assert.equal(rules(check([first()], { duration: 3 })), ["video.duration.first_frame_only"]);
});

test("a last frame, reference image or reference video lifts the 5-or-10 rule", () => {
  assert.equal(check([first(), last()], { duration: 7 }), []);
  assert.equal(check([first(), refer()], { duration: 3 }), []);
  assert.equal(check([first(), feature()], { duration: 4 }), []);
});

test("an element is not an image input: first frame + element still needs 5 or 10", () => {
  assert.equal(rules(check([first(), element("101", "e1")], { duration: 7 })), ["video.duration.first_frame_only"]);
  assert.equal(check([first(), element("101", "e1")], { duration: 10 }), []);
});

test("aspect_ratio is required with neither a first frame nor a reference video", () => {
  assert.equal(rules(check([prompt()])), ["video.aspect_ratio.required"]);
  assert.equal(rules(check([prompt(), refer()])), ["video.aspect_ratio.required"]);
  assert.equal(rules(check([prompt(), element("101", "e")])), ["video.aspect_ratio.required"]);
  assert.equal(check([prompt(), first()]), []);
  assert.equal(check([prompt(), feature()]), []);
  assert.equal(check([prompt(), base()]), []);
  assert.equal(check([prompt(), refer()], { aspect_ratio: "9:16" }), []);
});

// ---------------------------------------------------------------- combinations

test("a last frame alone is unsupported", () => {
  const vs = check([prompt(), last()], { aspect_ratio: "1:1" });
  assert.equal(rules(vs), ["video.last_frame.alone"]);
  assert.is(vs[0]!.field, "contents[1]");
});

test("first + last frame is accepted; adding a reference image or an element is not", () => {
  assert.equal(check([first(), last()]), []);
  assert.equal(rules(check([first(), last(), refer()])), ["video.frames.with_references"]);
  assert.equal(rules(check([first(), last(), element("101", "e")])), ["video.frames.with_references"]);
});

test("two first frames or two last frames are reported", () => {
  assert.equal(rules(check([first(), first()])), ["video.first_frame.multiple"]);
  assert.equal(rules(check([first(), last(), last()])), ["video.last_frame.multiple"]);
});

test("at most one reference video, feature or base", () => {
  assert.equal(rules(check([feature(), base()])), ["video.reference_video.multiple"]);
  assert.equal(rules(check([feature(), feature()])), ["video.reference_video.multiple"]);
  assert.equal(check([feature()]), []);
});

test("a feature video allows a first frame but not a last frame", () => {
  assert.equal(check([feature(), first()], { duration: 7 }), []);
  assert.equal(rules(check([feature(), first(), last()])), ["video.feature_video.last_frame"]);
});

test("a base video allows neither a first nor a last frame", () => {
  assert.equal(rules(check([base(), first()])), ["video.base_video.frames"]);
  assert.equal(rules(check([base(), first(), last()])), ["video.base_video.frames", "video.base_video.frames"]);
  assert.equal(check([base(), refer()]), []);
});

test("reference images + elements: 7 pass and 8 fail without a reference video", () => {
  assert.equal(check([first(), ...refers(7)]), []);
  assert.equal(check([first(), ...refers(5), element("101", "e1"), element("102", "e2")], {}, {}, ctx), []);
  const vs = check([first(), ...refers(8)]);
  assert.equal(rules(vs), ["video.references.count"]);
  assert.is(vs[0]!.message, "contents: reference images + elements must be at most 7 (got 8)");
  assert.equal(rules(check([first(), ...refers(6), element("101", "e1"), element("102", "e2")])), ["video.references.count"]);
});

test("reference images + elements: 4 pass and 5 fail with a reference video", () => {
  assert.equal(check([feature(), ...refers(4)]), []);
  assert.equal(rules(check([feature(), ...refers(5)])), ["video.references.count"]);
  assert.equal(rules(check([base(), ...refers(3), element("101", "e1"), element("102", "e2")])), ["video.references.count"]);
});

// ---------------------------------------------------------------- ids

test("duplicate content ids are reported on the later item", () => {
  const vs = check([first("x"), refer("x")]);
  assert.equal(rules(vs), ["video.content.id.duplicate"]);
  assert.is(vs[0]!.field, "contents[1].id");
});

test("an element item needs an id and an element_id", () => {
  assert.equal(rules(check([first(), { type: "element", element_id: "101" }])), ["video.element.id.required"]);
  assert.equal(rules(check([first(), { type: "element", id: "e" }])), ["video.element.element_id.required"]);
  assert.equal(rules(check([first(), { type: "element", id: "e", element_id: 101 }])), ["video.element.element_id.required"]);
});

test("referring to ids that are substrings of one another is ambiguous", () => {
  const ids = [first("cat"), refer("cat2")];
  assert.equal(rules(check([prompt("@cat2 sits"), ...ids])), ["video.prompt.reference.ambiguous"]);
  assert.equal(rules(check([prompt("@cat sits"), ...ids])), ["video.prompt.reference.ambiguous"]);
  assert.equal(check([prompt("a cat sits"), ...ids]), [], "not referred to: no ambiguity");
  assert.equal(check([prompt("@cat and @dog"), first("cat"), refer("dog")]), []);
});

// ---------------------------------------------------------------- elements

test("an unknown element id is answered with 1203", () => {
  const vs = check([first(), element("999", "e")], {}, {}, ctx);
  assert.equal(rules(vs), ["video.element.unknown"]);
  assert.is(vs[0]!.code, 1203);
  assert.is(vs[0]!.field, "contents[1].element_id");
});

test("without an element library, element ids are not judged", () => {
  assert.equal(check([first(), element("999", "e")]), []);
});

test("video character elements are rejected with 1201", () => {
  const vs = check([first(), element("104", "d")], {}, {}, ctx);
  assert.equal(rules(vs), ["video.element.video_type"]);
  assert.is(vs[0]!.code, 1201);
});

test("element names that are substrings of one another are reported", () => {
  const vs = check([prompt("@b1 and @b2"), first(), element("102", "b1"), element("103", "b2")], {}, {}, ctx);
  assert.equal(rules(vs), ["video.element.name.substring"]);
  assert.equal(check([prompt("@a and @b"), first(), element("101", "a"), element("102", "b")], {}, {}, ctx), []);
});

test("an element name that also occurs in other prompt text is reported", () => {
  const vs = check([prompt("@hero waves at https://example.com/Alice.png"), first(), element("101", "hero")], {}, {}, ctx);
  assert.equal(rules(vs), ["video.element.name.in_prompt"]);
  assert.is(vs[0]!.field, "contents[0].text");
  assert.equal(check([prompt("@hero waves"), first(), element("101", "hero")], {}, {}, ctx), []);
  // The reference itself is not "other text", even when the id spells the name.
  assert.equal(check([prompt("@alice waves"), first(), element("105", "alice")], {}, {}, ctx), []);
});

// ---------------------------------------------------------------- options

test("options: watermark_info must be {enabled: boolean}; ids and callback must be strings", () => {
  const at = (options: Record<string, unknown>) => rules(check([first()], {}, options));
  assert.equal(at({ watermark_info: { enabled: true }, external_task_id: "x", callback_url: "http://127.0.0.1/cb" }), []);
  assert.equal(at({ watermark_info: true }), ["video.watermark_info.object"]);
  assert.equal(at({ watermark_info: { enabled: "yes" } }), ["video.watermark_info.enabled"]);
  assert.equal(at({ external_task_id: 12 }), ["video.external_task_id.type"]);
  assert.equal(at({ callback_url: false }), ["video.callback_url.type"]);
});

test("every violation names its field at the start of its message and uses code 1201 or 1203", () => {
  const vs = check([last(), prompt(""), feature(), base(), ...refers(9)], { duration: 1, audio: 1 }, { callback_url: 1 });
  assert.ok(vs.length >= 6);
  for (const v of vs) {
    assert.ok(v.message.startsWith(`${v.field}: `), v.message);
    assert.ok(v.code === 1201 || v.code === 1203);
    assert.match(v.rule, /^video\.[a-z_.]+$/);
  }
});

test.run();
