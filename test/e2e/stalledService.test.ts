// --max-wait and the first Ctrl-C are honoured while the service stalls (issue 9, item 10):
// against a service that accepts connections and never answers (or answers a byte at a
// time, slow-loris), every wait, retry and request gives way to the deadline and the
// interrupt. The built CLI against a hostile server written here, on loopback.

import { createServer, type Server, type Socket } from "node:net";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { manifestYaml, runCli, workspace } from "./runFixture.js";

const t = suite("omnibatch run: a stalled service");

/** A server that reads requests and never answers (or trickles a header byte by byte). */
const stallingServer = async (mode: "silent" | "trickle"): Promise<{ url: string; close: () => Promise<void>; connections: () => number }> => {
  const sockets = new Set<Socket>();
  let connections = 0;
  const timers = new Set<NodeJS.Timeout>();
  const server: Server = createServer((socket) => {
    connections++;
    sockets.add(socket);
    socket.on("data", () => undefined);
    socket.on("error", () => undefined);
    socket.on("close", () => sockets.delete(socket));
    if (mode === "trickle") {
      const text = "HTTP/1.1 200 OK\r\nX-Slow: ";
      let i = 0;
      const timer = setInterval(() => {
        if (socket.destroyed) return clearInterval(timer);
        socket.write(i < text.length ? text[i]! : "a");
        i++;
      }, 500);
      timers.add(timer);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}`,
    connections: () => connections,
    close: async () => {
      for (const timer of timers) clearInterval(timer);
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
};

for (const mode of ["silent", "trickle"] as const) {
  // 8 s: well inside the first request's 30 s timeout, so the deadline has to cut a request
  // in flight (as 20 s did; the file waited 40 s for it).
  t(`--max-wait 8s against a service that ${mode === "silent" ? "never answers" : "answers a byte every 0.5 s"}: exit 3 within a few seconds of 8 s`, async () => {
    const service = await stallingServer(mode);
    const ws = workspace(manifestYaml(`stall${mode}${Date.now().toString(36)}`, { subjects: 1, moods: 1 }));
    try {
      const started = Date.now();
      // Real-service timing (no time scale): 30 s request timeouts, 8 retries.
      const r = await runCli(ws, ["--base-url", service.url, "--max-wait", "8s", "--quiet"], { OMNIBATCH_API_KEY: "sk-test-stall", OMNIBATCH_TIME_SCALE: "1" });
      const took = (Date.now() - started) / 1000;
      assert.ok(service.connections() > 0, "the run reached the service");
      assert.is(r.exitCode, 3, r.all);
      assert.ok(took >= 7 && took < 15, `exited after ${took.toFixed(1)} s`);
      console.log(`    ${mode}: exit ${r.exitCode} after ${took.toFixed(1)} s`);
    } finally {
      await service.close();
      ws.remove();
    }
  });
}

t("the first SIGINT while the service never answers: exit 3 within a few seconds", async () => {
  const service = await stallingServer("silent");
  const ws = workspace(manifestYaml(`stallint${Date.now().toString(36)}`, { subjects: 1, moods: 1 }));
  try {
    const run = runCli(ws, ["--base-url", service.url, "--quiet"], { OMNIBATCH_API_KEY: "sk-test-stall", OMNIBATCH_TIME_SCALE: "1" });
    const until = Date.now() + 20_000;
    while (service.connections() === 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
    await new Promise((r) => setTimeout(r, 2_000));
    const sent = Date.now();
    run.kill("SIGINT");
    const killer = setTimeout(() => run.kill("SIGKILL"), 30_000);
    const r = await run;
    clearTimeout(killer);
    const took = (Date.now() - sent) / 1000;
    assert.is(r.exitCode, 3, `${r.all}`);
    assert.ok(took < 6, `exited ${took.toFixed(1)} s after SIGINT`);
    console.log(`    SIGINT: exit ${r.exitCode} after ${took.toFixed(1)} s`);
  } finally {
    await service.close();
    ws.remove();
  }
});

t.run();
