// Callbacks: the bare task object POSTed on every status change, in order, signed
// Standard-Webhooks style (checked with an independent verifier that itself passes the
// documented vector), retried with backoff, loopback targets only.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createHmac } from "node:crypto";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Client, imageBody, start, videoBody } from "./harness.js";

const secret = "whsec_dGVzdHNlY3JldHRlc3RzZWNyZXR0ZXN0c2VjcmV0MTI=";

/** Written from the documentation, independently of the emulator's signWebhook. */
const verify = (headers: Record<string, string | undefined>, body: string): boolean => {
  const id = headers["webhook-id"];
  const ts = headers["webhook-timestamp"];
  const sigs = headers["webhook-signature"];
  if (!id || !ts || !sigs) return false;
  if (Math.abs(Date.now() / 1000 - Number(ts)) > 300) return false;
  const key = Buffer.from(secret.slice("whsec_".length), "base64");
  const want = createHmac("sha256", key).update(`${id}.${ts}.${body}`).digest("base64");
  return sigs.split(" ").some((s) => s === `v1,${want}`);
};

interface Hit {
  path: string;
  headers: Record<string, string | undefined>;
  body: string;
}
const hits: Hit[] = [];
let failuresLeft = 0;
const receiver = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on("data", (d: Buffer) => chunks.push(d));
  req.on("end", () => {
    hits.push({ path: req.url ?? "", headers: req.headers as Record<string, string | undefined>, body: Buffer.concat(chunks).toString() });
    if (failuresLeft > 0) {
      failuresLeft -= 1;
      res.writeHead(500).end();
    } else res.writeHead(204).end();
  });
});
await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", r));
const hook = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;

const emu = await start({ callbacks: { secret, backoffMs: 20 } });
const c = new Client(emu);
test.before.each(() => {
  emu.reset();
  hits.length = 0;
  failuresLeft = 0;
});

const waitFor = async (pred: () => boolean, ms = 3000) => {
  const until = Date.now() + ms;
  while (!pred() && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
  assert.ok(pred(), "condition not reached in time");
};

test("the verifier used here accepts the documented test vector", () => {
  const body = '{"id":"1234567890","status":"succeeded","message":"","create_time":1781080778802,"update_time":1781080794151}';
  const key = Buffer.from(secret.slice(6), "base64");
  assert.is(`v1,${createHmac("sha256", key).update(`9876543210.1781080794.${body}`).digest("base64")}`, "v1,UsKlJP00XoQyOn410NM9xv34sP+Gl0jnOO9Lcpr7NJ4=");
});

test("a video task posts submitted, processing and succeeded to its callback, each the bare A2 item, signed", async () => {
  const id = (await c.createVideo(videoBody({ external: "cb-1", options: { callback_url: `${hook}/video` } }))).body.data.id;
  emu.advanceClock(10_000);
  emu.advanceClock(50_000);
  await waitFor(() => hits.length === 3);
  const bodies = hits.map((h) => JSON.parse(h.body));
  assert.equal(bodies.map((b) => b.status), ["submitted", "processing", "succeeded"]);
  for (const b of bodies) {
    assert.is(b.id, id);
    assert.is(b.external_id, "cb-1");
    assert.is(b.code, undefined, "no envelope");
  }
  assert.is(bodies[2].outputs.length, 1);
  assert.is(bodies[2].billing.length, 1);
  for (const h of hits) {
    assert.is(h.path, "/video");
    assert.is(h.headers["content-type"], "application/json");
    assert.ok(verify(h.headers, h.body), "signature verifies");
  }
  assert.is(new Set(hits.map((h) => h.headers["webhook-id"])).size, 3);
});

test("an image task posts the image task shape, ending with task_status succeed", async () => {
  const id = (await c.createImage(imageBody({ callback_url: `${hook}/image` }))).body.data.task_id;
  emu.advanceClock(25_000);
  await waitFor(() => hits.length === 3);
  const bodies = hits.map((h) => JSON.parse(h.body));
  assert.equal(bodies.map((b) => b.task_status), ["submitted", "processing", "succeed"]);
  assert.is(bodies[2].task_id, id);
  assert.is(bodies[2].task_result.images.length, 1);
});

test("a failed task's last callback carries the failure reason", async () => {
  await c.createVideo(videoBody({ text: "boom [fail]", options: { callback_url: hook } }));
  emu.advanceClock(60_000);
  await waitFor(() => hits.length === 3);
  const last = JSON.parse(hits[2]!.body);
  assert.is(last.status, "failed");
  assert.match(last.message, "content-risk");
});

test("a tampered body does not verify", async () => {
  await c.createVideo(videoBody({ options: { callback_url: hook } }));
  await waitFor(() => hits.length === 1);
  assert.not.ok(verify(hits[0]!.headers, hits[0]!.body.replace("submitted", "succeeded")));
});

test("without a secret callbacks carry no signature headers", async () => {
  emu.configure({ callbacks: { secret: null } });
  try {
    await c.createVideo(videoBody({ options: { callback_url: hook } }));
    await waitFor(() => hits.length === 1);
    assert.is(hits[0]!.headers["webhook-signature"], undefined);
  } finally {
    emu.configure({ callbacks: { secret } });
  }
});

test("a failing receiver gets the same message again with backoff until it answers 2xx", async () => {
  failuresLeft = 2;
  await c.createVideo(videoBody({ options: { callback_url: hook } }));
  await waitFor(() => hits.length === 3);
  assert.is(new Set(hits.map((h) => h.headers["webhook-id"])).size, 1);
  assert.ok(hits.every((h) => verify(h.headers, h.body)));
  await waitFor(() => emu.stats().callbacks.delivered === 1);
  assert.is(emu.stats().callbacks.attempts, 3);
});

test("a receiver failing every retry is given up after 1 + retries attempts", async () => {
  failuresLeft = 100;
  await c.createVideo(videoBody({ options: { callback_url: hook } }));
  await waitFor(() => emu.stats().callbacks.failed === 1);
  assert.is(hits.length, 4);
});

test("non-loopback callback addresses are not called unless allowed", async () => {
  await c.createVideo(videoBody({ options: { callback_url: "http://callbacks.example.invalid/hook" } }));
  assert.is(emu.stats().callbacks.skipped, 1);
  assert.is(emu.stats().callbacks.attempts, 0);
});

test.after(async () => {
  await emu.close();
  receiver.closeAllConnections();
  await new Promise((r) => receiver.close(r));
});
test.run();
