// Guarantee: a create leaves only while the run lock is ours at the moment its bytes are
// written, not only at the run lock check before it (Submitting's `confirmLock`). Between
// that check and the socket lie the effect's steps, a kept-alive socket handed over on a
// later tick, a request waiting for a free socket, a new connection's connect (and TLS
// handshake): a run frozen there (SIGSTOP) and thawed after another run took its lock over
// sent one create (test/state/frozenRun.test.ts, once in CI), and a service that accepts
// a reused external id would make a second task. The client now runs the store's check
// once more, synchronously, right before the bytes go to a connected socket
// (OmniClient.ts `LastCheck`, httpTransport.ts `sendRequest`).
//
// Reproduced here without freezing anything: the client has one socket (maxSockets 1), and
// a proxy in front of the real emulator holds the first create's answer, so the second
// create, its lock check passed (the client counted it: that happens after the check),
// waits in the agent for the socket. Then "another run" takes the lock over (its owner
// file) and the proxy lets the first answer go: the socket is handed to the waiting
// create (kept alive), or, when the proxy drops the connection instead, a new one is made
// for it. The heartbeat is idle (every 10 minutes), so only the create path's checks can
// stop it. On the code before, the second create reached the service in both cases.

import { readFileSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { join } from "node:path";
import { Cause, Duration, Effect, Exit, Fiber, Layer, Option, Redacted } from "effect";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { OmniClient } from "../../src/api/OmniClient.js";
import { startEmulator, type RunningEmulator } from "../../src/emulator/Emulator.js";
import { Engine } from "../../src/engine/Engine.js";
import { Downloader } from "../../src/outputs/Downloader.js";
import { makePolicy, RunPolicy } from "../../src/policy/Policy.js";
import { readLockFile } from "../../src/state/readLockFile.js";
import { LockStore } from "../../src/state/LockStore.js";
import { runLockPathOf } from "../../src/state/RunLock.js";
import { listen, readBody } from "./loopback.js";
import { tempDir, testManifest } from "./testManifest.js";

const t = suite("a create's last check, right before its bytes leave");
let emu: RunningEmulator;

t.before(async () => {
  emu = await startEmulator({ timing: { scale: 0.05 } }, { port: 0 });
});
t.after(async () => {
  await emu.close();
});

const forward = async (req: IncomingMessage, body: string, res: ServerResponse) => {
  const answer = await fetch(`${emu.url}${req.url}`, {
    method: req.method ?? "GET",
    headers: Object.fromEntries(Object.entries(req.headers).filter(([k]) => k !== "host" && k !== "content-length" && k !== "connection") as [string, string][]),
    ...(body !== "" ? { body } : {}),
  });
  const text = Buffer.from(await answer.arrayBuffer());
  res.writeHead(answer.status, { "content-type": answer.headers.get("content-type") ?? "application/json", "content-length": text.byteLength });
  res.end(text);
};

/**
 * Runs two video tasks (two create workers) through a proxy that holds the first create,
 * takes the lock over once the client has counted the second create (its check passed,
 * it waits for the one socket), then releases the first: answered (`release: "answer"`,
 * the socket handed on) or its connection destroyed (`"drop"`, a new connection made for
 * the waiting one). Returns the creates the proxy received and how the run ended.
 */
const runWithHeldSocket = async (release: "answer" | "drop") => {
  const tmp = tempDir();
  const m = testManifest(tmp.dir, { concurrency: 2, tasks: [0, 1].map((i) => ({ job: "clips", kind: "video" as const, prompt: `clip ${i} ${release}` })) });
  let creates = 0;
  let releaseFirst: (() => void) | undefined;
  let proxyHeld: () => void = () => undefined;
  const firstHeld = new Promise<void>((held) => {
    proxyHeld = held;
  });
  const proxy = createServer(async (req, res) => {
    const body = await readBody(req);
    if (req.method === "POST" && (req.url ?? "").startsWith("/omni-video/")) {
      creates++;
      if (creates === 1) {
        await new Promise<void>((go) => {
          releaseFirst = go;
          proxyHeld();
        });
        if (release === "drop") {
          req.socket.destroy();
          return;
        }
      }
    }
    await forward(req, body, res);
  });
  const port = await listen(proxy);
  const clientLayer = OmniClient.layer({ baseUrl: `http://127.0.0.1:${port}`, apiKey: Redacted.make(emu.apiKey), maxSockets: 1 });
  const policyLayer = RunPolicy.layer(makePolicy(0.05));
  const storeLayer = LockStore.layer(m.lockfilePath, m.name, { heartbeatMs: 600_000 });
  const downloaderLayer = Downloader.layer(m.outputsDir).pipe(Layer.provide(Layer.merge(clientLayer, policyLayer)));
  const engineLayer = Engine.layer.pipe(Layer.provideMerge(Layer.mergeAll(clientLayer, policyLayer, storeLayer, downloaderLayer)));
  const program = Effect.gen(function* () {
    const engine = yield* Engine;
    const client = yield* OmniClient;
    const run = yield* Effect.fork(engine.run({ manifest: m, maxWaitMs: 30_000 }));
    yield* Effect.promise(() => firstHeld);
    // The second create's count is taken after its lock check, as it is handed to the
    // transport: from here it waits for the one socket the first create holds.
    const sent = () => Effect.map(client.stats, (s) => s.requests["createVideo"] ?? 0);
    for (let i = 0; i < 2_000 && (yield* sent()) < 2; i++) yield* Effect.sleep(Duration.millis(5));
    const handedOver = yield* sent();
    // Another run takes the lock over: its owner file now names another token.
    const owner = join(runLockPathOf(m.lockfilePath), "owner.json");
    writeFileSync(owner, JSON.stringify({ ...(JSON.parse(readFileSync(owner, "utf8")) as object), token: "another-run" }));
    releaseFirst!();
    const ended = yield* Fiber.await(run);
    return { handedOver, ended };
  });
  try {
    const { handedOver, ended } = await Effect.runPromise(Effect.provide(program, engineLayer));
    return { creates, handedOver, ended, lock: await readLockFile(m.lockfilePath) };
  } finally {
    proxy.closeAllConnections();
    await new Promise<void>((r) => proxy.close(() => r()));
    tmp.remove();
  }
};

for (const release of ["answer", "drop"] as const) {
  const how = release === "answer" ? "handed the kept-alive socket" : "given a new connection";
  t(`a create waiting for its socket after its lock check, the lock taken over meanwhile, then ${how}: it is never sent, and the run stops with the lock error`, async () => {
    const { creates, handedOver, ended, lock } = await runWithHeldSocket(release);
    assert.is(handedOver, 2, "the second create passed its lock check and was handed to the transport");
    assert.is(creates, 1, `creates that reached the service after the takeover: ${creates - 1}`);
    const error = Exit.isFailure(ended) ? Option.getOrUndefined(Cause.failureOption(ended.cause)) : undefined;
    assert.ok(error !== undefined, `the run failed: ${String(ended)}`);
    assert.match(error._tag, /^(RunLockLost|LockfileWriteAfterSend)$/);
    assert.match(error.message, /taken over by another run/);
    // The withheld create stays `submitting`: the next run looks it up before sending it.
    assert.ok(lock !== undefined && Object.values(lock.tasks).every((task) => task.state !== "planned"), JSON.stringify(lock?.tasks));
  });
}

t.run();
