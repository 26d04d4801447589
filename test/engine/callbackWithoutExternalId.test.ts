// A callback without an external id (the service console's test callback names none) is
// still a cue when it names a task id the run has in flight: that task is queried soon,
// and the polling rhythm stretches as with any callback. One naming a task id the run
// does not know is dropped, and neither is ever believed (its links, charges and status
// are not taken). Real emulator over loopback; between it and the run a forwarding proxy
// that strips the external id from every callback, and posts forged ones of its own.

import { createServer } from "node:http";
import { readFileSync } from "node:fs";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { parseCallbackBody } from "../../src/callbacks/CallbackListener.js";
import { cuedTask } from "../../src/engine/cueRules.js";
import { startEmulator, type RunningEmulator } from "../../src/emulator/Emulator.js";
import type { RunEvent } from "../../src/engine/RunEvent.js";
import { makePolicy } from "../../src/policy/Policy.js";
import { runLoadedManifest } from "../../src/run/runLoadedManifest.js";
import { readLockFile } from "../../src/state/readLockFile.js";
import { filesUnder, freePort, listen, readBody } from "./loopback.js";
import { tempDir, testManifest } from "./testManifest.js";

const t = suite("engine: callbacks without an external id");

const queries = (emu: RunningEmulator) => {
  const r = emu.stats().requests;
  return (r["video.query"] ?? 0) + (r["video.cursor"] ?? 0) + (r["image.get"] ?? 0) + (r["image.list"] ?? 0);
};

t("the body without external_id is a cue by task id; a malformed one is still refused", () => {
  const video = { id: "811", status: "succeeded", message: "", create_time: 1, update_time: 2 };
  assert.equal(parseCallbackBody(JSON.stringify(video)), { ok: true, observation: { kind: "video", taskId: "811", status: "succeeded" } });
  assert.equal(parseCallbackBody(JSON.stringify({ ...video, external_id: "" })), { ok: true, observation: { kind: "video", taskId: "811", status: "succeeded" } });
  assert.equal(parseCallbackBody(JSON.stringify({ ...video, external_id: "m-1" })), { ok: true, observation: { kind: "video", taskId: "811", externalId: "m-1", status: "succeeded" } });
  assert.is(parseCallbackBody(JSON.stringify({ ...video, external_id: 7 })).ok, false);
  assert.is(parseCallbackBody(JSON.stringify({ ...video, external_id: "a b" })).ok, false);
  const image = { task_id: "912", task_status: "succeed", created_at: 1, updated_at: 2, task_info: {} };
  assert.equal(parseCallbackBody(JSON.stringify(image)), { ok: true, observation: { kind: "image", taskId: "912", status: "succeeded" } });
});

t("cuedTask: by external id when named, else by a task id in flight of the same kind; anything else is no cue", () => {
  type C = { id: string; kind: "video" | "image"; taskId: string | undefined };
  const a: C = { id: "m-a", kind: "video", taskId: "100" };
  const b: C = { id: "m-b", kind: "image", taskId: "200" };
  const c: C = { id: "m-c", kind: "video", taskId: undefined };
  const byId = new Map([a, b, c].map((x) => [x.id, x] as const));
  const find = (cb: { kind: "video" | "image"; taskId: string; externalId?: string }, inflight: C[] = [a, b]) =>
    cuedTask(cb, (id) => byId.get(id), inflight, (x) => x)?.id;
  assert.is(find({ kind: "video", taskId: "100", externalId: "m-a" }), "m-a");
  assert.is(find({ kind: "video", taskId: "100" }), "m-a");
  assert.is(find({ kind: "image", taskId: "200" }), "m-b");
  assert.is(find({ kind: "image", taskId: "100" }), undefined, "another kind");
  assert.is(find({ kind: "video", taskId: "999" }), undefined, "an unknown task id");
  assert.is(find({ kind: "video", taskId: "100" }, []), undefined, "not in flight");
  assert.is(find({ kind: "video", taskId: "200", externalId: "m-b" }), undefined, "named, but of another kind");
  assert.is(find({ kind: "video", taskId: "100", externalId: "m-x" }), undefined, "an external id not ours");
});

