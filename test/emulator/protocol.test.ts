// The envelope, authentication, routing and bad requests, over loopback HTTP.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { request } from "node:http";
import { Client, start, videoBody } from "./harness.js";

const emu = await start({ maxBodyBytes: 64 * 1024, slots: { video: 1000, image: 1000 } });
const c = new Client(emu);

const isEnvelope = (b: Record<string, unknown>) => {
  assert.type(b["code"], "number");
  assert.type(b["message"], "string");
  assert.type(b["request_id"], "string");
  assert.ok((b["request_id"] as string).length > 0);
};

test("a create answers 200 with the envelope {code 0, message, request_id, data}", async () => {
  const r = await c.createVideo(videoBody());
  assert.is(r.status, 200);
  isEnvelope(r.body);
  assert.is(r.body.code, 0);
  assert.equal(Object.keys(r.body).sort(), ["code", "data", "message", "request_id"]);
  assert.equal(Object.keys(r.body.data).sort(), ["create_time", "id", "status", "update_time"]);
  assert.match(r.body.data.id, /^\d+$/);
  assert.is(r.body.data.status, "submitted");
});

test("request ids differ between requests", async () => {
  const a = await c.get("/tasks?task_ids=1");
  const b = await c.get("/tasks?task_ids=1");
  assert.is.not(a.body.request_id, b.body.request_id);
});

test("a missing Authorization header answers 401 code 1001", async () => {
  const res = await fetch(`${emu.url}/tasks?task_ids=1`);
  assert.is(res.status, 401);
  const body = (await res.json()) as any;
  isEnvelope(body);
  assert.is(body.code, 1001);
});

test("a wrong key answers 401 code 1002, and a non-Bearer scheme too", async () => {
  const r = await new Client(emu, "not-the-key").get("/tasks?task_ids=1");
  assert.is(r.status, 401);
  assert.is(r.body.code, 1002);
  const res = await fetch(`${emu.url}/tasks?task_ids=1`, { headers: { authorization: `Basic ${emu.apiKey}` } });
  assert.is(res.status, 401);
  assert.is(((await res.json()) as any).code, 1002);
});

test("an unknown path answers 404 with the envelope (code 1202)", async () => {
  const r = await c.get("/v2/nothing/here");
  assert.is(r.status, 404);
  isEnvelope(r.body);
  assert.is(r.body.code, 1202);
});

test("a known path with the wrong method answers 404 code 1202 (the service's error table) with an Allow header", async () => {
  const r = await c.raw("DELETE", "/tasks");
  assert.is(r.status, 404);
  assert.is(r.body.code, 1202);
  assert.is(r.headers.get("allow"), "GET, POST");
});

test("malformed JSON answers 400 code 1200", async () => {
  const r = await c.raw("POST", "/omni-video/kling-o1", { body: '{"contents": [' });
  assert.is(r.status, 400);
  assert.is(r.body.code, 1200);
  assert.match(r.body.message, "JSON");
});

test("an empty body answers 400 code 1200", async () => {
  const r = await c.raw("POST", "/tasks", { body: "" });
  assert.is(r.status, 400);
  assert.is(r.body.code, 1200);
});

test("a body without Content-Type application/json answers 400 code 1200", async () => {
  const res = await fetch(`${emu.url}/omni-video/kling-o1`, {
    method: "POST",
    headers: { authorization: `Bearer ${emu.apiKey}`, "content-type": "text/plain" },
    body: JSON.stringify(videoBody()),
  });
  assert.is(res.status, 400);
  const body = (await res.json()) as any;
  assert.is(body.code, 1200);
  assert.match(body.message, "Content-Type");
});

test("a body over maxBodyBytes answers 413 code 1201 and the server keeps serving", async () => {
  const huge = JSON.stringify({ ...videoBody(), padding: "x".repeat(200 * 1024) });
  const r = await c.raw("POST", "/omni-video/kling-o1", { body: huge });
  assert.is(r.status, 413);
  assert.is(r.body.code, 1201);
  assert.match(r.body.message, "body");
  const after = await c.createVideo(videoBody());
  assert.is(after.body.code, 0);
});

