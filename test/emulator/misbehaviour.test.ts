// The switches that make the emulator behave like a service at its worst: a visibility
// lag, duplicate external ids (refused, adopted, or a second paid task), a create carried
// out then answered 5xx, one malformed task among good ones, unrequested tasks, stalled
// answers, redirected result links, messages echoing the Authorization header, and the
// per-model capability limits. Each over real HTTP on loopback.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { request } from "node:http";
import { emulatorConfigFromArgs } from "../../src/cli/commands/emulator.js";
import { Client, imageBody, start, videoBody } from "./harness.js";

const emu = await start({ slots: { video: 10_000, image: 10_000 } });
const c = new Client(emu);
const calm = {
  visibilityLagMs: 0,
  duplicateExternalId: "reject-1201" as const,
  errorAfterCreateRate: 0,
  malformedTask: { rate: 0, externalIds: [], kind: "nan-charge" as const },
  unrequestedTaskRate: 0,
  stall: { rate: 0, mode: "never" as const, dripMs: 1_000 },
  resultRedirectTo: "",
  echoAuthorization: false,
  modelLimits: true,
};
test.before.each(() => {
  emu.configure({ faults: calm });
  emu.reset();
});

test("visibilityLagMs: a new task is absent from A2, A3, B2 and B3 until the lag has passed", async () => {
  emu.configure({ faults: { visibilityLagMs: 5_000 } });
  const v = (await c.createVideo(videoBody({ external: "lag-v" }))).body.data;
  const i = (await c.createImage(imageBody({ external_task_id: "lag-i" }))).body.data;
  assert.equal((await c.get(`/tasks?task_ids=${v.id}`)).body.data, []);
  assert.equal((await c.get("/tasks?external_task_ids=lag-v")).body.data, []);
  assert.equal((await c.post("/tasks", { filters: [{ key: "product_type", values: ["video", "image"] }] })).body.data.result, []);
  const b2 = await c.get(`/v1/images/omni-image/${i.task_id}`);
  // The live service's not-found (the emulator's default).
  assert.is(b2.status, 400);
  assert.is(b2.body.code, 1201);
  assert.is(b2.body.message, `Task not found by id/external id: ${i.task_id}`);
  assert.equal((await c.get("/v1/images/omni-image?pageNum=1&pageSize=10")).body.data, []);
  emu.advanceClock(5_000);
  assert.is((await c.get("/tasks?external_task_ids=lag-v")).body.data[0].id, v.id);
  assert.is((await c.get(`/v1/images/omni-image/${i.task_id}`)).body.data.task_id, i.task_id);
  assert.is((await c.get("/v1/images/omni-image?pageNum=1&pageSize=10")).body.data.length, 1);
  assert.is((await c.post("/tasks", { filters: [{ key: "product_type", values: ["video", "image"] }] })).body.data.result.length, 2);
});

test('duplicateExternalId "create-second": a reused id makes a second task, both listed by that id and counted twice', async () => {
  emu.configure({ faults: { duplicateExternalId: "create-second" } });
  const a = await c.createVideo(videoBody({ external: "dup" }));
  const b = await c.createVideo(videoBody({ external: "dup" }));
  assert.is(a.body.code, 0);
  assert.is(b.body.code, 0);
  assert.is.not(a.body.data.id, b.body.data.id);
  assert.is(emu.stats().creates["dup"], 2);
  assert.is(emu.stats().tasks.total, 2);
  const listed = (await c.get("/tasks?external_task_ids=dup")).body.data.map((t: { id: string }) => t.id);
  assert.equal(listed, [a.body.data.id, b.body.data.id]);
});

test('duplicateExternalId "reject-1201" refuses with 1201 naming the task (the earlier wording); "return-existing" answers the same task', async () => {
  emu.configure({ answers: { duplicateMessage: "spec" } });
  const a = await c.createVideo(videoBody({ external: "dup2" }));
  const refused = await c.createVideo(videoBody({ external: "dup2" }));
  assert.is(refused.status, 400);
  assert.is(refused.body.code, 1201);
  assert.match(refused.body.message, a.body.data.id);
  emu.configure({ faults: { duplicateExternalId: "return-existing" } });
  const same = await c.createVideo(videoBody({ external: "dup2" }));
  assert.is(same.body.data.id, a.body.data.id);
  assert.is(emu.stats().creates["dup2"], 1);
  emu.configure({ answers: { duplicateMessage: "live" } });
});

