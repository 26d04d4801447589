// Found by review: the settled stamp hashed the review file when the run ENDED
// (runLoadedManifest read it again to stamp), but the run planned with the decisions it
// read at its START. Now the digest is taken as the file is read. A decision made between the two (a person approving in `omnibatch
// review`'s page while a rerun goes) is stamped as if planned with: the next plain run
// takes the fast path and never makes the downstream task the new approval asks for
// (until the UTC day changes or something else does), telling "all done", exit 0.
//
// Set-up: stills (review: true) -> moves (for_each stills.outputs). apple approved, boat
// rejected: one move made. The stamping run is the library's runManifest in this process
// (deterministic: the decision lands on its start event); the run after it is the CLI.

import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execa } from "execa";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { startEmulator, type RunningEmulator } from "../../src/emulator/Emulator.js";
import { runManifest } from "../../src/run/runManifest.js";
import { settledStampFile } from "../../src/state/settledCache.js";
import { bin } from "./runFixture.js";

let emu: RunningEmulator;
const t = suite("settled stamp vs a review decision made during the stamping run");

t.before(async () => {
  emu = await startEmulator({ timing: { scale: 0.1 }, slots: { video: 20, image: 40 } }, { port: 0 });
});
t.after(async () => {
  await emu.close();
});

const yaml = `version: 1
name: rv
outputs: out
jobs:
  stills:
    kind: image
    review: true
    matrix: { subject: [apple, boat] }
    prompt: "a {{ subject }}"
  moves:
    kind: video
    for_each: stills.outputs
    contents:
      - first_frame: "{{ item.file }}"
        id: start
    prompt: "@start turns slowly"
    settings: { resolution: 720p, duration: 5 }
`;

t("a boat approval made while the stamping rerun goes: the next run must make boat's move", async () => {
  const dir = mkdtempSync(join(tmpdir(), "omnibatch-fpreview-"));
  const env = { OMNIBATCH_API_KEY: emu.apiKey, OMNIBATCH_BASE_URL: emu.url, OMNIBATCH_TIME_SCALE: "0.05", OMNIBATCH_CACHE_DIR: join(dir, ".cache") };
  const cli = (args: string[], more: Record<string, string> = {}) =>
    execa("node", [bin, ...args], { cwd: dir, reject: false, all: true, env: { ...env, ...more }, extendEnv: false });
  try {
    const manifest = join(dir, "m.yaml");
    const reviewFile = join(dir, "m.review.yaml");
    writeFileSync(manifest, yaml);
    assert.is((await cli(["run", manifest, "--yes"])).exitCode, 3, "stills await review");
    assert.is((await cli(["review", manifest, "--approve", "stills subject=apple"])).exitCode, 0);
    assert.is((await cli(["review", manifest, "--reject", "stills subject=boat"])).exitCode, 0);
    const appleOnly = readFileSync(reviewFile, "utf8");
    const made = await cli(["run", manifest, "--yes"]);
    assert.is(made.exitCode, 0, made.all);
    // The text of the file once boat is approved too (then back to apple only).
    assert.is((await cli(["review", manifest, "--approve", "stills subject=boat"])).exitCode, 0);
    const both = readFileSync(reviewFile, "utf8");
    writeFileSync(reviewFile, appleOnly);

    // The stamping rerun: nothing to do with apple only; boat is approved as it starts.
    let swapped = false;
    const stamping = await runManifest(manifest, {
      env: { ...env, OMNIBATCH_SETTLED: "on" },
      // As the CLI stamps it from OMNIBATCH_TIME_SCALE (the library takes it as an option).
      timeScale: "0.05",
      onEvent: (e) => {
        if (e.type === "start" && !swapped) {
          writeFileSync(reviewFile, both);
          swapped = true;
        }
      },
    });
    assert.ok(swapped);
    assert.is(stamping.created, 0);
    assert.ok(existsSync(settledStampFile(join(dir, "m.lock.json"), env.OMNIBATCH_CACHE_DIR)), "stamped (with the decisions it planned with)");

    // What a full run makes now (for comparison: one move, for boat).
    const next = await cli(["run", manifest, "--json"], { OMNIBATCH_SETTLED: "debug" });
    const summary = JSON.parse(next.stdout.trim().split("\n").at(-1)!) as { created: number };
    assert.not.match(next.stderr, /settled fast path taken/, "the fast path was taken although the review file changed since the plan");
    assert.is(summary.created, 1, "boat's move (approved) must be made");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

t.run();
