// Tasks over time: each state transition on the emulator clock, the concurrency slots
// and 1303, content-risk failures, and the inspection figures.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { realisticTiming, startEmulator } from "../../src/emulator/Emulator.js";
import { Client, imageBody, inspect, start, videoBody } from "./harness.js";

const emu = await start();
const c = new Client(emu);
test.before.each(() => emu.reset());

const video = async (id: string) => (await c.get(`/tasks?task_ids=${id}`)).body.data[0];
const image = async (id: string) => (await c.get(`/v1/images/omni-image/${id}`)).body.data;

test("a video task moves submitted -> processing -> succeeded as the clock moves", async () => {
  const created = (await c.createVideo(videoBody())).body.data;
  assert.is(created.status, "submitted");
  let t = await video(created.id);
  assert.is(t.status, "submitted");
  assert.equal(t.outputs, []);
  assert.equal(t.billing, []);
  emu.advanceClock(10_000);
  t = await video(created.id);
  assert.is(t.status, "processing");
  assert.ok(t.update_time >= created.create_time + 10_000);
  assert.equal(t.outputs, []);
  emu.advanceClock(50_000);
  t = await video(created.id);
  assert.is(t.status, "succeeded");
  assert.is(t.message, "");
  assert.is(t.outputs.length, 1);
  assert.is(t.outputs[0].type, "video");
  assert.is(t.outputs[0].duration, "5");
  assert.is(t.billing.length, 1);
  assert.is(t.update_time, t.create_time + 60_000);
});

test("an image task moves submitted -> processing -> succeed (spelled succeed)", async () => {
  const created = (await c.createImage(imageBody({ n: 2 }))).body.data;
  assert.is(created.task_status, "submitted");
  assert.equal(Object.keys(created).sort(), ["created_at", "task_id", "task_info", "task_status", "updated_at"]);
  emu.advanceClock(5_000);
  assert.is((await image(created.task_id)).task_status, "processing");
  emu.advanceClock(20_000);
  const done = await image(created.task_id);
  assert.is(done.task_status, "succeed");
  assert.is(done.task_result.result_type, "single");
  assert.is(done.task_result.images.length, 2);
  assert.equal(done.watermark_info, { enabled: false });
  assert.type(done.final_unit_deduction, "string");
  assert.type(done.final_balance_deduction.quota, "string");
});

test("a prompt with the failure marker ends failed with a content-risk message and no charge", async () => {
  const v = (await c.createVideo(videoBody({ text: "a dragon [fail] burns a city" }))).body.data;
  const i = (await c.createImage(imageBody({ prompt: "a cat [fail]" }))).body.data;
  emu.advanceClock(60_000);
  const tv = await video(v.id);
  assert.is(tv.status, "failed");
  assert.match(tv.message, "content-risk");
  assert.equal(tv.billing, []);
  assert.equal(tv.outputs, []);
  const ti = await image(i.task_id);
  assert.is(ti.task_status, "failed");
  assert.match(ti.task_status_msg, "content-risk");
  assert.is(ti.final_balance_deduction, undefined);
  assert.equal(ti.task_result.images, []);
});

test("failure.rate 1 fails every task; rate 0 none", async () => {
  emu.configure({ failure: { rate: 1 } });
  try {
    const v = (await c.createVideo(videoBody())).body.data;
    emu.advanceClock(60_000);
    assert.is((await video(v.id)).status, "failed");
  } finally {
    emu.configure({ failure: { rate: 0 } });
  }
});

test("the sixth video task over 5 slots answers 429 code 1303 and creates nothing", async () => {
  for (let i = 0; i < 5; i++) assert.is((await c.createVideo(videoBody({ external: `q-${i}` }))).body.code, 0);
  const over = await c.createVideo(videoBody({ external: "q-over" }));
  assert.is(over.status, 429);
  assert.is(over.body.code, 1303);
  assert.is(over.body.data, undefined);
  const stats = emu.stats();
  assert.is(stats.tasks.total, 5);
  assert.is(stats.creates["q-over"], undefined);
  assert.equal((await c.get("/tasks?external_task_ids=q-over")).body.data, []);
  assert.is(stats.rejections["1303"], 1);
});

test("a slot is held until the task ends, failures included, then a create succeeds again", async () => {
  for (let i = 0; i < 4; i++) await c.createVideo(videoBody());
  await c.createVideo(videoBody({ text: "will fail [fail]" }));
  assert.is((await c.createVideo(videoBody())).body.code, 1303);
  emu.advanceClock(55_000);
  assert.is((await c.createVideo(videoBody())).body.code, 1303);
  emu.advanceClock(5_000);
  assert.is((await c.createVideo(videoBody())).body.code, 0);
});