test("a body far past the limit is cut off without hanging the server", async () => {
  const status = await new Promise<number | string>((resolve) => {
    const req = request(`${emu.url}/omni-video/kling-o1`, {
      method: "POST",
      headers: { authorization: `Bearer ${emu.apiKey}`, "content-type": "application/json" },
    });
    req.on("response", (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on("error", (e) => resolve(e.message));
    const chunk = Buffer.alloc(1024 * 1024, 120);
    let sent = 0;
    const pump = () => {
      while (sent < 40) {
        sent += 1;
        if (!req.write(chunk)) return void req.once("drain", pump);
      }
      req.end();
    };
    pump();
  });
  // Either the 413 arrives or the connection is cut: both bounded, never a hang.
  assert.ok(status === 413 || typeof status === "string", String(status));
  const after = await c.createVideo(videoBody());
  assert.is(after.body.code, 0);
});

test("wrong types in the body never crash the server: each answers 400 with the envelope", async () => {
  const bodies: unknown[] = [
    [],
    null,
    42,
    "text",
    { contents: "not an array" },
    { contents: [null, 1, "x", { type: 5 }] },
    { contents: [{ type: "prompt", text: 12 }], settings: "x", options: [] },
    { contents: [{ type: "first_frame", url: { nested: true } }] },
  ];
  for (const b of bodies) {
    const r = await c.raw("POST", "/omni-video/kling-o1", { body: JSON.stringify(b) });
    assert.is(r.status, 400, JSON.stringify(b));
    assert.ok(r.body.code === 1200 || r.body.code === 1201, `${JSON.stringify(b)} -> ${r.body.code}`);
    isEnvelope(r.body);
  }
  for (const b of [[], null, { prompt: 5 }, { prompt: "x", image_list: "y" }, { prompt: "x", n: "many" }]) {
    const r = await c.raw("POST", "/v1/images/omni-image", { body: JSON.stringify(b) });
    assert.is(r.status, 400, JSON.stringify(b));
  }
  for (const b of [[], 7, { limit: "ten" }, { start_time: "yesterday" }, { filters: "all" }, { cursor: 5 }]) {
    const r = await c.raw("POST", "/tasks", { body: JSON.stringify(b) });
    assert.is(r.status, 400, JSON.stringify(b));
  }
  const ok = await c.createVideo(videoBody());
  assert.is(ok.body.code, 0);
});

test("unknown body fields are ignored (200)", async () => {
  const r = await c.createVideo({ ...videoBody(), surprise: { deep: [1, 2] } });
  assert.is(r.status, 200);
  assert.is(r.body.code, 0);
});

test("a cursor that this emulator did not make answers 400 code 1201 naming cursor", async () => {
  const r = await c.post("/tasks", { cursor: "bm90LWEtY3Vyc29y" });
  assert.is(r.status, 400);
  assert.is(r.body.code, 1201);
  assert.match(r.body.message, "cursor");
});

test("the service name is configurable in the video path", async () => {
  const other = await start({ service: "acme" });
  try {
    const cc = new Client(other);
    assert.is((await cc.post("/omni-video/acme-o1", videoBody())).body.code, 0);
    assert.is((await cc.post("/omni-video/kling-o1", videoBody())).status, 404);
  } finally {
    await other.close();
  }
});

test("a garbage request line is answered 400 and the server stays up", async () => {
  const { connect } = await import("node:net");
  const u = new URL(emu.url);
  const answer = await new Promise<string>((resolve) => {
    const s = connect(Number(u.port), u.hostname, () => s.write("NOT HTTP AT ALL\r\n\r\n"));
    let out = "";
    s.on("data", (d) => (out += d.toString()));
    s.on("close", () => resolve(out));
    s.on("error", () => resolve(out));
  });
  assert.match(answer, "400");
  assert.is((await c.createVideo(videoBody())).body.code, 0);
});

test.after(() => emu.close());
test.run();
