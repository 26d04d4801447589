// Every input rule of the spec through HTTP, on both sides of its bound: the request
// on the accepted side answers code 0, the one past it 400 code 1201 (or 404 1203 for
// unknown elements) with a message naming the field. Media come from test/fixtures as
// raw base64 and as loopback URLs.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { Client, fileServer, fixture, start } from "./harness.js";

const MB = 1024 * 1024;
const emu = await start({
  slots: { video: 1_000_000, image: 1_000_000 },
  // The size rules fetch 200 MB over loopback: under load that outlasted the default 10 s
  // (a timeout, not a size, then answered 1201). No rule here is about the fetch's time.
  mediaFetch: { maxBytes: 210 * MB, timeoutMs: 120_000 },
  elements: [
    { id: "800000000001", name: "Mika", element_type: "multi_image_elements" },
    { id: "800000000002", name: "Rover", element_type: "multi_image_elements" },
    { id: "800000000003", name: "Lantern", element_type: "multi_image_elements" },
    { id: "800000000004", name: "Studio", element_type: "multi_image_elements" },
    { id: "800000000005", name: "Narrator", element_type: "video_character_elements" },
    { id: "900000000001", name: "Rob", element_type: "multi_image_elements" },
    { id: "900000000002", name: "Robot", element_type: "multi_image_elements" },
  ],
});
const c = new Client(emu);

/** A PNG followed by padding (ignored by decoders) up to `size` bytes. */
const paddedPng = (size: number) => Buffer.concat([fixture("img_300x300.png"), Buffer.alloc(size - fixture("img_300x300.png").length)]);
/** An MP4 with a trailing `free` box up to `size` bytes. */
const paddedMp4 = (size: number) => {
  const base = fixture("vid_700x700_3s_24fps.mp4");
  const pad = Buffer.alloc(size - base.length);
  pad.writeUInt32BE(pad.length, 0);
  pad.write("free", 4, "latin1");
  return Buffer.concat([base, pad]);
};

const files: Record<string, Buffer> = {};
for (const name of [
  "img_299x299.png", "img_300x300.png", "img_299x299.jpg", "img_300x300.jpg", "img_300x300_progressive.jpg",
  "img_750x300.png", "img_780x300.png", "img_300x750.jpg", "img_300x780.jpg", "img_truncated.png", "not_media.txt",
]) files[name] = fixture(name);
for (const shape of ["700x700_3s_24fps", "699x700_3s_24fps", "700x699_3s_24fps", "2160x700_3s_24fps", "2161x700_3s_24fps",
  "700x700_2.9s_24fps", "700x700_10s_24fps", "700x700_10.1s_24fps", "700x700_3s_23fps", "700x700_3s_60fps", "700x700_3s_61fps"]) {
  for (const ext of ["mp4", "mov"]) files[`vid_${shape}.${ext}`] = fixture(`vid_${shape}.${ext}`);
}
const server = await fileServer(files);
const url = (name: string) => `${server.url}/${name}`;
const b64 = (name: string) => fixture(name).toString("base64");

const prompt = (text = "a lighthouse at dusk") => ({ type: "prompt", text });
const v = (contents: unknown[], settings: Record<string, unknown> = { aspect_ratio: "16:9" }, options: Record<string, unknown> = {}) => ({
  contents,
  settings,
  options,
});
const first = (value = b64("img_300x300.png"), id?: string) => ({ type: "first_frame", url: value, ...(id ? { id } : {}) });
const last = () => ({ type: "last_frame", url: b64("img_300x300.png") });
const refer = (id?: string) => ({ type: "refer_image", url: b64("img_300x300.png"), ...(id ? { id } : {}) });
const element = (element_id: string, id: string) => ({ type: "element", element_id, id });
const feature = (value = url("vid_700x700_3s_24fps.mp4")) => ({ type: "feature_video", url: value });
const base = (value = url("vid_700x700_3s_24fps.mp4")) => ({ type: "base_video", url: value });
const img = (extra: Record<string, unknown> = {}) => ({ prompt: "a red bicycle", ...extra });

const expectVideo = async (body: unknown, code: number, field?: string) => {
  const r = await c.createVideo(body);
  assert.is(r.body.code, code, `${r.body.message}`);
  if (code !== 0) {
    assert.is(r.status, code === 1203 ? 404 : 400);
    if (field) assert.match(r.body.message, field);
  } else assert.is(r.status, 200);
};
const expectImage = async (body: unknown, code: number, field?: string) => {
  const r = await c.createImage(body);
  assert.is(r.body.code, code, `${r.body.message}`);
  if (code !== 0 && field) assert.match(r.body.message, field);
};