test("image slots count n: n=9 fills the 9 slots, then n=1 answers 1303", async () => {
  assert.is((await c.createImage(imageBody({ n: 9 }))).body.code, 0);
  const over = await c.createImage(imageBody({ n: 1 }));
  assert.is(over.status, 429);
  assert.is(over.body.code, 1303);
  // Video slots are separate.
  assert.is((await c.createVideo(videoBody())).body.code, 0);
});

test("series with series_amount 4 holds 4 slots; auto holds the count actually generated (2..9)", async () => {
  const s4 = (await c.createImage(imageBody({ model_name: "kling-v3-omni", aspect_ratio: "1:1", result_type: "series", series_amount: 4 }))).body.data;
  assert.is(emu.stats().slots.image.inUse, 4);
  emu.advanceClock(25_000);
  const done = await image(s4.task_id);
  assert.is(done.task_result.result_type, "series");
  assert.is(done.task_result.series_images.length, 4);
  // As the service's example: the same images in `images` too (test/api/seriesAnswer.test.ts).
  assert.equal(done.task_result.images, done.task_result.series_images);
  const auto = (await c.createImage(imageBody({ model_name: "kling-v3-omni", aspect_ratio: "1:1", result_type: "series", series_amount: "auto" }))).body.data;
  const held = emu.stats().slots.image.inUse;
  assert.ok(held >= 2 && held <= 9, String(held));
  emu.advanceClock(25_000);
  assert.is((await image(auto.task_id)).task_result.series_images.length, held);
});

test("stats count busy slot-time, peak, first create and last finish on the emulator clock", async () => {
  const t0 = emu.now();
  await c.createVideo(videoBody());
  await c.createVideo(videoBody());
  emu.advanceClock(60_000);
  const s = (await inspect(emu, "/_emulator/stats")).body;
  assert.is(s.slots.video.limit, 5);
  assert.is(s.slots.video.inUse, 0);
  assert.is(s.slots.video.peak, 2);
  assert.ok(s.slots.video.busyMs >= 120_000 && s.slots.video.busyMs < 121_000, String(s.slots.video.busyMs));
  assert.ok(s.firstCreateAt >= t0);
  assert.is(s.lastFinishAt - s.firstCreateAt <= 60_100, true);
  assert.equal(s.tasks.byStatus, { submitted: 0, processing: 0, succeeded: 2, failed: 0 });
  assert.is(s.requests["video.create"], 2);
});

test("stats count the tasks whose end a query answer showed (A2, A3, B2, B3), each once, and none before its end", async () => {
  const v1 = (await c.createVideo(videoBody())).body.data;
  const v2 = (await c.createVideo(videoBody())).body.data;
  const i1 = (await c.createImage(imageBody())).body.data;
  await c.createImage(imageBody());
  const answered = () => emu.stats().tasks.endsAnswered;
  assert.is((await c.get(`/tasks?task_ids=${v1.id},${v2.id}`)).status, 200);
  assert.is((await c.get(`/v1/images/omni-image/${i1.task_id}`)).status, 200);
  assert.is(answered(), 0, "shown while in flight: no end seen");
  emu.advanceClock(600_000);
  assert.is(answered(), 0, "ended, but not yet shown by a query");
  await c.get(`/tasks?task_ids=${v1.id}`);
  await c.get(`/tasks?task_ids=${v1.id}`);
  assert.is(answered(), 1, "A2, twice for one task");
  assert.is((await c.post("/tasks", { filters: [{ key: "product_type", values: ["video"] }] })).body.data.count, 2);
  assert.is(answered(), 2, "A3 lists both videos");
  await c.get(`/v1/images/omni-image/${i1.task_id}`);
  assert.is(answered(), 3, "B2");
  assert.is((await c.get("/v1/images/omni-image?pageNum=1&pageSize=30")).body.data.length, 2);
  assert.is(answered(), 4, "B3 lists both images");
  emu.reset();
  assert.is(answered(), 0, "reset forgets it");
});

test("the slots timeline records occupancy changes", async () => {
  await c.createVideo(videoBody());
  await c.createImage(imageBody({ n: 3 }));
  emu.advanceClock(60_000);
  const samples = (await inspect<Array<{ t: number; video: number; image: number }>>(emu, "/_emulator/slots")).body;
  assert.ok(samples.some((s) => s.video === 1));
  assert.ok(samples.some((s) => s.image === 3));
  assert.equal(samples[samples.length - 1]!.video + samples[samples.length - 1]!.image, 0);
});

