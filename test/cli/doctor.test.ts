// `omnibatch doctor` with the built CLI against the emulator (issue 26, item 5): each line
// it prints (the address down, the key refused, the service's name wrong, the outputs
// unwritable, all well with a manifest), the exit code of the first problem, the key
// never printed, and nothing created (the emulator's create count stays 0).

import { createServer } from "node:net";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { execa } from "execa";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { startEmulator, type RunningEmulator } from "../../src/emulator/Emulator.js";
import { bin, manifestHead, stillsJob, workspace, type Workspace } from "../e2e/runFixture.js";

let emu: RunningEmulator;
/** The emulator's own name for the service: the client's default, so all is well. */
let ownName = "";
const t = suite("omnibatch doctor");

t.before(async () => {
  emu = await startEmulator({ timing: { scale: 0.05 } }, { port: 0 });
  ownName = emu.config.service;
});
t.after(async () => {
  await emu.close();
});

const clips = `  clips:
    kind: video
    matrix:
      mood: [calm, busy]
    prompt: "a {{ mood }} street"
`;

const doctor = (ws: Workspace, args: readonly string[], key: string) =>
  execa("node", [bin, "doctor", ...args], { cwd: ws.dir, reject: false, all: true, timeout: 60_000, env: { OMNIBATCH_API_KEY: key }, extendEnv: false });

/** Nothing that creates a task was sent (nor any other create request). */
const assertNothingCreated = () => {
  const s = emu.stats();
  assert.is(s.tasks.total, 0, "no task exists");
  assert.equal(s.creates, {});
  assert.is((s.requests["video.create"] ?? 0) + (s.requests["image.create"] ?? 0), 0, "no create request reached a create handler");
};

t("all well with a manifest: every line ✓, the plan's first task named, exit 0, nothing created", async () => {
  emu.reset();
  const ws = workspace(manifestHead("doctor-well") + stillsJob(["apple", "boat"]) + clips);
  try {
    const r = await doctor(ws, ["m.yaml", "--base-url", emu.url], emu.apiKey);
    assert.is(r.exitCode, 0, r.all);
    const lines = (r.stdout ?? "").split("\n").filter(Boolean);
    for (const check of ["address", "key", "video", "image", "service name", "outputs", "models", "plan"]) {
      assert.ok(lines.some((l) => l.startsWith(`✓ ${check}: `)), `a ✓ ${check} line in:\n${r.all}`);
    }
    assert.not.match(r.stdout ?? "", /^[✗?] /m);
    assert.match(r.stdout ?? "", `✓ address: ${emu.url} answers`);
    assert.match(r.stdout ?? "", /✓ plan: a run would create 4 task\(s\).*, first: \+ doctor-well-stills-\w+ +stills\/apple/);
    assert.match(r.stdout ?? "", "all well");
    assert.not.match(r.all ?? "", emu.apiKey);
    assertNothingCreated();
  } finally {
    ws.remove();
  }
});

t("the address down (a closed loopback port): ✗ address, exit 5, within seconds", async () => {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  const ws = workspace(manifestHead("doctor-down") + clips);
  try {
    const started = Date.now();
    const r = await doctor(ws, ["--base-url", `http://127.0.0.1:${port}`], "sk-doctor-secret");
    assert.is(r.exitCode, 5, r.all);
    assert.ok(Date.now() - started < 20_000, `took ${Date.now() - started} ms`);
    assert.match(r.stdout ?? "", `✗ address: nothing answers at http://127.0.0.1:${port} (`);
    assert.match(r.stderr ?? "", "first to fix: address:");
    assert.not.match(r.all ?? "", "sk-doctor-secret");
  } finally {
    ws.remove();
  }
});

t("the key refused: ✗ key naming OMNIBATCH_API_KEY, never the key, exit 5, nothing created", async () => {
  emu.reset();
  const ws = workspace(manifestHead("doctor-key") + clips);
  try {
    const r = await doctor(ws, ["--base-url", emu.url], "sk-wrong-doctor-key");
    assert.is(r.exitCode, 5, r.all);
    assert.match(r.stdout ?? "", `✗ key: the service at ${emu.url} refused the API key (HTTP 401, code 1002`);
    assert.match(r.stdout ?? "", "check that OMNIBATCH_API_KEY holds a key of this service");
    assert.not.match(r.all ?? "", "sk-wrong-doctor-key");
    assert.match(r.stderr ?? "", "first to fix: key:");
    assertNothingCreated();
  } finally {
    ws.remove();
  }
});