test("video prompt: 2500 characters accepted, 2501 refused (characters, not bytes)", async () => {
  await expectVideo(v([prompt("é".repeat(2500))]), 0);
  await expectVideo(v([prompt("é".repeat(2501))]), 1201, "contents[0].text");
});

test("image prompt: 2500 characters accepted, 2501 refused", async () => {
  await expectImage(img({ prompt: "é".repeat(2500) }), 0);
  await expectImage(img({ prompt: "é".repeat(2501) }), 1201, "prompt");
});

test("duration 3 and 10 accepted, 2 and 11 refused", async () => {
  await expectVideo(v([prompt()], { aspect_ratio: "16:9", duration: 3 }), 0);
  await expectVideo(v([prompt()], { aspect_ratio: "16:9", duration: 10 }), 0);
  await expectVideo(v([prompt()], { aspect_ratio: "16:9", duration: 2 }), 1201, "settings.duration");
  await expectVideo(v([prompt()], { aspect_ratio: "16:9", duration: 11 }), 1201, "settings.duration");
});

test("a first frame as the only image input allows 5 or 10 only; with a reference image 3 is fine", async () => {
  await expectVideo(v([prompt(), first()], { duration: 5 }), 0);
  await expectVideo(v([prompt(), first()], { duration: 10 }), 0);
  await expectVideo(v([prompt(), first()], { duration: 3 }), 1201, "settings.duration");
  await expectVideo(v([prompt(), first(), refer()], { duration: 3 }), 0);
});

test("enums: resolution, aspect_ratio, audio", async () => {
  await expectVideo(v([prompt()], { aspect_ratio: "1:1", resolution: "1080p", audio: "original" }), 0);
  await expectVideo(v([prompt()], { aspect_ratio: "16:9", resolution: "4k" }), 1201, "settings.resolution");
  await expectVideo(v([prompt()], { aspect_ratio: "4:3" }), 1201, "settings.aspect_ratio");
  await expectVideo(v([prompt()], { aspect_ratio: "16:9", audio: "loud" }), 1201, "settings.audio");
});

test("aspect_ratio is required without a first frame or reference video, optional with one", async () => {
  await expectVideo(v([prompt()], {}), 1201, "settings.aspect_ratio");
  await expectVideo(v([prompt(), first()], {}), 0);
  await expectVideo(v([prompt(), feature()], {}), 0);
});

test("frames: last frame alone refused; first+last accepted; first+last with a reference image or element refused", async () => {
  await expectVideo(v([prompt(), last()]), 1201, "contents[1]");
  await expectVideo(v([prompt(), first(), last()], {}), 0);
  await expectVideo(v([prompt(), first(), last(), refer()], {}), 1201, "contents[3]");
  await expectVideo(v([prompt("@m walks"), first(), last(), element("800000000001", "m")], {}), 1201, "contents[3]");
});

test("reference videos: two refused, feature_video with last_frame refused, base_video with a first frame refused", async () => {
  await expectVideo(v([prompt(), feature(), base()], {}), 1201, "contents[2]");
  await expectVideo(v([prompt(), first(), last(), feature()], {}), 1201, "last_frame");
  await expectVideo(v([prompt(), first(), base()], {}), 1201, "contents[1]");
  await expectVideo(v([prompt(), first(), feature()], {}), 0);
});

test("reference images + elements: 7 accepted and 8 refused without a video; 4 and 5 with one", async () => {
  const refs = (n: number) => Array.from({ length: n }, (_, i) => refer(`r${i}`));
  const els = [element("800000000001", "e1"), element("800000000002", "e2"), element("800000000003", "e3")];
  await expectVideo(v([prompt(), ...refs(4), ...els]), 0);
  await expectVideo(v([prompt(), ...refs(5), ...els]), 1201, "contents");
  await expectVideo(v([prompt(), feature(), ...refs(2), ...els.slice(0, 2)], {}), 0);
  await expectVideo(v([prompt(), feature(), ...refs(3), ...els.slice(0, 2)], {}), 1201, "at most 4");
});

test("content ids: duplicates refused, element without id refused", async () => {
  await expectVideo(v([prompt(), refer("a"), refer("a")]), 1201, "contents[2].id");
  await expectVideo(v([prompt(), { type: "element", element_id: "800000000001" }]), 1201, "contents[1].id");
});

