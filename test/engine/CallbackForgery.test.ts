// Callbacks are cues, never truth (issue 9, item 2). Without a webhook secret anyone who
// learns the callback address (here: a forwarding proxy in the test that logs it, as a
// proxy log would) can post what they like. A forged `succeeded` naming foreign result
// links must never make the run fetch those links or record anything from it; a forged
// `failed` must never trigger a paid retry; malformed bodies are dropped with a notice.
// Real emulator over loopback, a real attacker-side HTTP server counting hits.

import { createServer } from "node:http";
import { readFileSync } from "node:fs";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { startEmulator } from "../../src/emulator/Emulator.js";
import { makePolicy } from "../../src/policy/Policy.js";
import type { RunEvent } from "../../src/engine/RunEvent.js";
import { runLoadedManifest } from "../../src/run/runLoadedManifest.js";
import { readLockFile } from "../../src/state/readLockFile.js";
import { tempDir, testManifest } from "./testManifest.js";
import { filesUnder, freePort, listen, readBody } from "./loopback.js";

const t = suite("engine: forged and malformed callbacks");


t("no secret: forged 'succeeded' with foreign links and forged 'failed' change nothing; malformed bodies are dropped with a notice", async () => {
  const tmp = tempDir();
  const emu = await startEmulator({ slots: { video: 4, image: 4 }, timing: { scale: 0.3 } }, { port: 0 });
  // The attacker's file server: any hit on it means the run followed a forged link.
  let evilHits = 0;
  const evil = createServer((req, res) => {
    evilHits++;
    res.writeHead(200, { "content-type": "video/mp4" }).end("EVIL-BYTES");
  });
  const evilPort = await listen(evil);
  const listenPort = await freePort();
  const forged: Array<{ status: number; what: string }> = [];
  const forgedFor = new Set<string>();
  // The proxy forwarding the service's callbacks to the run's listener, and reading them.
  const proxy = createServer(async (req, res) => {
    const body = await readBody(req);
    const token = (req.url ?? "").split("/").at(-1) ?? "";
    const target = `http://127.0.0.1:${listenPort}/omnibatch/cb/${token}`;
    const real = await fetch(target, { method: "POST", headers: { "content-type": "application/json" }, body }).then((r) => r.status);
    res.writeHead(real).end();
    let task: Record<string, unknown>;
    try {
      task = JSON.parse(body) as Record<string, unknown>;
    } catch {
      return;
    }
    const id = String(task["external_id"]);
    if (forgedFor.has(id)) return;
    forgedFor.add(id);
    const post = async (what: string, text: string) =>
      forged.push({ what, status: await fetch(target, { method: "POST", headers: { "content-type": "application/json" }, body: text }).then((r) => r.status) });
    const base = { id: task["id"], external_id: id, create_time: task["create_time"], update_time: Number(task["update_time"]) + 1 };
    // Half of the tasks are said to have succeeded with the attacker's links, half to have failed.
    if (forgedFor.size % 2 === 1) {
      await post("succeeded", JSON.stringify({ ...base, status: "succeeded", message: "", outputs: [{ type: "video", id: "o1", url: `http://127.0.0.1:${evilPort}/steal.mp4`, duration: "5" }], billing: [{ amount: "999", currency: "USD" }] }));
    } else {
      await post("failed", JSON.stringify({ ...base, status: "failed", message: "1301 forged failure EVILMARK" }));
    }
    await post("malformed", JSON.stringify({ ...base, status: "succeeded", create_time: "yesterday" }));
    await post("malformed", "[1, 2, 3]");
    await post("malformed", "{not json");
    await post("malformed", JSON.stringify({ id: 12, status: "done" }));
  });
  const proxyPort = await listen(proxy);
  const events: RunEvent[] = [];
  try {
    const m = testManifest(tmp.dir, { tasks: Array.from({ length: 6 }, (_, i) => ({ job: "clips", kind: "video" as const, prompt: `clip ${i}` })), concurrency: 6, retryFailed: 2 });
    const summary = await runLoadedManifest(m, {
      baseUrl: emu.url,
      policy: makePolicy(0.02),
      reports: true,
      env: { OMNIBATCH_API_KEY: emu.apiKey },
      callbacks: { url: `http://127.0.0.1:${proxyPort}/fwd`, host: "127.0.0.1", port: listenPort },
      onEvent: (e) => events.push(e),
    });
    assert.ok(forged.filter((f) => f.what === "succeeded").length >= 2, `forged succeeded posted: ${JSON.stringify(forged)}`);
    assert.ok(forged.filter((f) => f.what === "failed").length >= 2, `forged failed posted: ${JSON.stringify(forged)}`);
    assert.is(summary.exitCode, 0, JSON.stringify(summary.failures));
    assert.is(evilHits, 0, "the run fetched a link only a forged callback named");
    // Each task created exactly once: no paid retry from a forged failure.
    assert.equal(Object.values(emu.stats().creates), Array(6).fill(1));
    assert.is(emu.stats().tasks.total, 6);
    const lock = (await readLockFile(m.lockfilePath))!;
    assert.ok(Object.values(lock.tasks).every((x) => x.state === "downloaded"));
    // Nothing from the forged bodies was written anywhere: no foreign link, charge, reason or bytes.
    for (const file of filesUnder(tmp.dir)) {
      const text = readFileSync(file).toString("latin1");
      for (const marker of [`:${evilPort}`, "EVIL-BYTES", "EVILMARK", '"999"']) assert.not.ok(text.includes(marker), `${file} holds ${marker}`);
    }
    const notices = events.flatMap((e) => (e.type === "notice" ? [e.message] : []));
    assert.ok(notices.some((n) => n.startsWith("callback dropped:")), `a notice says a callback was dropped: ${notices.join(" | ")}`);
    assert.ok(forged.every((f) => f.status === 204), "the listener answered every post (no crash)");
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
