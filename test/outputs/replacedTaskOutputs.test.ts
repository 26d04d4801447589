// Guarantee: a task replaced by a changed manifest keeps its downloaded results; the task
// that replaces it never writes over them.
//
// Review finding: a task replaced by a changed manifest (`~` in plan: the old task is kept,
// a new one is created) must not have its downloaded results overwritten by the new task,
// which by default lands in the same folder (same matrix values). Real CLI, --emulate.

import { createHash } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { readLockFile } from "../../src/state/readLockFile.js";
import { runCli, workspace } from "../e2e/runFixture.js";

const yaml = (prompt: string) => `version: 1
name: replaced
outputs: out
defaults:
  image: { resolution: 1k }
jobs:
  stills:
    kind: image
    matrix:
      subject: [apple]
    prompt: "a {{ subject }} ${prompt}"
`;

test("a replaced (~) task keeps its own files: the new task downloads to a different path, the old files still match their sha256", async () => {
  const ws = workspace(yaml("on a table"));
  try {
    const first = await runCli(ws, ["--emulate", "--yes", "--quiet"]);
    assert.is(first.exitCode, 0, first.all);
    writeFileSync(ws.manifest, yaml("on a chair"));
    const second = await runCli(ws, ["--emulate", "--yes", "--quiet"]);
    assert.is(second.exitCode, 0, second.all);

    const lock = await readLockFile(join(ws.dir, "m.emulate.lock.json"));
    const tasks = Object.entries(lock!.tasks);
    assert.is(tasks.length, 2, "old and new task are both in the lockfile");
    const paths = tasks.flatMap(([, t]) => t.outputs.filter((o) => o.path).map((o) => o.path!));
    assert.is(paths.length, 2);
    assert.is.not(paths[0], paths[1], `both tasks recorded the same file: ${paths[0]}`);
    for (const [id, t] of tasks) {
      for (const o of t.outputs) {
        if (!o.path) continue;
        const file = join(ws.dir, "out-emulated", o.path);
        assert.ok(existsSync(file), `${id}: ${file}`);
        assert.is(createHash("sha256").update(readFileSync(file)).digest("hex"), o.sha256, `${id}: ${o.path}`);
      }
    }
  } finally {
    ws.remove();
  }
});

test.run();
