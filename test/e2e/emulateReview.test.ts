// The review tour on `--emulate` alone, through the built CLI: the emulated service keeps
// its tasks between runs (M.emulate.state.json beside M.emulate.lock.json), so a run after
// the review makes exactly the clips of the approved stills from the stills the run before
// made. Deleting the emulated lockfile starts afresh; a damaged state file is named and a
// new emulated service starts (never a crash).

import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { execa } from "execa";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { readLockFile } from "../../src/state/readLockFile.js";
import { bin } from "./runFixture.js";
import { reviewedDemoCopy } from "../checkoutFiles.js";

const t = suite("run --emulate keeps its service between runs");

const demoCopy = () => reviewedDemoCopy("emulate-review-");

const cli = (dir: string, args: readonly string[]) =>
  execa("node", [bin, ...args], { cwd: dir, reject: false, all: true, extendEnv: false, env: { PATH: process.env["PATH"] ?? "" }, timeout: 120_000 });

const summaryOf = (stdout: string) => JSON.parse(stdout.trim().split("\n").at(-1)!);

const lockOf = async (dir: string) => (await readLockFile(join(dir, "manifests/demo.emulate.lock.json")))!;

t("run (stills, exit 3 awaiting review) -> review --approve -> run makes exactly the approved stills' clips, exit 0", async () => {
  const ws = demoCopy();
  try {
    const first = await cli(ws.dir, ["run", "manifests/demo.yaml", "--emulate", "--json"]);
    assert.is(first.exitCode, 3, first.all);
    assert.is(summaryOf(first.stdout).outcome, "review");
    const state = join(ws.dir, "manifests/demo.emulate.state.json");
    assert.ok(existsSync(state), "the emulated service's state is kept beside the emulated lockfile");

    const approve = await cli(ws.dir, ["review", "manifests/demo.yaml", "--emulate", "--approve", "keyframes product.sku=A-1"]);
    assert.is(approve.exitCode, 0, approve.all);
    const reject = await cli(ws.dir, ["review", "manifests/demo.yaml", "--emulate", "--reject", "keyframes product.sku=B-2"]);
    assert.is(reject.exitCode, 0, reject.all);
    const rejectC = await cli(ws.dir, ["review", "manifests/demo.yaml", "--emulate", "--reject", "keyframes product.sku=C-3"]);
    assert.is(rejectC.exitCode, 0, rejectC.all);

    const second = await cli(ws.dir, ["run", "manifests/demo.yaml", "--emulate", "--json"]);
    assert.is(second.exitCode, 0, second.all);
    const summary = summaryOf(second.stdout);
    assert.is(summary.outcome, "done");
    assert.is(summary.created, 2, "one clip per approved still (A-1 studio and street), nothing else");
    const lock = await lockOf(ws.dir);
    const stills = Object.entries(lock.tasks).filter(([, x]) => x.job === "keyframes");
    const clips = Object.values(lock.tasks).filter((x) => x.job === "clips");
    assert.is(stills.length, 5);
    assert.is(clips.length, 2);
    const approved = new Set(stills.filter(([, x]) => (x.vars["product"] as { sku: string }).sku === "A-1").map(([id]) => id));
    assert.is(approved.size, 2);
    for (const clip of clips) {
      assert.is(clip.state, "downloaded");
      assert.ok(approved.has(clip.upstream!.task), `clip of ${clip.upstream!.task}`);
    }
    // A third run has nothing to do.
    const third = await cli(ws.dir, ["run", "manifests/demo.yaml", "--emulate", "--json"]);
    assert.is(third.exitCode, 0, third.all);
    assert.is(summaryOf(third.stdout).created, 0);
  } finally {
    ws.remove();
  }
});

t("deleting the emulated lockfile and outputs starts afresh: the kept state is replaced, not added to", async () => {
  const ws = demoCopy();
  try {
    const first = await cli(ws.dir, ["run", "manifests/demo.yaml", "--emulate", "--quiet"]);
    assert.is(first.exitCode, 3, first.all);
    const state = join(ws.dir, "manifests/demo.emulate.state.json");
    const tasksIn = () => (JSON.parse(readFileSync(state, "utf8")).tasks as unknown[]).length;
    assert.is(tasksIn(), 5);
    rmSync(join(ws.dir, "manifests/demo.emulate.lock.json"));
    rmSync(join(ws.dir, "outputs"), { recursive: true });
    const again = await cli(ws.dir, ["run", "manifests/demo.yaml", "--emulate", "--json"]);
    assert.is(again.exitCode, 3, again.all);
    assert.is(summaryOf(again.stdout).created, 5);
    assert.is(tasksIn(), 5, "a new emulated service: the five stills of this run only");
    assert.not.match(again.all ?? "", "saved state");
  } finally {
    ws.remove();
  }
});

t("a damaged state file is named in a warning and a new emulated service starts; the run goes on and saves a good one", async () => {
  const ws = demoCopy();
  try {
    const first = await cli(ws.dir, ["run", "manifests/demo.yaml", "--emulate", "--quiet"]);
    assert.is(first.exitCode, 3, first.all);
    const state = join(ws.dir, "manifests/demo.emulate.state.json");
    writeFileSync(state, readFileSync(state, "utf8").replace(/"kind":"image"/, '"kind":"sound"'));
    const approve = await cli(ws.dir, ["review", "manifests/demo.yaml", "--emulate", "--approve", "keyframes"]);
    assert.is(approve.exitCode, 0, approve.all);
    const second = await cli(ws.dir, ["run", "manifests/demo.yaml", "--emulate"]);
    assert.match(second.all ?? "", "cannot use the emulated service's saved state");
    assert.match(second.all ?? "", "demo.emulate.state.json: tasks[0].kind: must be one of video, image");
    assert.not.match(second.all ?? "", /\n\s+at .+:\d+:\d+/, "no stack trace");
    // The new service does not hold the stills: their clips cannot be made (the old behaviour), reported, not a crash.
    assert.is(second.exitCode, 1, second.all);
    assert.ok(JSON.parse(readFileSync(state, "utf8")).format === "omnibatch-emulator-state");
  } finally {
    ws.remove();
  }
});

t.run();