test("errorAfterCreateRate with a visibility lag: answered 500, the task exists but is not visible at first", async () => {
  emu.configure({ faults: { errorAfterCreateRate: 1, visibilityLagMs: 3_000 } });
  const r = await c.createImage(imageBody({ external_task_id: "eac-lag" }));
  assert.is(r.status, 500);
  assert.is(r.body.code, 5000);
  assert.is(emu.stats().creates["eac-lag"], 1);
  const hidden = await c.get("/v1/images/omni-image/eac-lag");
  assert.equal([hidden.status, hidden.body.code, hidden.body.message], [400, 1201, "Task not found by id/external id: eac-lag"]);
  emu.advanceClock(3_000);
  assert.is((await c.get("/v1/images/omni-image/eac-lag")).body.data.task_info.external_task_id, "eac-lag");
});

test("malformedTask by external id: only that item is broken, the others of the answer stay good", async () => {
  emu.configure({ faults: { malformedTask: { externalIds: ["bad"], kind: "huge-charge" } } });
  for (const id of ["good-1", "bad", "good-2"]) await c.createVideo(videoBody({ external: id }));
  emu.advanceClock(60_000);
  const items = (await c.get("/tasks?external_task_ids=good-1,bad,good-2")).body.data as { external_id: string; billing: { amount: unknown }[] }[];
  assert.is(items.length, 3);
  const byId = Object.fromEntries(items.map((t) => [t.external_id, t]));
  assert.is(byId["bad"]!.billing[0]!.amount, "1e309");
  assert.match(String(byId["good-1"]!.billing[0]!.amount), /^\d+\.\d+$/);
  assert.match(String(byId["good-2"]!.billing[0]!.amount), /^\d+\.\d+$/);
  assert.is(emu.stats().faults["malformedTask"], 1);
});

test("malformedTask kinds: negative and NaN charges, null fields, a bad status, a missing id", async () => {
  await c.createImage(imageBody({ external_task_id: "m-img" }));
  emu.advanceClock(60_000);
  const seen: Record<string, Record<string, unknown>> = {};
  for (const kind of ["negative-charge", "nan-charge", "null-message", "bad-status", "missing-id", "number-charge"] as const) {
    emu.configure({ faults: { malformedTask: { externalIds: ["m-img"], kind } } });
    seen[kind] = (await c.get("/v1/images/omni-image/m-img")).body.data;
  }
  assert.is(seen["negative-charge"]!["final_unit_deduction"], "-0.35");
  assert.is(seen["nan-charge"]!["final_unit_deduction"], "NaN");
  assert.is(seen["number-charge"]!["final_unit_deduction"], 0.35);
  assert.is(seen["null-message"]!["task_status_msg"], null);
  assert.is(seen["bad-status"]!["task_status"], "exploded");
  assert.not.ok("task_id" in seen["missing-id"]!);
});

test("unrequestedTaskRate 1: A2 answers carry one task nobody asked for; B2 answers another task", async () => {
  emu.configure({ faults: { unrequestedTaskRate: 1 } });
  const v = (await c.createVideo(videoBody({ external: "asked" }))).body.data;
  const items = (await c.get(`/tasks?task_ids=${v.id}`)).body.data as { id: string; external_id: string }[];
  assert.is(items.length, 2);
  assert.is(items[0]!.id, v.id);
  assert.is.not(items[1]!.id, v.id);
  assert.match(items[1]!.external_id, /^unrequested-/);
  const i = (await c.createImage(imageBody())).body.data;
  const got = (await c.get(`/v1/images/omni-image/${i.task_id}`)).body.data;
  assert.is.not(got.task_id, i.task_id);
});

/** A request with a client-side time limit: the answer, or how it ended. */
const timed = (path: string, limitMs: number): Promise<{ status: number; body: string; ms: number } | { timeout: true; ms: number; headers: boolean }> =>
  new Promise((resolve) => {
    const t0 = Date.now();
    let headers = false;
    const req = request(`${emu.url}${path}`, { agent: false, headers: { authorization: `Bearer ${emu.apiKey}` } });
    const timer = setTimeout(() => {
      req.destroy();
      resolve({ timeout: true, ms: Date.now() - t0, headers });
    }, limitMs);
    req.on("response", (res) => {
      headers = true;
      let body = "";
      res.on("data", (d: Buffer) => (body += d.toString()));
      res.on("end", () => {
        clearTimeout(timer);
        resolve({ status: res.statusCode ?? 0, body, ms: Date.now() - t0 });
      });
      res.on("error", () => undefined);
    });
    req.on("error", () => undefined);
    req.end();
  });

test('stall "never": no answer at all within 1.5 s (the connection stays open)', async () => {
  emu.configure({ faults: { stall: { rate: 1, mode: "never" } } });
  const r = await timed("/tasks?task_ids=1", 1_500);
  assert.ok("timeout" in r, JSON.stringify(r));
  assert.is((r as { headers: boolean }).headers, false);
  assert.is(emu.stats().faults["stall"], 1);
});

