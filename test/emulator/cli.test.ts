// `omnibatch emulator` as a user runs it: the built CLI prints its URL and key, serves,
// stops cleanly on SIGINT/SIGTERM (exit 0), and refuses bad settings with exit 2.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { execa, type ResultPromise } from "execa";

const bin = fileURLToPath(new URL("../../dist/cli/bin.js", import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "omnibatch-emulator-cli-"));

const launch = async (args: string[]): Promise<{ child: ResultPromise; url: string; key: string; out: () => string }> => {
  const child = execa("node", [bin, "emulator", "--port", "0", ...args], { reject: false });
  let out = "";
  const found = await new Promise<{ url: string; key: string }>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no URL printed:\n${out}`)), 15_000);
    child.stdout!.on("data", (d: Buffer) => {
      out += d.toString();
      const u = /export OMNIBATCH_BASE_URL=(\S+)/.exec(out);
      const k = /export OMNIBATCH_API_KEY=(\S+)/.exec(out);
      if (u && k) {
        clearTimeout(timer);
        resolve({ url: u[1]!, key: k[1]! });
      }
    });
  });
  return { child, ...found, out: () => out };
};

const create = (url: string, key: string) =>
  fetch(`${url}/omni-video/kling-o1`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ contents: [{ type: "prompt", text: "a boat" }], settings: { aspect_ratio: "16:9" } }),
  }).then((r) => r.json() as Promise<{ code: number }>);

test("prints the base URL, the key and export lines; serves; SIGTERM stops it with exit 0", async () => {
  const e = await launch([]);
  assert.match(e.url, /^http:\/\/127\.0\.0\.1:\d+$/);
  assert.is(e.key, "omni-dev-key");
  assert.match(e.out(), `listening on ${e.url}`);
  assert.is((await create(e.url, e.key)).code, 0);
  e.child.kill("SIGTERM");
  const r = await e.child;
  assert.is(r.exitCode, 0);
});

test("SIGINT also stops it with exit 0; --key sets the accepted key", async () => {
  const e = await launch(["--key", "ci-key-123"]);
  assert.is(e.key, "ci-key-123");
  assert.is((await create(e.url, "omni-dev-key")).code, 1002);
  assert.is((await create(e.url, "ci-key-123")).code, 0);
  e.child.kill("SIGINT");
  assert.is((await e.child).exitCode, 0);
});

test("--config and --elements files set knobs; flags override the file", async () => {
  const config = join(dir, "emu.json");
  writeFileSync(config, JSON.stringify({ slots: { video: 1, image: 3 }, service: "acme" }));
  const elements = join(dir, "elements.json");
  writeFileSync(elements, JSON.stringify([{ id: "123", name: "Zed", element_type: "multi_image_elements" }]));
  const e = await launch(["--config", config, "--elements", elements, "--slots-image", "4"]);
  try {
    const stats = (await (await fetch(`${e.url}/_emulator/stats`)).json()) as { slots: { video: { limit: number }; image: { limit: number } } };
    assert.is(stats.slots.video.limit, 1);
    assert.is(stats.slots.image.limit, 4);
    const r = await fetch(`${e.url}/omni-video/acme-o1`, {
      method: "POST",
      headers: { authorization: `Bearer ${e.key}`, "content-type": "application/json" },
      body: JSON.stringify({ contents: [{ type: "prompt", text: "@z waves" }, { type: "element", element_id: "123", id: "z" }], settings: { aspect_ratio: "1:1" } }),
    });
    assert.is(((await r.json()) as { code: number }).code, 0);
  } finally {
    e.child.kill("SIGTERM");
    await e.child;
  }
});

test("a bad flag value exits 2 with a message naming the flag and no stack trace", async () => {
  const r = await execa("node", [bin, "emulator", "--port", "0", "--slots-video", "many"], { reject: false });
  assert.is(r.exitCode, 2);
  assert.match(r.stderr, "--slots-video");
  assert.not.match(r.stderr, /\n\s+at /);
});

test("a config file with unknown or invalid settings exits 2 naming the file and each problem", async () => {
  const config = join(dir, "bad.json");
  writeFileSync(config, JSON.stringify({ slotz: 3, faults: { http5xxRate: 2 } }));
  const r = await execa("node", [bin, "emulator", "--config", config], { reject: false });
  assert.is(r.exitCode, 2);
  assert.match(r.stderr, "bad.json");
  assert.match(r.stderr, "slotz");
  assert.match(r.stderr, "faults.http5xxRate");
  const broken = join(dir, "broken.json");
  writeFileSync(broken, "{ not json");
  const r2 = await execa("node", [bin, "emulator", "--config", broken], { reject: false });
  assert.is(r2.exitCode, 2);
  assert.match(r2.stderr, "not valid JSON");
});

test("a port in use exits 2 with a message naming the port", async () => {
  const { createServer } = await import("node:net");
  const blocker = createServer();
  await new Promise<void>((r) => blocker.listen(0, "127.0.0.1", r));
  const port = String((blocker.address() as { port: number }).port);
  try {
    const r = await execa("node", [bin, "emulator", "--port", port], { reject: false });
    assert.is(r.exitCode, 2);
    assert.match(r.stderr, `127.0.0.1:${port}`);
    assert.not.match(r.stderr, /\n\s+at /);
  } finally {
    await new Promise((r) => blocker.close(r));
  }
});

test("--help describes the flags", async () => {
  const r = await execa("node", [bin, "emulator", "--help"], { reject: false });
  assert.is(r.exitCode, 0);
  assert.match(r.stdout, "--port");
  assert.match(r.stdout, "--realistic");
});

test.after(() => rmSync(dir, { recursive: true, force: true }));
test.run();
