// `omnibatch run a.yaml b.yaml` (issue 30 item 2) as a user runs it (the built CLI) against
// the emulator: 40 five-second videos in two manifests share one pool of the account's 5
// video slots, keep them as busy as one run of the 40 does, are never refused a slot
// (1303), and each manifest keeps its own lockfile, results and reports; one invalid
// manifest stops the command (exit 2) before anything is sent for either.

import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execa } from "execa";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { realisticTiming, startEmulator, type RunningEmulator } from "../../src/emulator/Emulator.js";
import { readLockFile } from "../../src/state/readLockFile.js";
import { assertAllResults, bin, manifestHead } from "./runFixture.js";

const SLOTS = 5;
const SCALE = 0.01; // video 1 to 8 minutes: 0.6 to 4.8 s
let emu: RunningEmulator;
const t = suite("omnibatch run with several manifests");

t.before(async () => {
  emu = await startEmulator({ seed: 30, slots: { video: SLOTS, image: SLOTS }, timing: { ...realisticTiming, scale: SCALE } }, { port: 0 });
});
t.after(async () => {
  await emu.close();
});

const clips = (name: string, count: number, outputs: string) =>
  manifestHead(name, { outputs, concurrency: SLOTS }) +
  `  clips:\n    kind: video\n    matrix:\n      i: [${Array.from({ length: count }, (_, i) => i).join(", ")}]\n    prompt: "${name} clip {{ i }}, a slow pan over a harbour"\n`;

const cli = (dir: string, args: readonly string[]) =>
  execa("node", [bin, "run", ...args, "--no-callbacks", "--json"], {
    cwd: dir,
    reject: false,
    all: true,
    extendEnv: false,
    env: { OMNIBATCH_API_KEY: emu.apiKey, OMNIBATCH_BASE_URL: emu.url, OMNIBATCH_TIME_SCALE: String(SCALE), PATH: process.env["PATH"] ?? "" },
    timeout: 240_000,
  });

/** Busy slot-time over the pool's time from the first create to the last end. */
const utilisation = () => {
  const s = emu.stats();
  return s.slots.video.busyMs / (SLOTS * ((s.lastFinishAt ?? 0) - (s.firstCreateAt ?? 0)));
};