t("the service's name wrong (the emulator answers under another name): ✗ service name, exit 5, nothing created", async () => {
  emu.reset();
  emu.configure({ service: "other-gateway" });
  const ws = workspace(manifestHead("doctor-name") + clips);
  try {
    const r = await doctor(ws, ["m.yaml", "--base-url", emu.url], emu.apiKey);
    assert.is(r.exitCode, 5, r.all);
    assert.match(r.stdout ?? "", /✗ service name: the service at \S+ has no POST \/omni-video\/[\w.-]+-o1 \(a GET of it answered HTTP 404, code 1202/);
    assert.match(r.stdout ?? "", "check the service's name (--service / OMNIBATCH_SERVICE)");
    // The rest still answers: only the name is wrong.
    assert.match(r.stdout ?? "", "✓ key: ");
    assert.match(r.stdout ?? "", "✓ video: ");
    assert.match(r.stderr ?? "", "first to fix: service name:");
    assert.not.match(r.all ?? "", emu.apiKey);
    assertNothingCreated();
  } finally {
    emu.configure({ service: ownName });
    ws.remove();
  }
});

t("the outputs unwritable (a file where a folder must be): ✗ outputs, exit 2, nothing created", async () => {
  emu.reset();
  const ws = workspace(manifestHead("doctor-out", { outputs: "blocked/out" }) + clips);
  try {
    writeFileSync(join(ws.dir, "blocked"), "a file, not a folder\n");
    const r = await doctor(ws, ["m.yaml", "--base-url", emu.url], emu.apiKey);
    assert.is(r.exitCode, 2, r.all);
    assert.match(r.stdout ?? "", /✗ outputs: the outputs folder \S+blocked\/out cannot be written to/);
    assert.match(r.stderr ?? "", "first to fix: outputs:");
    // --outputs to a folder that can be written: all well again.
    mkdirSync(join(ws.dir, "elsewhere"));
    const fixed = await doctor(ws, ["m.yaml", "--base-url", emu.url, "--outputs", "elsewhere"], emu.apiKey);
    assert.is(fixed.exitCode, 0, fixed.all);
    assert.match(fixed.stdout ?? "", `✓ outputs: ${join(ws.dir, "elsewhere")} can be written`);
    assertNothingCreated();
  } finally {
    ws.remove();
  }
});

t("no key: ✗ configuration, exit 2, nothing sent; an invalid manifest: ✗ manifest at its file:line:col, exit 2", async () => {
  emu.reset();
  const ws = workspace(manifestHead("doctor-config") + clips);
  try {
    const r = await doctor(ws, ["m.yaml", "--base-url", emu.url], "");
    assert.is(r.exitCode, 2, r.all);
    assert.match(r.stdout ?? "", "✗ configuration: OMNIBATCH_API_KEY is not set");
    assert.is(Object.values(emu.stats().requests).reduce((a, b) => a + b, 0), 0, "nothing was sent");
    writeFileSync(ws.manifest, manifestHead("doctor-config") + clips.replace("prompt:", "promt:"));
    const bad = await doctor(ws, ["m.yaml", "--base-url", emu.url], emu.apiKey);
    assert.is(bad.exitCode, 2, bad.all);
    assert.match(bad.stdout ?? "", /✗ manifest: m\.yaml:\d+:\d+: /);
    assert.match(bad.stdout ?? "", "✓ address: ");
    assertNothingCreated();
  } finally {
    ws.remove();
  }
});

t("a service whose Allow header echoes the key: doctor prints no header text, the key never appears", async () => {
  const key = "sk-doctor-echo-0123456789";
  const { createServer: createHttpServer } = await import("node:http");
  const server = createHttpServer((req, res) => {
    if (req.method === "GET" && /omni-video\//.test(req.url ?? "")) {
      res.writeHead(405, { "content-type": "application/json", allow: `POST; seen ${req.headers.authorization ?? ""}` });
      res.end(JSON.stringify({ code: 1202, message: "method not allowed", request_id: "r" }));
      return;
    }
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ code: 0, message: "SUCCEED", request_id: "r", data: [] }));
  });
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
  const port = (server.address() as { port: number }).port;
  const ws = workspace(manifestHead("doctor-echo") + stillsJob(["apple"]));
  try {
    const r = await doctor(ws, ["--base-url", `http://127.0.0.1:${port}`, "--outputs", join(ws.dir, "out")], key);
    assert.match(r.stdout ?? "", /✓ service name: .*its Allow header naming POST/);
    assert.not.match(r.all ?? "", key);
    assert.not.match(r.all ?? "", "seen Bearer");
  } finally {
    server.close();
    ws.remove();
  }
});

t.run();