test("POST /_emulator/clock moves the clock and POST /_emulator/reset forgets every task", async () => {
  const v = (await c.createVideo(videoBody())).body.data;
  const moved = await inspect(emu, "/_emulator/clock", { advanceMs: 60_000 });
  assert.is(moved.status, 200);
  assert.is((await video(v.id)).status, "succeeded");
  const r = await inspect(emu, "/_emulator/reset", {});
  assert.is(r.status, 200);
  assert.is(emu.stats().tasks.total, 0);
  assert.equal((await c.get(`/tasks?task_ids=${v.id}`)).body.data, []);
});

test("POST /_emulator/config changes slots at run time and rejects a bad patch with 400", async () => {
  const ok = await inspect(emu, "/_emulator/config", { patch: { slots: { video: 1 } } });
  assert.is(ok.status, 200);
  await c.createVideo(videoBody());
  assert.is((await c.createVideo(videoBody())).body.code, 1303);
  const bad = await inspect(emu, "/_emulator/config", { patch: { slots: { video: -3 } } });
  assert.is(bad.status, 400);
  emu.configure({ slots: { video: 5 } });
});

test("the same seed replays the same schedule", async () => {
  const a = await start({ seed: 42, timing: { video: { queuedMs: [1000, 9000], processingMs: [1000, 9000] } } });
  const b = await start({ seed: 42, timing: { video: { queuedMs: [1000, 9000], processingMs: [1000, 9000] } } });
  try {
    const times = async (e: typeof a) => {
      const cc = new Client(e);
      const id = (await cc.createVideo(videoBody())).body.data.id;
      e.advanceClock(20_000);
      const t = (await cc.get(`/tasks?task_ids=${id}`)).body.data[0];
      return t.update_time - t.create_time;
    };
    assert.is(await times(a), await times(b));
  } finally {
    await a.close();
    await b.close();
  }
});

test("the realistic preset: videos take 1 to 8 minutes, images 10 to 60 seconds", async () => {
  const real = await startEmulator({ timing: realisticTiming, slots: { video: 50, image: 50 } });
  try {
    const rc = new Client(real);
    const vids = [];
    for (let i = 0; i < 20; i++) vids.push((await rc.createVideo(videoBody())).body.data.id);
    const imgs = [];
    for (let i = 0; i < 20; i++) imgs.push((await rc.createImage(imageBody())).body.data.task_id);
    real.advanceClock(59_000);
    assert.ok((await rc.get(`/tasks?task_ids=${vids.join(",")}`)).body.data.every((t: { status: string }) => t.status !== "succeeded"));
    real.advanceClock(1_000);
    const after1 = await Promise.all(imgs.map(async (id) => (await rc.get(`/v1/images/omni-image/${id}`)).body.data.task_status));
    assert.ok(after1.every((s) => s === "succeed"), after1.join());
    real.advanceClock(7 * 60_000);
    assert.ok((await rc.get(`/tasks?task_ids=${vids.join(",")}`)).body.data.every((t: { status: string }) => t.status === "succeeded"));
  } finally {
    await real.close();
  }
});

test("stats count the client connections open now; a request written just before its client closes is counted once they are closed", async () => {
  const { connect } = await import("node:net");
  const own = await start(); // no other client
  try {
    const url = new URL(own.url);
    assert.is(own.stats().connections, 0);
    const socket = connect(Number(url.port), url.hostname);
    await new Promise<void>((r) => socket.once("connect", () => r()));
    for (let i = 0; i < 200 && own.stats().connections === 0; i++) await new Promise((r) => setTimeout(r, 5));
    assert.is(own.stats().connections, 1, "the open connection is counted");
    // A query's head and the end of its connection, written together: in this process the
    // emulator reads them on a later turn than the one that wrote them.
    socket.end(`GET /tasks?task_ids=7 HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${own.apiKey}\r\n\r\n`);
    socket.resume();
    assert.is(own.stats().requests["video.query"], undefined, "not read yet");
    for (let i = 0; i < 200 && own.stats().connections > 0; i++) await new Promise((r) => setTimeout(r, 5));
    assert.is(own.stats().connections, 0, "closed");
    assert.is(own.stats().requests["video.query"], 1, "counted by then");
    socket.destroy();
  } finally {
    await own.close();
  }
});

test.after(() => emu.close());
test.run();
