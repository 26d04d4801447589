// `omnibatch run a.yaml b.yaml` where the two manifests ask for some of the same requests
// (issue 31): each request is paid for once. Against the emulator over loopback HTTP,
// counting its creates per request (the external ids it was sent, grouped by the request
// hash the lockfiles record for them): the shared stills are created once, by the manifest
// named first, and the other, started after it, reuses them (recorded `reused_from` that manifest's lockfile,
// its files there with their recorded sha256); the requests of one manifest only are
// created once each. Not a git repository: the lockfiles of this run are not committed
// anywhere, so only the run itself can tell one manifest of the other's results.

import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execa } from "execa";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { startEmulator, type RunningEmulator } from "../../src/emulator/Emulator.js";
import { readLockFile } from "../../src/state/readLockFile.js";
import { bin, manifestHead, stillsJob } from "./runFixture.js";

let emu: RunningEmulator;
const t = suite("several manifests sharing requests pay once");

t.before(async () => {
  emu = await startEmulator({ seed: 31 }, { port: 0 });
});
t.after(async () => {
  await emu.close();
});

const run = (dir: string, args: readonly string[]) =>
  execa("node", [bin, "run", ...args, "--no-callbacks", "--json"], {
    cwd: dir,
    reject: false,
    all: true,
    extendEnv: false,
    env: { OMNIBATCH_API_KEY: emu.apiKey, OMNIBATCH_BASE_URL: emu.url, OMNIBATCH_TIME_SCALE: "0.01", PATH: process.env["PATH"] ?? "" },
    timeout: 120_000,
  });

const sha = (file: string) => createHash("sha256").update(readFileSync(file)).digest("hex");

t("a and b share two stills: each request is created once at the service; b starts after a and reuses a's, its files verified", async () => {
  const dir = mkdtempSync(join(tmpdir(), "omnibatch-several-share-"));
  try {
    writeFileSync(join(dir, "a.yaml"), manifestHead("a", { outputs: "out-a" }) + stillsJob(["mug", "lamp", "chair"]));
    writeFileSync(join(dir, "b.yaml"), manifestHead("b", { outputs: "out-b" }) + stillsJob(["mug", "lamp", "vase"]));
    emu.reset();
    const both = await run(dir, ["a.yaml", "b.yaml"]);
    assert.is(both.exitCode, 0, both.all);
    const a = (await readLockFile(join(dir, "a.lock.json")))!;
    const b = (await readLockFile(join(dir, "b.lock.json")))!;
    assert.is(Object.keys(a.tasks).length, 3);
    assert.is(Object.keys(b.tasks).length, 3);
    // Creates at the service per request: the external ids it was sent, by the request hash recorded for them.
    const hashOf = new Map<string, string>();
    for (const lock of [a, b]) for (const [id, x] of Object.entries(lock.tasks)) hashOf.set(id, x.request_hash);
    const perRequest = new Map<string, number>();
    for (const [id, n] of Object.entries(emu.stats().creates)) {
      const hash = hashOf.get(id);
      assert.ok(hash, `the service was sent ${id}, which no lockfile records`);
      perRequest.set(hash, (perRequest.get(hash) ?? 0) + n);
    }
    assert.is(perRequest.size, 4, "mug, lamp, chair, vase: four requests");
    for (const [hash, n] of perRequest) assert.is(n, 1, `request ${hash.slice(0, 12)} created ${n} times`);
    // The shared two: a (first named) pays, b starts after it (and says so) and reuses them from a's lockfile.
    const notices = both.stdout.split("\n").filter((l) => l.includes('"type":"notice"') && l.includes("starts after")).map((l) => JSON.parse(l) as { manifest: string; message: string });
    assert.equal(notices.map((n) => n.manifest), ["b"]);
    assert.match(notices[0]!.message, /^starts after \S*a\.yaml: they ask for some of the same requests/);
    const shared = [...perRequest.keys()].filter((h) => Object.values(a.tasks).some((x) => x.request_hash === h) && Object.values(b.tasks).some((x) => x.request_hash === h));
    assert.is(shared.length, 2);
    assert.ok(Object.values(a.tasks).every((x) => x.reused_from === undefined), "a created its three");
    for (const h of shared) {
      const copy = Object.values(b.tasks).find((x) => x.request_hash === h)!;
      assert.is(copy.reused_from?.lockfile, "a.lock.json");
      assert.ok(a.tasks[copy.reused_from!.id], "its source is in a's lockfile");
      assert.equal(copy.billing, [], "no charge of its own");
      for (const o of copy.outputs.filter((o) => o.path)) assert.is(sha(join(dir, "out-b", o.path!)), o.sha256, o.path);
    }
    assert.is(Object.values(b.tasks).filter((x) => x.reused_from === undefined).length, 1, "b created the vase only");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

t.run();
