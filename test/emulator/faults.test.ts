// Every fault switch: server errors, 1302 bursts, resets before and after processing,
// slow answers, truncated downloads, duplicate external ids, unknown ids; and that a
// seed replays the same faults.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { request } from "node:http";
import { Client, start, videoBody } from "./harness.js";

const emu = await start({ slots: { video: 10_000, image: 10_000 } });
const c = new Client(emu);
const quiet = {
  http5xxRate: 0,
  code5000Rate: 0,
  code5001Rate: 0,
  code5002Rate: 0,
  errorAfterCreateRate: 0,
  rate1302Burst: { every: 0, length: 0 },
  resetBeforeRate: 0,
  resetAfterRate: 0,
  slowMs: 0,
  slowRate: 0,
  truncatedDownloadRate: 0,
  endpoints: [],
  duplicateExternalId: "reject-1201" as const,
  unknownIdsAnswer: "empty" as const,
  refuseCreates: 0 as const,
};
test.before.each(() => {
  emu.configure({ faults: quiet, failure: { markerMode: "fail-later", badMedia: "reject-1201" } });
  emu.reset();
});

/** Sends a request with node:http and reports either the answer or the socket error. */
const rawCall = (method: string, path: string, body?: unknown): Promise<{ status: number; json: any } | { error: string }> =>
  new Promise((resolve) => {
    const text = body === undefined ? undefined : JSON.stringify(body);
    const req = request(`${emu.url}${path}`, {
      method,
      agent: false,
      headers: { authorization: `Bearer ${emu.apiKey}`, ...(text ? { "content-type": "application/json" } : {}) },
    });
    req.on("response", (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (d: Buffer) => chunks.push(d));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(Buffer.concat(chunks).toString()) }));
      res.on("error", (e) => resolve({ error: e.message }));
    });
    req.on("error", (e) => resolve({ error: (e as NodeJS.ErrnoException).code ?? e.message }));
    req.end(text);
  });

test("code5000Rate 1: every API request answers 500 code 5000 and nothing is created", async () => {
  emu.configure({ faults: { code5000Rate: 1 } });
  const r = await c.createVideo(videoBody({ external: "f1" }));
  assert.is(r.status, 500);
  assert.is(r.body.code, 5000);
  assert.is(emu.stats().tasks.total, 0);
});

test("code5001Rate answers 503 code 5001; code5002Rate answers 504 code 5002", async () => {
  emu.configure({ faults: { code5001Rate: 1 } });
  let r = await c.get("/tasks?task_ids=1");
  assert.is(r.status, 503);
  assert.is(r.body.code, 5001);
  emu.configure({ faults: { code5001Rate: 0, code5002Rate: 1 } });
  r = await c.get("/tasks?task_ids=1");
  assert.is(r.status, 504);
  assert.is(r.body.code, 5002);
});

test("http5xxRate 1 answers HTTP 500, 502 or 503 with a 5xxx code", async () => {
  emu.configure({ faults: { http5xxRate: 1 } });
  const statuses = new Set<number>();
  for (let i = 0; i < 30; i++) {
    const r = await c.get("/tasks?task_ids=1");
    statuses.add(r.status);
    assert.ok(r.body.code === 5000 || r.body.code === 5001);
  }
  assert.equal([...statuses].sort(), [500, 502, 503]);
});

test("a fault rate of 0.3 fires on about 30% of requests", async () => {
  emu.configure({ faults: { code5000Rate: 0.3 } });
  let fired = 0;
  for (let i = 0; i < 200; i++) if ((await c.get("/tasks?task_ids=1")).body.code === 5000) fired += 1;
  assert.ok(fired > 35 && fired < 85, String(fired));
  assert.is(emu.stats().faults["5000"], fired);
});

test("faults.endpoints limits faults to the named endpoints", async () => {
  emu.configure({ faults: { code5000Rate: 1, endpoints: ["video.create"] } });
  assert.is((await c.get("/tasks?task_ids=1")).body.code, 0);
  assert.is((await c.createVideo(videoBody())).body.code, 5000);
});

test("rate1302Burst {every 3, length 2}: requests 4 and 5 of each 5 answer 429 code 1302", async () => {
  emu.configure({ faults: { rate1302Burst: { every: 3, length: 2 } } });
  const codes: number[] = [];
  for (let i = 0; i < 10; i++) codes.push((await c.get("/tasks?task_ids=1")).body.code);
  assert.equal(codes, [0, 0, 0, 1302, 1302, 0, 0, 0, 1302, 1302]);
});

test("resetBeforeRate 1: the connection is destroyed and nothing is created", async () => {
  emu.configure({ faults: { resetBeforeRate: 1 } });
  const r = await rawCall("POST", "/omni-video/kling-o1", videoBody({ external: "rb" }));
  assert.ok("error" in r, JSON.stringify(r));
  emu.configure({ faults: { resetBeforeRate: 0 } });
  assert.is(emu.stats().tasks.total, 0);
  assert.equal((await c.get("/tasks?external_task_ids=rb")).body.data, []);
});

test("resetAfterRate 1: the client sees a reset but the task was created (look it up by external id)", async () => {
  emu.configure({ faults: { resetAfterRate: 1 } });
  const r = await rawCall("POST", "/omni-video/kling-o1", videoBody({ external: "ra" }));
  assert.ok("error" in r, JSON.stringify(r));
  emu.configure({ faults: { resetAfterRate: 0 } });
  const found = await c.get("/tasks?external_task_ids=ra");
  assert.is(found.body.data.length, 1);
  assert.is(emu.stats().creates["ra"], 1);
});

