// A lockfile an older version wrote from a service's create_time / update_time of 1e300
// (the `at` offsets then hold -1e300) loads, and those times read as unknown: they would
// break every report and the 30-day deletion reckoning. Times within range read back exactly.

import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { readLockFile } from "../../src/state/readLockFile.js";
import { decodeTaskLine, encodeTaskLine, type TaskLine } from "../../src/state/TaskLine.js";
import { task } from "./lockTask.js";

const line = (at: readonly (number | null)[]): TaskLine =>
  ({ id: "w3-clips-6nxpal7l2g6qlyj4ebao", kind: "video", task_id: "7", at, hash_rest: "f5407cb7f8ba3adcc6f3073d767fe1c8745b53b", vars: { mood: "calm" } }) as TaskLine;

test("a line whose service times are 1e300 (offsets -1e300) decodes with those times unknown and the others kept", () => {
  const t = decodeTaskLine("w3", line([1_795_772_838_959, 615, 382, -1e300, -1e300])).task;
  assert.is(t.updated_at, 1_795_772_838_959);
  assert.is(t.planned_at, 1_795_772_838_959 - 615);
  assert.is(t.submitted_at, 1_795_772_838_959 - 382);
  assert.is(t.created_at, undefined);
  assert.is(t.finished_at, undefined);
  // Before 1970 (a huge positive offset) is no time either.
  assert.is(decodeTaskLine("w3", line([1_795_772_838_959, null, null, 1e300])).task.created_at, undefined);
});

test("times within range come back from their line exactly", () => {
  const t = task(3, { state: "downloaded", submitted_at: 1_700_000_000_100, created_at: 1_700_000_000_200, finished_at: 1_700_000_060_000, updated_at: 1_700_000_060_001 });
  const back = decodeTaskLine("spring-campaign", JSON.parse(encodeTaskLine("spring-campaign", "spring-campaign-clips-00000003", t)) as TaskLine).task;
  assert.equal(back, t);
});

test("such a lockfile loads (it is not damaged) with the service's times unknown", async () => {
  const dir = mkdtempSync(join(tmpdir(), "omnibatch-times-"));
  try {
    const path = join(dir, "m.lock.json");
    writeFileSync(path, `{"lockfile_version":3,"name":"w3","service":"http://127.0.0.1:42402"}\n\n${JSON.stringify(line([1_795_772_838_959, 615, 382, -1e300, -1e300]))}\n`);
    const lock = await readLockFile(path);
    const t = lock!.tasks["w3-clips-6nxpal7l2g6qlyj4ebao"]!;
    assert.is(t.created_at, undefined);
    assert.is(t.finished_at, undefined);
    assert.is(t.submitted_at, 1_795_772_838_959 - 382);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