test('stall "drip": headers at once, then the body one byte per dripMs', async () => {
  emu.configure({ faults: { stall: { rate: 1, mode: "drip", dripMs: 100 } } });
  const r = await timed("/tasks?task_ids=1", 800);
  assert.ok("timeout" in r && r.headers, JSON.stringify(r));
  emu.configure({ faults: { stall: { rate: 1, mode: "drip", dripMs: 1 } } });
  const done = await timed("/tasks?task_ids=1", 10_000);
  assert.ok("status" in done && JSON.parse(done.body).code === 0, JSON.stringify(done));
});

test('resultRedirectTo "self" answers 302 to the same origin, which then serves the file', async () => {
  emu.configure({ faults: { resultRedirectTo: "self" } });
  const v = (await c.createVideo(videoBody())).body.data;
  emu.advanceClock(60_000);
  const url = (await c.get(`/tasks?task_ids=${v.id}`)).body.data[0].outputs[0].url as string;
  const first = await fetch(url, { redirect: "manual" });
  assert.is(first.status, 302);
  const location = new URL(first.headers.get("location")!, url);
  assert.is(location.origin, new URL(url).origin);
  const second = await fetch(location, { redirect: "manual" });
  assert.is(second.status, 200);
  assert.is(second.headers.get("content-type"), "video/mp4");
});

test("resultRedirectTo a base URL sends result links to that other origin", async () => {
  emu.configure({ faults: { resultRedirectTo: "http://127.0.0.1:9" } });
  const v = (await c.createVideo(videoBody())).body.data;
  emu.advanceClock(60_000);
  const url = (await c.get(`/tasks?task_ids=${v.id}`)).body.data[0].outputs[0].url as string;
  const r = await fetch(url, { redirect: "manual" });
  assert.is(r.status, 302);
  assert.ok(r.headers.get("location")!.startsWith("http://127.0.0.1:9/_files/"), r.headers.get("location")!);
});

test("echoAuthorization: error messages and failed tasks' messages carry the request's Authorization value", async () => {
  emu.configure({ faults: { echoAuthorization: true } });
  const refused = await c.createVideo({ contents: [] });
  assert.ok(refused.body.code !== 0);
  assert.match(refused.body.message, `Bearer ${emu.apiKey}`);
  const v = (await c.createVideo(videoBody({ text: "a storm [fail]" }))).body.data;
  emu.advanceClock(60_000);
  const t = (await c.get(`/tasks?task_ids=${v.id}`)).body.data[0];
  assert.is(t.status, "failed");
  assert.match(t.message, `Bearer ${emu.apiKey}`);
});

test("modelLimits (on by default): kling-image-o1 refuses 4k and series, kling-v3-omni without references refuses auto, with 1201", async () => {
  for (const body of [
    imageBody({ resolution: "4k" }),
    imageBody({ result_type: "series", series_amount: 3 }),
    imageBody({ model_name: "kling-v3-omni", aspect_ratio: "auto" }),
    imageBody({ model_name: "kling-v3-omni" }),
  ]) {
    const r = await c.createImage(body);
    assert.is(r.status, 400, JSON.stringify(body));
    assert.is(r.body.code, 1201);
  }
  assert.is((await c.createImage(imageBody({ model_name: "kling-v3-omni", resolution: "4k", aspect_ratio: "16:9" }))).body.code, 0);
  emu.configure({ faults: { modelLimits: false } });
  assert.is((await c.createImage(imageBody({ resolution: "4k" }))).body.code, 0);
});

test("a bad switch value is refused naming the key", () => {
  assert.throws(() => emu.configure({ faults: { duplicateExternalId: "twice" as never } }), /faults\.duplicateExternalId/);
  assert.throws(() => emu.configure({ faults: { resultRedirectTo: "ftp://x" } }), /faults\.resultRedirectTo/);
  assert.throws(() => emu.configure({ faults: { malformedTask: { kind: "odd" as never } } }), /faults\.malformedTask\.kind/);
});

test("the CLI flags set every switch", async () => {
  const { config } = await emulatorConfigFromArgs({
    values: {
      "visibility-lag-ms": "4000",
      "duplicate-ids": "create-second",
      "error-after-create": "0.2",
      "malformed-task-rate": "0.1",
      "unrequested-task-rate": "0.05",
      "stall-rate": "0.01",
      "stall-mode": "drip",
      "redirect-results": "self",
      "echo-authorization": true,
      "no-model-limits": true,
    },
    positionals: [],
  } as never);
  const f = config.faults;
  assert.equal(
    [f.visibilityLagMs, f.duplicateExternalId, f.errorAfterCreateRate, f.malformedTask.rate, f.unrequestedTaskRate, f.stall.rate, f.stall.mode, f.resultRedirectTo, f.echoAuthorization, f.modelLimits],
    [4000, "create-second", 0.2, 0.1, 0.05, 0.01, "drip", "self", true, false],
  );
});

test.after(() => emu.close());
test.run();
