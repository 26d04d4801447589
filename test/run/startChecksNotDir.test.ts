// The run's start checks (src/run/startChecks.ts) with a file where a folder of the outputs
// must be: a folder that cannot be written (FolderNotWritable, exit 2), not a crash (an
// ENOTDIR from the link check was a bug, exit 70).

import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Effect } from "effect";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { FolderNotWritable, startChecks } from "../../src/run/startChecks.js";

test("a file on the outputs folder's way: FolderNotWritable naming the folder", async () => {
  const dir = mkdtempSync(join(tmpdir(), "omnibatch-notdir-"));
  try {
    writeFileSync(join(dir, "blocked"), "a file\n");
    const outputs = join(dir, "blocked", "out");
    const result = await Effect.runPromise(Effect.either(startChecks(outputs, ["clips/calm", "clips/busy"], join(dir, "m.lock.json"))));
    assert.is(result._tag, "Left");
    const error = result._tag === "Left" ? result.left : undefined;
    assert.instance(error, FolderNotWritable);
    assert.is((error as FolderNotWritable).path, outputs);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
