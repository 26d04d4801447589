// Review finding: the service's create_time / update_time are checked only as integers
// >= 0 (schemas/api/defs.schema.json `timestampMs`, no maximum). A service answering
// create_time 1e300 (an integer to JSON Schema) is recorded as it is; the lockfile then
// holds times no Date can show, and every report write throws
// "RangeError: Invalid time value" (src/report/resultsJsonl.ts `iso`): the run ends 0
// saying "could not write the reports", and `omnibatch report` exits 70 "internal error"
// on every later call, for good. The lockfile line below is what a run against a proxy
// setting create_time/update_time to 1e300 wrote (the task's other fields untouched).

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execa } from "execa";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { bin } from "./runFixture.js";

test("a lockfile a run wrote from a service's huge create_time: report writes the reports (no internal error)", async () => {
  const dir = mkdtempSync(join(tmpdir(), "omnibatch-review-"));
  try {
    writeFileSync(
      join(dir, "m.yaml"),
      `version: 1
name: w3
outputs: out
defaults:
  video: { resolution: 720p, aspect_ratio: "16:9", duration: 5 }
jobs:
  clips:
    kind: video
    matrix:
      mood: [calm]
    prompt: "a {{ mood }} street"
`,
    );
    writeFileSync(
      join(dir, "m.lock.json"),
      `{"lockfile_version":3,"name":"w3","service":"http://127.0.0.1:42402"}

{"id":"w3-clips-6nxpal7l2g6qlyj4ebao","kind":"video","task_id":"7000000000000022","at":[1795772838959,615,382,-1e+300,-1e+300],"hash_rest":"f5407cb7f8ba3adcc6f3073d767fe1c8745b53b","vars":{"mood":"calm"},"out":[{"size":5457,"sha256":"ea55a4f6e555ade1a6752c7d5de23aa320c8f2005ba07ca189eb78764ff4312e","remote_id":"700000000000002201"}],"bill":[{"cash":"0.28","list":"0.35","cash_type":"balance","currency":"USD"}]}
`,
    );
    const result = await execa("node", [bin, "report", "m.yaml"], { cwd: dir, reject: false, all: true });
    assert.not.equal(result.exitCode, 70, `internal error: ${result.all}`);
    assert.not.match(result.all ?? "", "Invalid time value");
    // The reports are written, the times no Date can show left out (unknown), the others kept.
    assert.is(result.exitCode, 0, result.all);
    const record = JSON.parse(readFileSync(join(dir, "out", "results.jsonl"), "utf8").trim().split("\n")[0]!) as { times: Record<string, string | undefined> };
    assert.equal(Object.keys(record.times).sort(), ["deleted_at_service", "planned", "submitted", "updated"]);
    assert.is(record.times["updated"], new Date(1795772838959).toISOString());
    // status reads it too.
    const status = await execa("node", [bin, "status", "m.yaml", "--json"], { cwd: dir, reject: false, all: true });
    assert.is(status.exitCode, 0, status.all);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
