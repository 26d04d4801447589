// Guarantee: a create worker confirms the run lock before every send, not only the first:
// a downstream create sent again after the service refused its input link (the worker
// fetches fresh upstream links and sends once more) sends nothing once another run holds
// the lock.
//
// Review finding (src/engine/Submitting.ts, fixed there): the resend after a refused
// link went out without confirming the lock again; a run frozen in that window past the
// stale limit, thawed after a takeover, could send one create beside the run that took
// over. Here a proxy in the test forwards everything to the real emulator, refuses the
// first downstream create as the service does when it cannot fetch an input link (1200,
// "could not fetch ... 403"), and hands the lock to "another run" (its owner file) before
// answering. The heartbeat is idle (every 10 minutes), so only the worker's own check can
// stop the resend.
//
// The same for a send the API client repeats on its own (src/api/retry.ts: an answer
// proving nothing was created, 1302 or a refused connection): the client confirms the
// lock before each repeat (found by the helper fixing the above: `withRetry` in
// src/engine/ServiceKinds.ts re-sent without it).

import { writeFileSync, readFileSync } from "node:fs";
import { createServer } from "node:http";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { startEmulator, type RunningEmulator } from "../../src/emulator/Emulator.js";
import { makePolicy } from "../../src/policy/Policy.js";
import { runLoadedManifest } from "../../src/run/runLoadedManifest.js";
import { runLockPathOf } from "../../src/state/RunLock.js";
import { listen, readBody } from "./loopback.js";
import { tempDir, testManifest } from "./testManifest.js";

const t = suite("a create sent again confirms the run lock first");
let emu: RunningEmulator;

t.before(async () => {
  emu = await startEmulator({ timing: { scale: 0.05 } }, { port: 0 });
});
t.after(async () => {
  await emu.close();
});

/**
 * Runs `m` through a proxy to the emulator that answers the first create matching
 * `isCreate` with `refusal` after handing the run lock to "another run" (its owner file),
 * and passes everything else through. The heartbeat is idle (every 10 minutes), so only
 * the create path's own checks can stop a second send. Returns the creates that matched
 * and how the run ended.
 */
const runBehindLockStealingProxy = async (
  m: ReturnType<typeof testManifest>,
  isCreate: (url: string) => boolean,
  refusal: { status: number; code: number; message: string },
) => {
  const owner = join(runLockPathOf(m.lockfilePath), "owner.json");
  let creates = 0;
  const proxy = createServer(async (req, res) => {
    const body = await readBody(req);
    if (req.method === "POST" && isCreate(req.url ?? "")) {
      creates++;
      if (creates === 1) {
        // Another run takes the lock over while this answer is on its way.
        const mine = JSON.parse(readFileSync(owner, "utf8")) as Record<string, unknown>;
        writeFileSync(owner, JSON.stringify({ ...mine, token: "another-run" }));
        const text = JSON.stringify({ code: refusal.code, message: refusal.message, request_id: "proxy-1" });
        res.writeHead(refusal.status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
        res.end(text);
        return;
      }
    }
    const answer = await fetch(`${emu.url}${req.url}`, {
      method: req.method ?? "GET",
      headers: Object.fromEntries(Object.entries(req.headers).filter(([k]) => k !== "host" && k !== "content-length") as [string, string][]),
      ...(body !== "" ? { body } : {}),
    });
    const text = Buffer.from(await answer.arrayBuffer());
    res.writeHead(answer.status, { "content-type": answer.headers.get("content-type") ?? "application/json", "content-length": text.byteLength });
    res.end(text);
  });
  const port = await listen(proxy);
  try {
    const ended = await runLoadedManifest(m, {
      baseUrl: `http://127.0.0.1:${port}`,
      env: { OMNIBATCH_API_KEY: emu.apiKey },
      policy: makePolicy(0.05),
      reports: false,
      callbacks: false,
      maxWaitMs: 30_000,
      lockStore: { heartbeatMs: 600_000 },
    }).then(
      (summary) => ({ summary }),
      (error: unknown) => ({ error }),
    );
    return { creates, ended };
  } finally {
    proxy.closeAllConnections();
    await new Promise<void>((r) => proxy.close(() => r()));
  }
};

const assertStoppedAfterOne = ({ creates, ended }: Awaited<ReturnType<typeof runBehindLockStealingProxy>>) => {
  assert.ok(creates >= 1, "the create was tried");
  assert.is(creates, 1, `creates sent after the takeover: ${creates - 1}`);
  assert.ok("error" in ended, `the run stops with the lock error: ${JSON.stringify(ended)}`);
  assert.match(String((ended.error as Error).message), /taken over by another run/);
};

t("a downstream create refused for its input link, the lock taken over meanwhile: no second create leaves", async () => {
  const tmp = tempDir();
  try {
    const m = testManifest(tmp.dir, { tasks: [{ job: "stills", kind: "image", prompt: "a still" }], downstreamOf: "stills", concurrency: 2 });
    assertStoppedAfterOne(
      await runBehindLockStealingProxy(m, (url) => url.startsWith("/omni-video/"), { status: 400, code: 1200, message: "could not fetch first_frame: 403 Forbidden" }),
    );
  } finally {
    tmp.remove();
  }
});

t("a create answered 1302 (nothing created; the client sends it again), the lock taken over meanwhile: no second create leaves", async () => {
  const tmp = tempDir();
  try {
    const m = testManifest(tmp.dir, { tasks: [{ job: "stills", kind: "image", prompt: "a still" }], concurrency: 1 });
    assertStoppedAfterOne(await runBehindLockStealingProxy(m, (url) => url.includes("/images/"), { status: 429, code: 1302, message: "rate limit exceeded" }));
  } finally {
    tmp.remove();
  }
});

t.run();
