// Results: real decodable files behind signed, expiring links; tampering and expiry
// (403), deletion after 30 days (404), watermarked copies, group_id, extra output
// types, and billing in cash and unit modes with exact decimal strings.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { probeImage, probeVideo } from "../../src/rules/index.js";
import { Client, imageBody, start, videoBody } from "./harness.js";

const emu = await start({ slots: { video: 100, image: 100 } });
const c = new Client(emu);
test.before.each(() => emu.reset());

const download = async (url: string) => {
  const res = await fetch(url);
  return { status: res.status, bytes: new Uint8Array(await res.arrayBuffer()), type: res.headers.get("content-type") };
};
const finishedVideo = async (body: unknown) => {
  const id = (await c.createVideo(body)).body.data.id;
  emu.advanceClock(60_000);
  return (await c.get(`/tasks?task_ids=${id}`)).body.data[0];
};
const finishedImage = async (body: unknown) => {
  const id = (await c.createImage(body)).body.data.task_id;
  emu.advanceClock(25_000);
  return (await c.get(`/v1/images/omni-image/${id}`)).body.data;
};

test("a succeeded video links an MP4 of the requested duration and aspect ratio", async () => {
  const t = await finishedVideo(videoBody({ settings: { duration: 7, aspect_ratio: "9:16" } }));
  const out = t.outputs[0];
  assert.is(out.duration, "7");
  assert.match(out.url, /^http:\/\/127\.0\.0\.1:\d+\/_files\//);
  const file = await download(out.url);
  assert.is(file.status, 200);
  assert.is(file.type, "video/mp4");
  const info = probeVideo(file.bytes);
  assert.is(info.kind, "video");
  if (info.kind !== "video") return;
  assert.ok(Math.abs(info.durationSec - 7) < 0.1, String(info.durationSec));
  assert.ok(info.height > info.width);
  assert.is(Math.round((info.width / info.height) * 16), 9);
  assert.is(emu.stats().downloads, 1);
  assert.is(emu.stats().bytesServed, file.bytes.length);
});

test("watermark_info enabled adds watermark_url with a visibly different file", async () => {
  const t = await finishedVideo(videoBody({ options: { watermark_info: { enabled: true } } }));
  const out = t.outputs[0];
  assert.type(out.watermark_url, "string");
  const plain = await download(out.url);
  const marked = await download(out.watermark_url);
  assert.is(marked.status, 200);
  assert.ok(Buffer.compare(Buffer.from(plain.bytes), Buffer.from(marked.bytes)) !== 0);
  const unmarked = await finishedVideo(videoBody());
  assert.is(unmarked.outputs[0].watermark_url, undefined);
});

test("image results are PNGs at the requested aspect ratio, watermarked copies differ", async () => {
  const t = await finishedImage(imageBody({ n: 2, aspect_ratio: "4:3", watermark_info: { enabled: true } }));
  const [a, b] = t.task_result.images;
  assert.is(a.index, 0);
  assert.is(b.index, 1);
  const file = await download(a.url);
  assert.is(file.type, "image/png");
  const info = probeImage(file.bytes);
  assert.is(info.kind, "image");
  if (info.kind !== "image") return;
  assert.is(Math.round((info.width / info.height) * 3), 4);
  const wm = await download(a.watermark_url);
  assert.ok(Buffer.compare(Buffer.from(file.bytes), Buffer.from(wm.bytes)) !== 0);
});

test("series images carry group_id in the A2 item shape (A3 product_type image)", async () => {
  const t = await finishedImage(imageBody({ model_name: "kling-v3-omni", aspect_ratio: "1:1", result_type: "series", series_amount: 3 }));
  assert.is(t.task_result.series_images.length, 3);
  const r = await c.post("/tasks", { filters: [{ key: "product_type", values: ["image"] }] });
  const item = r.body.data.result[0];
  assert.is(item.status, "succeeded");
  assert.is(item.outputs.length, 3);
  const groups = new Set(item.outputs.map((o: { group_id: string }) => o.group_id));
  assert.is(groups.size, 1);
  assert.type([...groups][0], "string");
});

test("a tampered link answers 403", async () => {
  const t = await finishedVideo(videoBody());
  const url = new URL(t.outputs[0].url);
  const sig = url.searchParams.get("sig")!;
  url.searchParams.set("sig", (sig[0] === "A" ? "B" : "A") + sig.slice(1));
  assert.is((await download(url.href)).status, 403);
  const other = new URL(t.outputs[0].url);
  other.searchParams.set("expires", String(Number(other.searchParams.get("expires")) + 1000));
  assert.is((await download(other.href)).status, 403);
  const stripped = t.outputs[0].url.split("?")[0];
  assert.is((await download(stripped)).status, 403);
});

test("a link expires after urlTtlMs (403) and a fresh query returns a fresh working link", async () => {
  const t = await finishedVideo(videoBody());
  emu.advanceClock(3_600_000 + 1);
  const old = await download(t.outputs[0].url);
  assert.is(old.status, 403);
  const fresh = (await c.get(`/tasks?task_ids=${t.id}`)).body.data[0];
  assert.is.not(fresh.outputs[0].url, t.outputs[0].url);
  assert.is((await download(fresh.outputs[0].url)).status, 200);
});

test("results older than 30 days are deleted: links answer 404 and the task lists no outputs", async () => {
  const t = await finishedVideo(videoBody());
  const i = await finishedImage(imageBody());
  emu.advanceClock(29 * 86_400_000);
  const stillThere = (await c.get(`/tasks?task_ids=${t.id}`)).body.data[0];
  assert.is((await download(stillThere.outputs[0].url)).status, 200);
  emu.advanceClock(1 * 86_400_000);
  assert.is((await download(stillThere.outputs[0].url)).status, 404);
  const after = (await c.get(`/tasks?task_ids=${t.id}`)).body.data[0];
  assert.is(after.status, "succeeded");
  assert.equal(after.outputs, []);
  const img = (await c.get(`/v1/images/omni-image/${i.task_id}`)).body.data;
  assert.equal(img.task_result.images, []);
  assert.is((await download(i.task_result.images[0].url)).status, 404);
});

test("extraOutputs adds audio, voice and element items with working links", async () => {
  emu.configure({ results: { extraOutputs: true } });
  try {
    const t = await finishedVideo(videoBody());
    assert.equal(t.outputs.map((o: { type: string }) => o.type), ["video", "audio", "voice", "element"]);
    const [, audio, voice, element] = t.outputs;
    assert.is(audio.mp3_duration, "5");
    assert.is((await download(audio.mp3_url)).status, 200);
    const wav = await download(audio.wav_url);
    assert.is(wav.status, 200);
    assert.is(Buffer.from(wav.bytes.subarray(0, 4)).toString(), "RIFF");
    assert.is((await download(voice.url)).status, 200);
    assert.is(voice.owned_by, "kling");
    assert.is(element.element_type, "multi_image_elements");
    assert.is((await download(element.references[0].url)).status, 200);
    assert.is(element.tags[0].id, 1);
  } finally {
    emu.configure({ results: { extraOutputs: false } });
  }
});

test("cash billing: video entry with discounted amount and list price as exact decimals", async () => {
  const t = await finishedVideo(videoBody({ settings: { resolution: "1080p", duration: 10 } }));
  assert.equal(t.billing, [{ charge_type: "cash", cash_type: "balance", amount: "0.80", currency: "USD", list_price: "1.00" }]);
  const i = await finishedImage(imageBody({ n: 3, resolution: "2k" }));
  assert.is(i.final_unit_deduction, "0");
  assert.equal(i.final_balance_deduction, { quota: "0.12", list_price: "0.15" });
});

test("CNY test_balance and price overrides are reported as configured", async () => {
  emu.configure({ billing: { currency: "CNY", cash_type: "test_balance", discount: 0.7, prices: { overrides: { "video/720p/5": "0.33" } } } });
  try {
    const t = await finishedVideo(videoBody());
    assert.equal(t.billing, [{ charge_type: "cash", cash_type: "test_balance", amount: "0.231", currency: "CNY", list_price: "0.33" }]);
  } finally {
    emu.configure({ billing: { currency: "USD", cash_type: "balance", discount: 0.8, prices: { overrides: {} } } });
  }
});

test("unit billing: package_type and units; image final_unit_deduction", async () => {
  emu.configure({ billing: { mode: "unit" } });
  try {
    const t = await finishedVideo(videoBody({ settings: { resolution: "1080p", duration: 5 } }));
    assert.equal(t.billing, [{ charge_type: "unit", amount: "7.5", package_type: "video" }]);
    const i = await finishedImage(imageBody({ model_name: "kling-v3-omni", aspect_ratio: "1:1", n: 2, resolution: "4k" }));
    assert.is(i.final_unit_deduction, "8");
    assert.equal(i.final_balance_deduction, { quota: "0", list_price: "0" });
  } finally {
    emu.configure({ billing: { mode: "cash" } });
  }
});

test("a balance that runs out answers 429 code 1102 and creates nothing", async () => {
  // 720p 5 s costs 0.28 after discount: 1.00 pays for three tasks.
  emu.configure({ billing: { balance: "1.00" } });
  try {
    for (let i = 0; i < 3; i++) assert.is((await c.createVideo(videoBody())).body.code, 0);
    const r = await c.createVideo(videoBody());
    assert.is(r.status, 429);
    assert.is(r.body.code, 1102);
    assert.is(emu.stats().tasks.total, 3);
  } finally {
    emu.configure({ billing: { balance: null } });
  }
});

test("a failed task gives its reserved charge back to the balance", async () => {
  emu.configure({ billing: { balance: "0.28" } });
  try {
    assert.is((await c.createVideo(videoBody({ text: "x [fail]" }))).body.code, 0);
    assert.is((await c.createVideo(videoBody())).body.code, 1102);
    emu.advanceClock(60_000);
    assert.is((await c.createVideo(videoBody())).body.code, 0);
  } finally {
    emu.configure({ billing: { balance: null } });
  }
});

test.after(() => emu.close());
test.run();
