// Found by review, on what the settled fast path must not change for runs that do NOT
// take it, through the built CLI against the emulator over loopback (each was so once):
//
// 1. On a terminal, run.ts now makes its Progress (a live block redrawn every 150 ms)
//    before the spend question, whenever the fast path may be tried (any plain run, with
//    or without a lockfile): the block is drawn over "Continue? [y/N]" and its
//    cursor-up/clear erases the question while the run waits for the answer.
// 2. A rerun with nothing to do now rewrites the committed lockfile's header (the stamp:
//    absolute paths of this machine, the UTC day, the replay): the file an older omnibatch
//    (main) reads as damaged ("unknown property 'settled'", exit 2, "move it aside"), a
//    diff in git after a no-op run, and, from another checkout path or another day, a new
//    line 1 each time (a merge conflict on line 1 between any two people who rerun).

import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execa } from "execa";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { startEmulator, type RunningEmulator } from "../../src/emulator/Emulator.js";
import { bin } from "./runFixture.js";

let emu: RunningEmulator;
const t = suite("settled fast path: side effects on runs that do not take it");

t.before(async () => {
  emu = await startEmulator({ timing: { scale: 0.1 }, slots: { video: 20, image: 40 } }, { port: 0 });
});
t.after(async () => {
  await emu.close();
});

const yaml = `version: 1
name: mx
outputs: out
jobs:
  stills:
    kind: image
    matrix: { subject: [apple, boat] }
    prompt: "a {{ subject }}"
`;

const workspace = () => {
  const dir = mkdtempSync(join(tmpdir(), "omnibatch-fpreview-"));
  writeFileSync(join(dir, "m.yaml"), yaml);
  return dir;
};
const envOf = (dir: string) => ({ OMNIBATCH_API_KEY: emu.apiKey, OMNIBATCH_BASE_URL: emu.url, OMNIBATCH_TIME_SCALE: "0.05", OMNIBATCH_CACHE_DIR: join(dir, ".cache") });
const run = (dir: string, args: string[] = []) =>
  execa("node", [bin, "run", "m.yaml", ...args], { cwd: dir, reject: false, all: true, env: envOf(dir), extendEnv: false });

t("a terminal run's spend question stays on screen until it is answered (nothing drawn over it)", async () => {
  const dir = workspace();
  try {
    // A pseudo-terminal for stdin and stdout (util-linux `script`); "n" answered after 1.5 s.
    const child = execa("script", ["-qefc", `node ${bin} run m.yaml`, "/dev/null"], { cwd: dir, reject: false, env: envOf(dir), extendEnv: false });
    setTimeout(() => child.stdin?.write("n\n"), 1500);
    const r = await child;
    const out = r.stdout;
    const asked = out.indexOf("Continue? [y/N] ");
    assert.ok(asked >= 0, out);
    const answered = out.indexOf("not confirmed");
    const between = out.slice(asked + "Continue? [y/N] ".length, answered);
    assert.not.match(between, /\x1b\[\d+A/, "the question was erased (cursor up, clear) while waiting for the answer");
    assert.not.match(between, /spend nothing charged yet/, "a live progress block was drawn over the question");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

t("a rerun with nothing to do leaves the committed lockfile as it was (an older omnibatch reads it; no diff)", async () => {
  const dir = workspace();
  try {
    assert.is((await run(dir, ["--yes"])).exitCode, 0);
    const before = readFileSync(join(dir, "m.lock.json"), "utf8");
    assert.is((await run(dir)).exitCode, 0);
    const after = readFileSync(join(dir, "m.lock.json"), "utf8");
    const header = JSON.parse(after.split("\n")[0]!) as Record<string, unknown>;
    // main's schema: the header has additionalProperties false over these three.
    assert.equal(Object.keys(header).filter((k) => !["lockfile_version", "name", "service"].includes(k)), [], "header fields an older omnibatch rejects as damaged");
    assert.is(after, before, "a no-op rerun changed the lockfile");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

t("the same committed project at another path: a no-op rerun does not rewrite line 1 (no per-machine content in git)", async () => {
  const a = workspace();
  const b = mkdtempSync(join(tmpdir(), "omnibatch-fpreview-clone-"));
  try {
    assert.is((await run(a, ["--yes"])).exitCode, 0);
    assert.is((await run(a)).exitCode, 0); // keeps a stamp
    assert.ok(existsSync(join(a, ".cache", "settled")), "a stamp was kept (in the cache folder)");
    cpSync(a, b, { recursive: true }); // a teammate's checkout, results restored
    const committed = readFileSync(join(b, "m.lock.json"), "utf8");
    assert.is((await run(b)).exitCode, 0);
    const line1 = readFileSync(join(b, "m.lock.json"), "utf8").split("\n")[0]!;
    assert.not.ok(line1.includes(b), "the teammate's absolute path is written into the committed lockfile");
    assert.is(line1, committed.split("\n")[0]!, "line 1 differs per machine: every pair of reruns conflicts in git");
  } finally {
    rmSync(a, { recursive: true, force: true });
    rmSync(b, { recursive: true, force: true });
  }
});

t.run();