test("elements: unknown id answers 404 code 1203; a video-character element 1201; nested names 1201", async () => {
  await expectVideo(v([prompt("@x"), element("123456", "x")]), 1203, "contents[1].element_id");
  await expectVideo(v([prompt("@x"), element("800000000005", "x")]), 1201, "contents[1].element_id");
  await expectVideo(v([prompt("@a and @b"), element("900000000001", "a"), element("900000000002", "b")]), 1201, "substring");
  await expectVideo(v([prompt("@a and @b"), element("800000000001", "a"), element("800000000002", "b")]), 0);
});

test("@id names that are substrings of one another are refused", async () => {
  await expectVideo(v([prompt("@cat meets @cats"), refer("cat"), refer("cats")]), 1201, "contents[0].text");
  await expectVideo(v([prompt("@cat meets @dog"), refer("cat"), refer("dog")]), 0);
});

test("image n: 0 and 10 refused, 1 and 9 accepted", async () => {
  await expectImage(img({ n: 0 }), 1201, "n");
  await expectImage(img({ n: 1 }), 0);
  await expectImage(img({ n: 9 }), 0);
  await expectImage(img({ n: 10 }), 1201, "n");
});

test("image series_amount: 1 and 10 refused, 2, 9 and auto accepted", async () => {
  await expectImage(img({ model_name: "kling-v3-omni", aspect_ratio: "1:1", result_type: "series", series_amount: 1 }), 1201, "series_amount");
  await expectImage(img({ model_name: "kling-v3-omni", aspect_ratio: "1:1", result_type: "series", series_amount: 2 }), 0);
  await expectImage(img({ model_name: "kling-v3-omni", aspect_ratio: "1:1", result_type: "series", series_amount: 9 }), 0);
  await expectImage(img({ model_name: "kling-v3-omni", aspect_ratio: "1:1", result_type: "series", series_amount: "auto" }), 0);
  await expectImage(img({ model_name: "kling-v3-omni", aspect_ratio: "1:1", result_type: "series", series_amount: 10 }), 1201, "series_amount");
});

test("image enums: model_name, resolution, aspect_ratio, result_type", async () => {
  await expectImage(img({ model_name: "kling-v3-omni", resolution: "4k", aspect_ratio: "21:9" }), 0);
  await expectImage(img({ model_name: "other-model" }), 1201, "model_name");
  await expectImage(img({ resolution: "8k" }), 1201, "resolution");
  await expectImage(img({ aspect_ratio: "5:4" }), 1201, "aspect_ratio");
  await expectImage(img({ result_type: "many" }), 1201, "result_type");
});

test("image references: 10 accepted, 11 refused (image_list + element_list)", async () => {
  const list = (n: number) => Array.from({ length: n }, () => ({ image: b64("img_300x300.png") }));
  await expectImage(img({ image_list: list(10) }), 0);
  await expectImage(img({ image_list: list(11) }), 1201, "image_list");
  await expectImage(img({ image_list: list(8), element_list: [{ element_id: 800000000001 }, { element_id: 800000000002 }] }), 0);
  await expectImage(img({ image_list: list(8), element_list: [{ element_id: 800000000001 }, { element_id: 800000000002 }, { element_id: 800000000003 }] }), 1201);
  await expectImage(img({ element_list: [{ element_id: 123 }] }), 1203, "element_list[0]");
});

test("image pixels: 299 px refused and 300 px accepted, as base64 and as a loopback URL, PNG and JPEG", async () => {
  for (const ext of ["png", "jpg"]) {
    await expectVideo(v([prompt(), first(b64(`img_299x299.${ext}`))], {}), 1201, "contents[1].url");
    await expectVideo(v([prompt(), first(b64(`img_300x300.${ext}`))], {}), 0);
    await expectVideo(v([prompt(), first(url(`img_299x299.${ext}`))], {}), 1201, "contents[1].url");
    await expectVideo(v([prompt(), first(url(`img_300x300.${ext}`))], {}), 0);
    await expectImage(img({ image_list: [{ image: b64(`img_299x299.${ext}`) }] }), 1201, "image_list[0].image");
    await expectImage(img({ image_list: [{ image: url(`img_300x300.${ext}`) }] }), 0);
  }
  await expectVideo(v([prompt(), first(b64("img_300x300_progressive.jpg"))], {}), 0);
});

