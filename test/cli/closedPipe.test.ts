// The built CLI writing into a pipe whose reader goes away (`omnibatch run ... | head -3`):
// no stack trace, exit 141 (a closed pipe, as a shell reports it), the run stopped as on
// Ctrl-C, the lockfile valid and usable by the next run. The reader is this test: it
// closes its end of the child's stdout (and stderr) after the first output.

import { existsSync, rmSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { execa } from "execa";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { CLOSED_PIPE_EXIT } from "../../src/cli/closedOutput.js";
import { readLockFile } from "../../src/state/readLockFile.js";
import { demoCopy } from "../checkoutFiles.js";

const bin = fileURLToPath(new URL("../../dist/cli/bin.js", import.meta.url));

const copyDemo = () => {
  const dir = demoCopy("omnibatch-pipe-");
  return { dir, manifest: join(dir, "manifests", "demo.yaml"), lockfile: join(dir, "manifests", "demo.emulate.lock.json") };
};

/** Runs the CLI; after `lines` lines of stdout the reader closes stdout (and stderr, when `both`). */
const runClosingAfter = async (cwd: string, args: readonly string[], lines: number, both: boolean) => {
  const child = execa("node", [bin, ...args], { cwd, reject: false, buffer: false, timeout: 60_000, extendEnv: false, env: { OMNIBATCH_TIME_SCALE: "0.2" } });
  let seen = 0;
  let stderr = "";
  child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
  child.stdout!.on("data", (d: Buffer) => {
    seen += d.toString().split("\n").length - 1;
    if (seen >= lines) {
      child.stdout!.destroy();
      if (both) child.stderr!.destroy();
    }
  });
  const r = await child;
  return { exitCode: r.exitCode, timedOut: r.timedOut, stderr };
};

test("run --emulate | head -1: exit 141, no stack trace, the lockfile valid and the run lock released", async () => {
  const ws = copyDemo();
  try {
    const r = await runClosingAfter(ws.dir, ["run", ws.manifest, "--emulate"], 1, false);
    assert.not.ok(r.timedOut, "the run ends by itself once nobody reads");
    assert.is(r.exitCode, CLOSED_PIPE_EXIT, r.stderr);
    assert.not.match(r.stderr, /EPIPE|Error:|\n\s+at /);
    const lock = await readLockFile(ws.lockfile);
    assert.ok(lock, "the lockfile was written and reads back");
    assert.not.ok(existsSync(`${ws.lockfile}.running`), "the run lock is released");
    assert.not.ok(existsSync(`${ws.lockfile}.journal`), "the journal was folded in at the clean stop");
  } finally {
    rmSync(ws.dir, { recursive: true, force: true });
  }
});

test("run --emulate --json with stdout and stderr closed after 3 events: exit 141, the next run finishes from that lockfile", async () => {
  const ws = copyDemo();
  try {
    const r = await runClosingAfter(ws.dir, ["run", ws.manifest, "--emulate", "--json"], 3, true);
    assert.not.ok(r.timedOut);
    assert.is(r.exitCode, CLOSED_PIPE_EXIT);
    assert.ok(await readLockFile(ws.lockfile), "the lockfile reads back");
    const next = await execa("node", [bin, "run", ws.manifest, "--emulate"], { cwd: ws.dir, reject: false, all: true, timeout: 60_000, extendEnv: false, env: { OMNIBATCH_TIME_SCALE: "0.2" } });
    assert.is(next.exitCode, 0, next.all);
    const lock = await readLockFile(ws.lockfile);
    assert.ok(Object.values(lock!.tasks).every((t) => t.state === "downloaded"), "every task downloaded by the next run");
  } finally {
    rmSync(ws.dir, { recursive: true, force: true });
  }
});

test.run();