t("40 videos in two manifests share the 5 slots: one run's utilisation, no 1303, each lockfile and report its own", async () => {
  const dir = mkdtempSync(join(tmpdir(), "omnibatch-several-"));
  try {
    writeFileSync(join(dir, "all.yaml"), clips("all", 40, "out-all"));
    writeFileSync(join(dir, "a.yaml"), clips("a", 20, "out-a"));
    writeFileSync(join(dir, "b.yaml"), clips("b", 20, "out-b"));
    emu.reset();
    const one = await cli(dir, ["all.yaml"]);
    assert.is(one.exitCode, 0, one.all);
    const alone = utilisation();

    emu.reset();
    const both = await cli(dir, ["a.yaml", "b.yaml"]);
    assert.is(both.exitCode, 0, both.all);
    const shared = utilisation();
    const stats = emu.stats();
    assert.is(stats.rejections["1303"] ?? 0, 0, "the runs never ask for more than the pool");
    assert.ok(stats.slots.video.peak <= SLOTS);
    assert.is(stats.requests["video.create"], 40, "each task created once");
    if (process.env["SHARE_FIGURES"] === "1") process.stdout.write(`\n  utilisation: one run of 40 ${alone.toFixed(3)}, two manifests of 20 ${shared.toFixed(3)}; requests ${JSON.stringify(stats.requests)}\n`);
    // Within noise of one run of the 40 (a loaded machine delays both alike).
    assert.ok(shared >= 0.85 * alone, `utilisation ${shared.toFixed(3)} in two manifests against ${alone.toFixed(3)} in one`);

    // Each manifest its own lockfile, results and reports; --json tags each event with its manifest.
    const events = both.stdout.trim().split("\n").map((l) => JSON.parse(l) as { type: string; manifest?: string; lockfile?: string; exitCode?: number });
    const summaries = events.filter((e) => e.type === "summary");
    assert.equal(summaries.map((e) => e.manifest).sort(), ["a", "b"]);
    assert.ok(events.every((e) => e.manifest === "a" || e.manifest === "b"));
    for (const name of ["a", "b"]) {
      const lock = await assertAllResults({ dir, manifest: join(dir, `${name}.yaml`), lockfile: join(dir, `${name}.lock.json`), outputs: join(dir, `out-${name}`), remove: () => {} });
      assert.is(Object.keys(lock.tasks).length, 20, name);
      assert.ok(Object.values(lock.tasks).every((task) => task.state === "downloaded"));
      assert.ok(readdirSync(join(dir, `out-${name}`)).includes("results.jsonl"), `${name}: its reports`);
      assert.is(summaries.find((e) => e.manifest === name)!.lockfile, join(dir, `${name}.lock.json`));
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

t("one manifest invalid: exit 2 naming it, nothing sent for either, no lockfile written", async () => {
  const dir = mkdtempSync(join(tmpdir(), "omnibatch-several-bad-"));
  try {
    writeFileSync(join(dir, "a.yaml"), clips("a", 3, "out-a"));
    writeFileSync(join(dir, "b.yaml"), clips("b", 3, "out-b").replace("kind: video", "kind: vidoe"));
    emu.reset();
    const r = await execa("node", [bin, "run", "a.yaml", "b.yaml", "--no-callbacks"], {
      cwd: dir,
      reject: false,
      all: true,
      extendEnv: false,
      env: { OMNIBATCH_API_KEY: emu.apiKey, OMNIBATCH_BASE_URL: emu.url, OMNIBATCH_TIME_SCALE: String(SCALE), PATH: process.env["PATH"] ?? "" },
      timeout: 60_000,
    });
    assert.is(r.exitCode, 2, r.all);
    assert.match(r.all ?? "", "b.yaml");
    assert.match(r.all ?? "", "nothing was sent for any of the 2 manifests");
    assert.not.match(r.all ?? "", /\n\s+at /, "no stack trace");
    const requests = Object.values(emu.stats().requests).reduce((a, b) => a + b, 0);
    assert.is(requests, 0, "nothing reached the service");
    assert.not.ok(existsSync(join(dir, "a.lock.json")));
    assert.not.ok(existsSync(join(dir, "b.lock.json")));
    assert.is(await readLockFile(join(dir, "a.lock.json")), undefined);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

t("a flag for one manifest's run with several (--plan, --only, --outputs...) is a usage error: exit 2, nothing sent", async () => {
  const dir = mkdtempSync(join(tmpdir(), "omnibatch-several-flag-"));
  try {
    writeFileSync(join(dir, "a.yaml"), clips("a", 2, "out-a"));
    writeFileSync(join(dir, "b.yaml"), clips("b", 2, "out-b"));
    emu.reset();
    for (const flags of [["--only", "clips"], ["--outputs", "elsewhere"], ["--recreate-lost"]]) {
      const r = await execa("node", [bin, "run", "a.yaml", "b.yaml", ...flags], { cwd: dir, reject: false, all: true, env: { OMNIBATCH_API_KEY: emu.apiKey, OMNIBATCH_BASE_URL: emu.url }, timeout: 60_000 });
      assert.is(r.exitCode, 2, `${flags.join(" ")}: ${r.all}`);
      assert.match(r.all ?? "", "one manifest", flags.join(" "));
    }
    const same = await execa("node", [bin, "run", "a.yaml", "a.yaml"], { cwd: dir, reject: false, all: true, env: { OMNIBATCH_API_KEY: emu.apiKey, OMNIBATCH_BASE_URL: emu.url }, timeout: 60_000 });
    assert.is(same.exitCode, 2, same.all);
    assert.match(same.all ?? "", "named twice");
    assert.is(Object.values(emu.stats().requests).reduce((a, b) => a + b, 0), 0);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

t.run();