test("image ratio: 2.5:1 and 1:2.5 accepted, 2.6:1 and 1:2.6 refused", async () => {
  await expectVideo(v([prompt(), first(b64("img_750x300.png"))], {}), 0);
  await expectVideo(v([prompt(), first(b64("img_780x300.png"))], {}), 1201, "contents[1].url");
  await expectImage(img({ image_list: [{ image: url("img_300x750.jpg") }] }), 0);
  await expectImage(img({ image_list: [{ image: url("img_300x780.jpg") }] }), 1201, "image_list[0].image");
});

test("unreadable media: truncated PNG, text file, data: prefix and invalid base64 are refused", async () => {
  await expectVideo(v([prompt(), first(b64("img_truncated.png"))], {}), 1201, "contents[1].url");
  await expectVideo(v([prompt(), first(b64("not_media.txt"))], {}), 1201, "contents[1].url");
  await expectVideo(v([prompt(), first(`data:image/png;base64,${b64("img_300x300.png")}`)], {}), 1201, "contents[1].url");
  await expectVideo(v([prompt(), first("%%%not base64%%%")], {}), 1201, "contents[1].url");
  await expectImage(img({ image_list: [{ image: `data:image/png;base64,${b64("img_300x300.png")}` }] }), 1201, "image_list[0].image");
});

test("a loopback URL that answers 404 is refused; a non-loopback URL is accepted unchecked", async () => {
  await expectVideo(v([prompt(), first(url("missing.png"))], {}), 1201, "contents[1].url");
  await expectVideo(v([prompt(), first("https://images.example.com/not-fetched.png")], {}), 0);
});

test("image file size: 10 MB accepted and 10 MB + 1 byte refused on the image side; 50 MB / 50 MB + 1 on the video side", async () => {
  files["img_10mb.png"] = paddedPng(10 * MB);
  files["img_10mb1.png"] = paddedPng(10 * MB + 1);
  files["img_50mb.png"] = paddedPng(50 * MB);
  files["img_50mb1.png"] = paddedPng(50 * MB + 1);
  try {
    await expectImage(img({ image_list: [{ image: url("img_10mb.png") }] }), 0);
    await expectImage(img({ image_list: [{ image: url("img_10mb1.png") }] }), 1201, "image_list[0].image");
    await expectVideo(v([prompt(), first(url("img_10mb1.png"))], {}), 0);
    await expectVideo(v([prompt(), first(url("img_50mb.png"))], {}), 0);
    await expectVideo(v([prompt(), first(url("img_50mb1.png"))], {}), 1201, "contents[1].url");
  } finally {
    for (const k of ["img_10mb.png", "img_10mb1.png", "img_50mb.png", "img_50mb1.png"]) delete files[k];
  }
});

test("reference video bounds, as MP4 and MOV: pixels 699/700 and 2160/2161, duration 2.9/3.0 and 10.0/10.1 s, 23/24 and 60/61 fps", async () => {
  const cases: Array<[string, number]> = [
    ["700x700_3s_24fps", 0],
    ["699x700_3s_24fps", 1201],
    ["700x699_3s_24fps", 1201],
    ["2160x700_3s_24fps", 0],
    ["2161x700_3s_24fps", 1201],
    ["700x700_2.9s_24fps", 1201],
    ["700x700_10s_24fps", 0],
    ["700x700_10.1s_24fps", 1201],
    ["700x700_3s_23fps", 1201],
    ["700x700_3s_60fps", 0],
    ["700x700_3s_61fps", 1201],
  ];
  for (const [shape, code] of cases) {
    for (const ext of ["mp4", "mov"]) {
      await expectVideo(v([prompt(), feature(url(`vid_${shape}.${ext}`))], {}), code, "contents[1].url");
    }
  }
  await expectVideo(v([prompt(), base(b64("vid_700x700_3s_24fps.mov"))], {}), 0);
  await expectVideo(v([prompt(), feature(b64("img_300x300.png"))], {}), 1201, "contents[1].url");
});

test("reference video size: 200 MB accepted, 200 MB + 1 byte refused", async () => {
  files["vid_200mb.mp4"] = paddedMp4(200 * MB);
  try {
    await expectVideo(v([prompt(), feature(url("vid_200mb.mp4"))], {}), 0);
  } finally {
    delete files["vid_200mb.mp4"];
  }
  files["vid_200mb1.mp4"] = paddedMp4(200 * MB + 1);
  try {
    await expectVideo(v([prompt(), feature(url("vid_200mb1.mp4"))], {}), 1201, "contents[1].url");
  } finally {
    delete files["vid_200mb1.mp4"];
  }
});

test.after(async () => {
  await emu.close();
  await server.close();
});
test.run();
