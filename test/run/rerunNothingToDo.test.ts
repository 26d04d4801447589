// A rerun with nothing to do, as the resume benchmark makes it at 100,000 tasks and a
// user at any size: what it spares itself (a second plan of every task for the reports,
// a rewrite of the lockfile or of current reports) must not change what it says. The
// lockfile stays byte for byte and unwritten; the reports stay when nothing changed, and
// still tell a task orphaned by a manifest edit (the rerun changes no record then, so the
// reports take the standings the run planned at its start); a result file removed by hand
// is noticed. Real emulator in process (`emulate`), real files.

import { mkdtempSync, readFileSync, rmSync, statSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { loadManifest } from "../../src/manifest/loadManifest.js";
import { makePolicy } from "../../src/policy/Policy.js";
import { runLoadedManifest } from "../../src/run/runLoadedManifest.js";
import { readLockFile } from "../../src/state/readLockFile.js";

const manifest = (colours: string) => `version: 1
name: idle
outputs: out
jobs:
  pics:
    kind: image
    matrix: { c: [${colours}] }
    prompt: "a {{ c }} mug"
`;

const policy = makePolicy(0.01);

test("a rerun with nothing to do leaves lockfile and reports as they were, still tells an orphaned task and a removed file", async () => {
  const dir = mkdtempSync(join(tmpdir(), "omnibatch-idle-"));
  try {
    const file = join(dir, "m.yaml");
    writeFileSync(file, manifest("red, green, blue"));
    const run = async () => runLoadedManifest(await loadManifest(file), { emulate: true, policy, env: {} });
    const first = await run();
    assert.is(first.exitCode, 0);
    const lockPath = join(dir, "m.emulate.lock.json");
    const out = join(dir, "out-emulated");
    const lockBytes = readFileSync(lockPath, "utf8");
    const lockMtime = statSync(lockPath).mtimeMs;
    const resultsMtime = statSync(join(out, "results.jsonl")).mtimeMs;

    // 1. Nothing changed: nothing is written.
    const again = await run();
    assert.is(again.exitCode, 0);
    assert.is(again.created, 0);
    assert.is(readFileSync(lockPath, "utf8"), lockBytes);
    assert.is(statSync(lockPath).mtimeMs, lockMtime, "the lockfile is not rewritten");
    assert.is(statSync(join(out, "results.jsonl")).mtimeMs, resultsMtime, "current reports are not rewritten");

    // 2. A value removed from the matrix: its task is orphaned; no record changes, the reports say so.
    writeFileSync(file, manifest("red, green"));
    const orphaning = await run();
    assert.is(orphaning.exitCode, 0);
    assert.is(orphaning.created, 0);
    assert.is(readFileSync(lockPath, "utf8"), lockBytes, "an orphan is not recorded in the lockfile");
    const lines = readFileSync(join(out, "results.jsonl"), "utf8").trimEnd().split("\n").map((l) => JSON.parse(l) as { vars: { c: string }; standing: string });
    assert.equal(lines.map((l) => `${l.vars.c}=${l.standing}`).sort(), ["blue=orphaned", "green=current", "red=current"]);

    // 3. A result file removed by hand is noticed, not taken as done: the emulated service
    //    kept the task between runs (M.emulate.state.json), so its file is fetched again,
    //    nothing is made again.
    const lock = (await readLockFile(lockPath))!;
    const red = Object.values(lock.tasks).find((t) => t.vars.c === "red")!;
    unlinkSync(join(out, red.outputs[0]!.path!));
    const noticed = await run();
    assert.equal([noticed.exitCode, noticed.created, noticed.downloaded], [0, 0, 1], "the red task's file fetched again, the task not made again");
    assert.ok(statSync(join(out, red.outputs[0]!.path!)).isFile(), "its file is back");
    assert.not.equal(readFileSync(lockPath, "utf8"), lockBytes, "what the rerun did about it is recorded");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
