// Callbacks as hints: with a loopback service the run listens, each of the service's POSTs
// is a cue to query that task at once (cued queries are batched and spaced), and the
// rhythm's polling slows down; lost or forged callbacks change nothing but speed. Real emulator over loopback; the listener also on its own.

import { suite } from "uvu";
import * as assert from "uvu/assert";
import { startEmulator, type DeepPartial, type EmulatorConfig, type RunningEmulator } from "../../src/emulator/Emulator.js";
import { signWebhook } from "../../src/protocol/signWebhook.js";
import { CallbackListener, type CallbackObservation } from "../../src/callbacks/CallbackListener.js";
import { makePolicy } from "../../src/policy/Policy.js";
import { runLoadedManifest, type RunManifestOptions } from "../../src/run/runLoadedManifest.js";
import { verifyWebhook } from "../../src/protocol/verifyWebhook.js";
import { readLockFile } from "../../src/state/readLockFile.js";
import { tempDir, testManifest } from "./testManifest.js";

const t = suite("engine: callbacks");
const policy = makePolicy(0.01);
const secret = "whsec_dGVzdHNlY3JldHRlc3RzZWNyZXR0ZXN0c2VjcmV0MTI=";
const otherSecret = "whsec_b3RoZXJzZWNyZXRvdGhlcnNlY3JldG90aGVyc2VjcmV0";

const videos = (n: number) => Array.from({ length: n }, (_, i) => ({ job: "clips", kind: "video" as const, prompt: `clip ${i}` }));

const queries = (emu: RunningEmulator) => {
  const r = emu.stats().requests;
  return (r["video.query"] ?? 0) + (r["video.cursor"] ?? 0) + (r["image.get"] ?? 0) + (r["image.list"] ?? 0);
};

/** A video run of `count` tasks at `slots` against a fresh emulator reached by its loopback address. */
const videoRun = async (count: number, emulator: DeepPartial<EmulatorConfig>, options: Partial<RunManifestOptions> = {}, name?: string) => {
  const tmp = tempDir();
  const emu = await startEmulator({ slots: { video: 4, image: 4 }, timing: { scale: 0.1 }, ...emulator }, { port: 0 });
  try {
    const m = testManifest(tmp.dir, { tasks: videos(count), concurrency: 4, ...(name ? { name } : {}) });
    const summary = await runLoadedManifest(m, {
      baseUrl: emu.url,
      policy,
      reports: false,
      ...options,
      env: { OMNIBATCH_API_KEY: emu.apiKey, ...options.env },
    });
    const lock = await readLockFile(m.lockfilePath);
    return { summary, stats: emu.stats(), queries: queries(emu), lock: lock!, planned: m.tasks.map((x) => x.id) };
  } finally {
    await emu.close();
    tmp.remove();
  }
};

t("with callbacks on, 40 video tasks at 4 slots finish with about 1 query per task (the cued ones), each created once", async () => {
  const r = await videoRun(40, {});
  assert.is(r.summary.exitCode, 0, JSON.stringify(r.summary.failures));
  assert.is(r.summary.created, 40);
  assert.equal(Object.values(r.stats.creates), Array(40).fill(1));
  assert.ok(r.stats.callbacks.delivered >= 80, `callbacks delivered: ${r.stats.callbacks.delivered}`);
  assert.ok(r.queries <= 50, `queries: ${r.queries}`);
  console.log(`    40 tasks, 4 slots: ${r.queries} queries, ${r.summary.elapsedMs} ms`);
  assert.ok(Object.values(r.lock.tasks).every((x) => x.state === "downloaded"));
});

t("with callbacks off (--no-callbacks), the same run polls: every task's end is learned from a query answer", async () => {
  const r = await videoRun(12, {}, { callbacks: false });
  assert.is(r.summary.exitCode, 0);
  assert.is(r.stats.callbacks.delivered + r.stats.callbacks.skipped + r.stats.callbacks.failed, 0, "no callback address was sent");
  // Not a count of queries: one query covers every task in flight, so on a slow machine,
  // where ends bunch up, 12 ends took 10 queries (a CI failure of ">= 12"). The emulator
  // counts the tasks whose end an answer showed, however many one query covered.
  assert.is(r.stats.tasks.endsAnswered, 12, `ends shown by a query answer: ${r.stats.tasks.endsAnswered} (queries: ${r.queries})`);
});

t("with most callbacks lost (emulator dropRate 0.7), the run still ends done by polling, each task created once", async () => {
  const r = await videoRun(20, { callbacks: { dropRate: 0.7 } });
  assert.is(r.summary.exitCode, 0, JSON.stringify(r.summary.failures));
  assert.ok(r.stats.callbacks.dropped > 10, `dropped: ${r.stats.callbacks.dropped}`);
  assert.equal(Object.values(r.stats.creates), Array(20).fill(1));
  assert.ok(Object.values(r.lock.tasks).every((x) => x.state === "downloaded"));
});

t("with every callback lost, the run ends done by polling alone", async () => {
  const r = await videoRun(8, { callbacks: { dropRate: 1 } });
  assert.is(r.summary.exitCode, 0);
  assert.is(r.stats.callbacks.delivered, 0);
  assert.ok(Object.values(r.lock.tasks).every((x) => x.state === "downloaded"));
});