t("stripped of their external ids, the service's callbacks still cue their tasks; forged ones with unknown ids change nothing", async () => {
  const tmp = tempDir();
  const emu = await startEmulator({ slots: { video: 4, image: 4 }, timing: { scale: 0.1 } }, { port: 0 });
  let evilHits = 0;
  const evil = createServer((_req, res) => {
    evilHits++;
    res.writeHead(200, { "content-type": "video/mp4" }).end("EVIL-BYTES");
  });
  const evilPort = await listen(evil);
  const listenPort = await freePort();
  const statuses: number[] = [];
  let forwarded = 0;
  const proxy = createServer(async (req, res) => {
    const body = await readBody(req);
    const token = (req.url ?? "").split("/").at(-1) ?? "";
    const target = `http://127.0.0.1:${listenPort}/omnibatch/cb/${token}`;
    const post = async (text: string) =>
      statuses.push(await fetch(target, { method: "POST", headers: { "content-type": "application/json" }, body: text }).then((r) => r.status));
    const task = JSON.parse(body) as Record<string, unknown>;
    const { external_id: _dropped, ...stripped } = task;
    forwarded++;
    await post(JSON.stringify(stripped));
    res.writeHead(204).end();
    // A forged end of a task nobody made, with the attacker's link and a charge.
    await post(JSON.stringify({ ...stripped, id: `9${String(task["id"])}`, status: "succeeded", outputs: [{ type: "video", id: "o", url: `http://127.0.0.1:${evilPort}/x.mp4`, duration: "5" }], billing: [{ amount: "999", currency: "USD" }] }));
    // A forged failure of a real task, without its external id: only a cue to ask about it.
    if (task["status"] === "processing") await post(JSON.stringify({ ...stripped, status: "failed", message: "1301 forged EVILMARK" }));
  });
  const proxyPort = await listen(proxy);
  const events: RunEvent[] = [];
  try {
    const m = testManifest(tmp.dir, { tasks: Array.from({ length: 20 }, (_, i) => ({ job: "clips", kind: "video" as const, prompt: `clip ${i}` })), concurrency: 4, retryFailed: 2 });
    const summary = await runLoadedManifest(m, {
      baseUrl: emu.url,
      policy: makePolicy(0.01),
      reports: true,
      env: { OMNIBATCH_API_KEY: emu.apiKey },
      callbacks: { url: `http://127.0.0.1:${proxyPort}/fwd`, host: "127.0.0.1", port: listenPort },
      onEvent: (e) => events.push(e),
    });
    assert.is(summary.exitCode, 0, JSON.stringify(summary.failures));
    assert.ok(forwarded >= 40, `callbacks forwarded: ${forwarded}`);
    const notices = events.flatMap((e) => (e.type === "notice" ? [e.message] : []));
    assert.equal(notices.filter((n) => n.startsWith("callback dropped")), [], "a callback without an external id was dropped");
    assert.ok(statuses.every((s) => s === 204), `the listener took every post: ${statuses.join(",")}`);
    // Cued, never a storm: a task's real callbacks and the forged failure each cue one
    // query, batched with the cues that arrive within the cue spacing. How many share a
    // batch depends on wall time: 19 queries on a quiet machine, 36 and 39 at load 3 to 14
    // (the bound was 28 and failed there). So the bound is two queries per task and a
    // few of the rhythm's; that callbacks are taken at all is the dropped-notice check above.
    const q = queries(emu);
    console.log(`    20 tasks, 4 slots, callbacks without external ids: ${q} queries`);
    assert.ok(q <= 2 * 20 + 8, `queries: ${q}`);
    // Never believed: each task created once, no forged link fetched, nothing forged written.
    assert.equal(Object.values(emu.stats().creates), Array(20).fill(1));
    assert.is(evilHits, 0);
    const lock = (await readLockFile(m.lockfilePath))!;
    assert.ok(Object.values(lock.tasks).every((x) => x.state === "downloaded"));
    for (const file of filesUnder(tmp.dir)) {
      const text = readFileSync(file).toString("latin1");
      for (const marker of [`:${evilPort}`, "EVIL-BYTES", "EVILMARK", '"999"']) assert.not.ok(text.includes(marker), `${file} holds ${marker}`);
    }
  } finally {
    proxy.closeAllConnections();
    await new Promise<void>((r) => proxy.close(() => r()));
    evil.closeAllConnections();
    await new Promise<void>((r) => evil.close(() => r()));
    await emu.close();
    tmp.remove();
  }
});

t.run();
