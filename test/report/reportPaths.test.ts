// The reports never write outside the outputs folder, whatever a record says: a task
// whose folder climbs out (`..`) gets no task.json (a lockfile that holds one is refused
// when read; this is the check where the path is made, for a lockfile that came by
// another way). The other tasks' sidecars and the reports are written as usual.

import { existsSync } from "node:fs";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { writeReports } from "../../src/report/writeReports.js";
import type { LockFile, LockTask } from "../../src/state/LockFile.js";
import { NOW } from "./fixtureLock.js";

const task = (dir: string): LockTask => ({
  job: "stills",
  kind: "image",
  vars: {},
  dir,
  request_hash: "abc",
  take: 1,
  attempt: 1,
  state: "downloaded",
  updated_at: NOW,
  outputs: [{ type: "image", index: 0, variant: "main", path: `${dir}/image-1.png`, size: 10, sha256: "a".repeat(64) }],
  billing: [],
});

test("a record whose folder climbs out of the outputs gets no task.json outside; the others do", async () => {
  const root = await mkdtemp(join(tmpdir(), "omnibatch-reportpaths-"));
  try {
    const out = join(root, "outputs", "m");
    const lock: LockFile = { lockfile_version: 3, name: "m", tasks: { "m-stills-in": task("stills/in"), "m-stills-out": task("../../escape") } };
    // Both folders exist (a sidecar is written only into a folder that is there).
    await mkdir(join(out, "stills", "in"), { recursive: true });
    await mkdir(join(root, "escape"), { recursive: true });
    await writeReports({ lock, outputsDir: out, manifestName: "m", now: NOW, env: {} });
    assert.ok(existsSync(join(out, "results.jsonl")), "reports");
    assert.ok(existsSync(join(out, "stills", "in", "task.json")), "sidecar inside");
    assert.not.ok(existsSync(join(root, "escape", "task.json")), "nothing written outside the outputs folder");
  } finally {
    await rm(root, { recursive: true, force: true });
  }
});

test.run();
