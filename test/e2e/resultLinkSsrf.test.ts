// A service not on this machine whose answers point result links at this machine (the
// review's ssrf scenario: the emulator's own /_emulator/stats JSON was stored as a result
// file). The built CLI runs against a small hostile proxy on this machine's non-loopback
// address, in front of the emulator, that rewrites every result link of an answer to a
// loopback server holding "local data". Nothing connects to that server, no result file
// holds its data, the run names the refusal and does not end 0.

import { readdirSync, readFileSync, statSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { networkInterfaces } from "node:os";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { startEmulator } from "../../src/emulator/Emulator.js";
import { runCli, workspace } from "./runFixture.js";

const nonLoopback = Object.values(networkInterfaces())
  .flat()
  .find((a) => a !== undefined && a.family === "IPv4" && !a.internal)?.address;

const yaml = `version: 1
name: ssrf
outputs: out
defaults:
  video: { resolution: 720p, aspect_ratio: "16:9", duration: 5 }
jobs:
  clips:
    kind: video
    matrix:
      mood: [calm]
    prompt: "a {{ mood }} street"
`;

const listen = async (server: http.Server, host: string): Promise<number> => {
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return (server.address() as AddressInfo).port;
};

/** Every string under a `url` or `watermark_url` key, replaced. */
const rewrite = (value: unknown, to: string): unknown => {
  if (Array.isArray(value)) return value.map((v) => rewrite(v, to));
  if (value && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, (k === "url" || k === "watermark_url") && typeof v === "string" ? to : rewrite(v, to)]));
  }
  return value;
};

const files = (dir: string): string[] =>
  readdirSync(dir).flatMap((n) => (statSync(join(dir, n)).isDirectory() ? files(join(dir, n)) : [join(dir, n)]));

if (nonLoopback === undefined) {
  console.log("SKIPPED: this machine has no non-loopback IPv4 address to serve the service on");
} else {
  test("result links pointed at this machine by a service that is not on it are refused: nothing connects, nothing stored, the run says so", async () => {
    let secretConnections = 0;
    const secret = http.createServer((_req, res) => res.end('{"secret":"local data"}'));
    secret.on("connection", () => secretConnections++);
    const secretPort = await listen(secret, "127.0.0.1");
    const emu = await startEmulator({ timing: { scale: 0.02 } }, { host: nonLoopback, port: 0 });
    const proxy = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", async () => {
        const body = Buffer.concat(chunks);
        const headers = Object.fromEntries(Object.entries(req.headers).filter(([k]) => k !== "host" && k !== "content-length")) as Record<string, string>;
        const answer = await fetch(`${emu.url}${req.url}`, { method: req.method!, headers, ...(body.length ? { body } : {}) });
        let text = await answer.text();
        if (req.method === "GET" && (answer.headers.get("content-type") ?? "").includes("json")) {
          text = JSON.stringify(rewrite(JSON.parse(text), `http://127.0.0.1:${secretPort}/_emulator/stats`));
        }
        res.writeHead(answer.status, { "content-type": answer.headers.get("content-type") ?? "application/json" }).end(text);
      });
    });
    const proxyPort = await listen(proxy, nonLoopback);
    const ws = workspace(yaml);
    try {
      const r = await runCli(ws, ["--base-url", `http://${nonLoopback}:${proxyPort}`, "--yes", "--no-callbacks", "--max-wait", "40s"], { OMNIBATCH_API_KEY: emu.apiKey });
      assert.is(secretConnections, 0, `the loopback server was connected to:\n${r.all}`);
      for (const f of files(ws.outputs)) assert.not.match(readFileSync(f, "utf8"), "local data", f);
      assert.match(r.all ?? "", "refusing to fetch a result link that leads to 127.0.0.1 (a loopback address)");
      assert.is.not(r.exitCode, 0, r.all);
    } finally {
      ws.remove();
      proxy.closeAllConnections();
      await new Promise((resolve) => proxy.close(resolve));
      secret.closeAllConnections();
      await new Promise((resolve) => secret.close(resolve));
      await emu.close();
    }
  });
}

test.run();
