// The emulator answers as the live service does by default (spec/service-behaviour.md,
// docs/real-service.md): Kling's names, an x-request-id header on every API answer and
// Retry-After on 1302, 1303 and 5xx; each switchable back (`specAnswers`, --spec-answers).
import { test } from "uvu";
import * as assert from "uvu/assert";
import { emulatorConfigFromArgs } from "../../src/cli/commands/emulator.js";
import { defaultEmulatorConfig, specAnswers } from "../../src/emulator/EmulatorConfig.js";
import { Client, imageBody, start, videoBody } from "./harness.js";

test("by default the service is kling: its video path, image models and owned_by; svc paths are no API", async () => {
  assert.is(defaultEmulatorConfig.service, "kling");
  assert.is(defaultEmulatorConfig.maxQueryIds, 20);
  const emu = await start();
  try {
    const c = new Client(emu);
    assert.is((await c.post("/omni-video/kling-o1", videoBody())).body.code, 0);
    const old = await c.post("/omni-video/svc-o1", videoBody());
    assert.equal([old.status, old.body.code], [404, 1202]);
    assert.is((await c.createImage(imageBody({ model_name: "kling-image-o1" }))).body.code, 0);
    assert.is((await c.createImage(imageBody({ model_name: "kling-v3-omni", aspect_ratio: "1:1" }))).body.code, 0);
    const wrong = await c.createImage(imageBody({ model_name: "svc-image-o1" }));
    assert.equal([wrong.status, wrong.body.code], [400, 1201]);
    assert.match(wrong.body.message, "did you mean kling-image-o1?");
  } finally {
    await emu.close();
  }
});

test("every API answer carries x-request-id (its envelope's request_id); Retry-After only on 1302, 1303 and 5xx", async () => {
  const emu = await start({ slots: { video: 1 } });
  try {
    const c = new Client(emu);
    const ok = await c.createVideo(videoBody());
    assert.is(ok.headers.get("x-request-id"), ok.body.request_id);
    assert.is(ok.headers.get("retry-after"), null);
    const invalid = await c.createVideo(videoBody({ settings: { duration: 42 } }));
    assert.is(invalid.body.code, 1201);
    assert.is(invalid.headers.get("x-request-id"), invalid.body.request_id);
    assert.is(invalid.headers.get("retry-after"), null, "a refusal of the request itself: no point retrying");
    const full = await c.createVideo(videoBody());
    assert.is(full.body.code, 1303);
    assert.is(full.headers.get("retry-after"), "1");
    emu.configure({ faults: { rate1302Burst: { every: 1, length: 1 }, endpoints: ["image.list"] } });
    // Every other request is in the burst: one of two in a row is refused.
    const first = await c.get("/v1/images/omni-image?pageNum=1&pageSize=1");
    const limited = first.body.code === 1302 ? first : await c.get("/v1/images/omni-image?pageNum=1&pageSize=1");
    assert.is(limited.body.code, 1302);
    assert.is(limited.headers.get("retry-after"), "1");
    emu.configure({ faults: { rate1302Burst: { every: 0, length: 0 }, code5001Rate: 1 } });
    const down = await c.get("/v1/images/omni-image?pageNum=1&pageSize=1");
    assert.equal([down.status, down.body.code], [503, 5001]);
    assert.is(down.headers.get("retry-after"), "1");
    assert.is(down.headers.get("x-request-id"), down.body.request_id);
    // Scaled with the emulator's timing, as its tasks are.
    emu.configure({ timing: { scale: 0.01 } });
    assert.is((await c.get("/v1/images/omni-image?pageNum=1&pageSize=1")).headers.get("retry-after"), "0.01");
  } finally {
    await emu.close();
  }
});

test("switched back (specAnswers): the name svc, no x-request-id and no Retry-After", async () => {
  const emu = await start({ ...specAnswers, slots: { video: 1 } });
  try {
    const c = new Client(emu);
    const ok = await c.post("/omni-video/svc-o1", videoBody());
    assert.is(ok.body.code, 0);
    assert.is(ok.headers.get("x-request-id"), null);
    const full = await c.post("/omni-video/svc-o1", videoBody());
    assert.is(full.body.code, 1303);
    assert.is(full.headers.get("retry-after"), null);
    assert.is((await c.post("/omni-video/kling-o1", videoBody())).body.code, 1202);
  } finally {
    await emu.close();
  }
});

test("--spec-answers switches every live answer back; single flags and the config file still win", async () => {
  const parse = (values: Record<string, unknown>) => emulatorConfigFromArgs({ values, positionals: [] } as never);
  const live = (await parse({})).config;
  assert.equal([live.service, live.maxQueryIds, live.answers], [
    "kling",
    20,
    { imageNotFound: "400-1201", duplicateMessage: "live", unifiedImages: true, retryAfterSec: 1, requestIdHeader: true },
  ]);
  const before = (await parse({ "spec-answers": true })).config;
  assert.equal([before.service, before.maxQueryIds, before.answers], [
    "svc",
    100,
    { imageNotFound: "404-1203", duplicateMessage: "spec", unifiedImages: false, retryAfterSec: 0, requestIdHeader: false },
  ]);
  const both = (await parse({ "spec-answers": true, realistic: true, service: "acme" })).config;
  assert.is(both.service, "acme");
  assert.is(both.answers.imageNotFound, "404-1203");
  assert.ok(both.timing.video.processingMs[0] >= 50_000, "--realistic kept");
});

test("the answers settings are checked like every other", async () => {
  const emu = await start();
  try {
    assert.throws(() => emu.configure({ answers: { imageNotFound: "410" as never } }), /answers\.imageNotFound/);
    assert.throws(() => emu.configure({ answers: { retryAfterSec: -1 } }), /answers\.retryAfterSec/);
    assert.throws(() => emu.configure({ answers: { unifiedImages: "yes" as never } }), /answers\.unifiedImages/);
    assert.throws(() => emu.configure({ answers: { typo: true } as never }), /answers\.typo is not a setting/);
  } finally {
    await emu.close();
  }
});

test.run();