test("errorAfterCreateRate 1: answers 500 code 5000 but the task exists", async () => {
  emu.configure({ faults: { errorAfterCreateRate: 1 } });
  const r = await c.createVideo(videoBody({ external: "eac" }));
  assert.is(r.status, 500);
  assert.is(r.body.code, 5000);
  assert.is((await c.get("/tasks?external_task_ids=eac")).body.data.length, 1);
});

test("slowRate 1 with slowMs 150 delays answers by at least 150 ms", async () => {
  emu.configure({ faults: { slowRate: 1, slowMs: 150 } });
  const t0 = Date.now();
  const r = await c.get("/tasks?task_ids=1");
  assert.is(r.body.code, 0);
  assert.ok(Date.now() - t0 >= 145, String(Date.now() - t0));
});

test("truncatedDownloadRate 1: a download announces the full length and stops halfway", async () => {
  const id = (await c.createVideo(videoBody())).body.data.id;
  emu.advanceClock(60_000);
  const url = (await c.get(`/tasks?task_ids=${id}`)).body.data[0].outputs[0].url;
  const full = await fetch(url);
  const fullLength = (await full.arrayBuffer()).byteLength;
  emu.configure({ faults: { truncatedDownloadRate: 1 } });
  const res = await fetch(url);
  assert.is(Number(res.headers.get("content-length")), fullLength);
  let failed = false;
  try {
    await res.arrayBuffer();
  } catch {
    failed = true;
  }
  assert.ok(failed, "reading a truncated body fails");
  assert.is(emu.stats().faults["truncatedDownload"], 1);
});

test("duplicate external_task_id answers 400 code 1201 by default, and nothing is created twice", async () => {
  assert.is((await c.createVideo(videoBody({ external: "dup" }))).body.code, 0);
  const again = await c.createVideo(videoBody({ external: "dup" }));
  assert.is(again.status, 400);
  assert.is(again.body.code, 1201);
  // The live service's words by default; the earlier wording switched back.
  assert.is(again.body.message, "External_task_id dup already exists");
  emu.configure({ answers: { duplicateMessage: "spec" } });
  const earlier = await c.createVideo(videoBody({ external: "dup" }));
  assert.equal([earlier.status, earlier.body.code], [400, 1201]);
  assert.match(earlier.body.message, /^options\.external_task_id: 'dup' is already used by task \d+/);
  emu.configure({ answers: { duplicateMessage: "live" } });
  assert.is(emu.stats().creates["dup"], 1);
  assert.is(emu.stats().tasks.total, 1);
});

test("duplicate external_task_id with return-existing answers the existing task", async () => {
  emu.configure({ faults: { duplicateExternalId: "return-existing" } });
  const first = (await c.createVideo(videoBody({ external: "dup2" }))).body.data;
  const again = await c.createVideo(videoBody({ external: "dup2" }));
  assert.is(again.body.code, 0);
  assert.is(again.body.data.id, first.id);
  assert.is(emu.stats().creates["dup2"], 1);
  assert.is(emu.stats().tasks.total, 1);
});

test("unknownIdsAnswer error-1203: A2 with an unknown id answers 404 code 1203", async () => {
  emu.configure({ faults: { unknownIdsAnswer: "error-1203" } });
  const r = await c.get("/tasks?task_ids=424242");
  assert.is(r.status, 404);
  assert.is(r.body.code, 1203);
  emu.configure({ faults: { unknownIdsAnswer: "empty" } });
  assert.equal((await c.get("/tasks?task_ids=424242")).body.data, []);
});

test("the same faults.seed replays the same fault sequence", async () => {
  const run = async () => {
    emu.configure({ faults: { code5000Rate: 0.5, seed: 7 } });
    emu.reset();
    const codes: number[] = [];
    for (let i = 0; i < 40; i++) codes.push((await c.get("/tasks?task_ids=1")).body.code);
    return codes;
  };
  const a = await run();
  const b = await run();
  assert.equal(a, b);
  assert.ok(a.includes(5000) && a.includes(0));
});

test("refuseCreates answers creates with the account code (429 for 1100/1101/1304, 403 for 1103); queries still work", async () => {
  for (const [code, status] of [[1100, 429], [1101, 429], [1103, 403], [1304, 429]] as const) {
    emu.configure({ faults: { refuseCreates: code } });
    const r = await c.createVideo(videoBody());
    assert.is(r.status, status);
    assert.is(r.body.code, code);
  }
  assert.is((await c.get("/tasks?task_ids=1")).body.code, 0);
  assert.is(emu.stats().tasks.total, 0);
});

test("failure.markerMode reject-1301 refuses a flagged prompt at once with 400 code 1301", async () => {
  emu.configure({ failure: { markerMode: "reject-1301" } });
  const r = await c.createVideo(videoBody({ text: "a riot [fail]" }));
  assert.is(r.status, 400);
  assert.is(r.body.code, 1301);
  assert.is(emu.stats().tasks.total, 0);
});

test("failure.badMedia fail-later accepts bad media and the task ends failed with the reason", async () => {
  emu.configure({ failure: { badMedia: "fail-later" } });
  const body = { contents: [{ type: "prompt", text: "x y" }, { type: "first_frame", url: "bm90IGFuIGltYWdl" }], settings: {} };
  const r = await c.createVideo(body);
  assert.is(r.body.code, 0);
  emu.advanceClock(3_600_000);
  const t = (await c.get(`/tasks?task_ids=${r.body.data.id}`)).body.data[0];
  assert.is(t.status, "failed");
  assert.match(t.message, "contents[1].url");
  assert.equal(t.billing, []);
});

test("faults never apply to the inspection endpoints", async () => {
  emu.configure({ faults: { code5000Rate: 1, resetBeforeRate: 1 } });
  const res = await fetch(`${emu.url}/_emulator/stats`);
  assert.is(res.status, 200);
});

test.after(() => emu.close());
test.run();