t("callbacks signed with the secret in OMNIBATCH_WEBHOOK_SECRET are accepted: about 1 query per task", async () => {
  const r = await videoRun(20, { callbacks: { secret } }, { env: { OMNIBATCH_WEBHOOK_SECRET: secret } });
  assert.is(r.summary.exitCode, 0);
  assert.ok(r.stats.callbacks.delivered >= 40, `delivered: ${r.stats.callbacks.delivered}`);
  assert.is(r.stats.callbacks.failed, 0);
  assert.ok(r.queries <= 25, `queries: ${r.queries}`);
});

t("callbacks signed with another secret are ignored (401): the run ends done by polling", async () => {
  const r = await videoRun(12, { callbacks: { secret: otherSecret, retries: 0 } }, { env: { OMNIBATCH_WEBHOOK_SECRET: secret } });
  assert.is(r.summary.exitCode, 0);
  assert.is(r.stats.callbacks.delivered, 0);
  assert.ok(r.stats.callbacks.failed >= 12, `refused: ${r.stats.callbacks.failed}`);
  assert.ok(Object.values(r.lock.tasks).every((x) => x.state === "downloaded"));
  // Nothing was heard, so every task's end was learned from a query answer: the emulator
  // counts the tasks whose end an answer showed (however many tasks one query covered).
  assert.is(r.stats.tasks.endsAnswered, 12, `ends shown by a query answer: ${r.stats.tasks.endsAnswered} (queries: ${r.queries})`);
});

t("the callback address changes neither the external_task_id nor the request hash", async () => {
  const name = `cbid${Date.now().toString(36)}`;
  const on = await videoRun(6, {}, {}, name);
  const off = await videoRun(6, {}, { callbacks: false }, name);
  assert.ok(on.stats.callbacks.delivered > 0);
  assert.equal(Object.keys(on.stats.creates).sort(), [...on.planned].sort());
  assert.equal(Object.keys(on.stats.creates).sort(), Object.keys(off.stats.creates).sort());
  for (const [id, task] of Object.entries(on.lock.tasks)) assert.is(task.request_hash, off.lock.tasks[id]?.request_hash);
});

t("the listener: a valid signature passes, a forged one, a stale timestamp and a wrong path are refused", async () => {
  const listener = await CallbackListener.start({ secret });
  const seen: CallbackObservation[] = [];
  listener.subscribe((o) => seen.push(o));
  try {
    const body = JSON.stringify({ id: "v1", status: "succeeded", message: "", create_time: 1, update_time: 2, external_id: "x" });
    const post = (url: string, headers: Record<string, string>, text = body) =>
      fetch(url, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: text }).then((r) => r.status);
    const now = Math.floor(Date.now() / 1000);
    const good = signWebhook(secret, "m1", now, body);
    const forged = signWebhook(otherSecret, "m1", now, body);
    assert.is(await post(listener.url, { "webhook-id": "m1", "webhook-timestamp": String(now), "webhook-signature": forged }), 401);
    assert.is(await post(listener.url, { "webhook-id": "m1", "webhook-timestamp": String(now - 600), "webhook-signature": signWebhook(secret, "m1", now - 600, body) }), 401);
    assert.is(await post(listener.url, {}), 401);
    assert.is(await post(listener.url.replace(/[0-9a-f]{32}$/, "0".repeat(32)), { "webhook-id": "m1", "webhook-timestamp": String(now), "webhook-signature": good }), 404);
    assert.is(seen.length, 0);
    // Key rotation: several signatures, any match passes.
    assert.is(await post(listener.url, { "webhook-id": "m1", "webhook-timestamp": String(now), "webhook-signature": `${forged} ${good}` }), 204);
    assert.is(seen.length, 1);
    assert.is(seen[0]?.kind, "video");
    assert.is(await post(listener.url, { "webhook-id": "m2", "webhook-timestamp": String(now), "webhook-signature": signWebhook(secret, "m2", now, "x".repeat(10)) }, "x".repeat(10)), 204);
    assert.is(seen.length, 1, "a body that is no task object is dropped");
    assert.match(listener.url, /^http:\/\/127\.0\.0\.1:\d+\/omnibatch\/cb\/[0-9a-f]{32}$/);
  } finally {
    await listener.close();
  }
});

t("the listener refuses bodies over its size limit (413)", async () => {
  const listener = await CallbackListener.start({ maxBodyBytes: 1000 });
  try {
    const status = await fetch(listener.url, { method: "POST", body: "x".repeat(5000) }).then((r) => r.status, () => 413);
    assert.is(status, 413);
    assert.is(listener.figures.dropped, 1);
  } finally {
    await listener.close();
  }
});

t("verifyWebhook passes the documented test vector and refuses it 6 minutes later", () => {
  const headers = { id: "9876543210", timestamp: "1781080794", signature: "v1,UsKlJP00XoQyOn410NM9xv34sP+Gl0jnOO9Lcpr7NJ4=" };
  const body = '{"id":"1234567890","status":"succeeded","message":"","create_time":1781080778802,"update_time":1781080794151}';
  assert.ok(verifyWebhook(secret, headers, body, 1781080794));
  assert.not.ok(verifyWebhook(secret, headers, body, 1781080794 + 360));
  assert.not.ok(verifyWebhook(secret, headers, `${body} `, 1781080794));
});

t.run();
