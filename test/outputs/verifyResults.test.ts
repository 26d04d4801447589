// The pure parts of `omnibatch verify` (src/outputs/verifyResults.ts): which records are
// checked, how a found file differs from its record, how a difference is named, and the
// file-name template read back from a recorded path (so --fix writes where it was).

import { test } from "uvu";
import * as assert from "uvu/assert";
import { describeDifference, differenceOf, nameFromRecorded, recordedResults } from "../../src/outputs/verifyResults.js";
import { fileNameFor } from "../../src/manifest/fileNames.js";
import type { LockFile, LockOutput } from "../../src/state/LockFile.js";
import { task } from "../state/lockTask.js";

const A = "a".repeat(64);
const B = "b".repeat(64);

test("differenceOf: missing, another size, the same size with other content, or none", () => {
  const expected = { size: 10, sha256: A };
  assert.is(differenceOf(expected, undefined), "missing");
  assert.is(differenceOf(expected, { size: 9, sha256: A }), "size");
  assert.is(differenceOf(expected, { size: 10, sha256: B }), "sha256");
  assert.is(differenceOf(expected, { size: 10, sha256: A }), undefined);
  assert.is(differenceOf({ size: 10, sha256: A.toUpperCase() }, { size: 10, sha256: A }), undefined, "a record's hex case is no difference");
});

test("describeDifference names the task, the file, what was expected and what was found", () => {
  const d = { id: "t-1", job: "stills", path: "stills/apple/image-1.png", expected: { size: 10, sha256: A } };
  assert.is(describeDifference({ ...d, found: undefined, what: "missing" }), `t-1: stills/apple/image-1.png: missing (expected 10 bytes, sha256 ${A})`);
  assert.is(describeDifference({ ...d, found: { size: 10, sha256: B }, what: "sha256" }), `t-1: stills/apple/image-1.png: expected 10 bytes, sha256 ${A}; found 10 bytes, sha256 ${B}`);
});

test("recordedResults: every output with a path, size and sha256 on a task not pruned, by path", () => {
  const out = (path: string | undefined, more: Partial<LockOutput> = {}): LockOutput => ({ type: "image", index: 0, variant: "main", ...(path ? { path, size: 3, sha256: A } : {}), ...more });
  const lock: LockFile = {
    lockfile_version: 3,
    name: "n",
    tasks: {
      x: task(0, { state: "downloaded", outputs: [out("b/image-1.png"), out(undefined, { remote_id: "r" })] }),
      y: task(2, { state: "downloaded", outputs: [out("a/image-1.png")] }),
      z: task(4, { state: "downloaded", outputs: [out("c/image-1.png")], pruned_at: 5 }),
    },
  };
  assert.equal(recordedResults(lock).map((r) => [r.id, r.output.path]), [["y", "a/image-1.png"], ["x", "b/image-1.png"]]);
});

test("nameFromRecorded inverts fileNameFor: the default names give none, a template's name comes back", () => {
  const refs = [
    { type: "image", index: 0, variant: "main" },
    { type: "image", index: 2, variant: "watermark" },
    { type: "video", index: 0, variant: "main" },
    { type: "video", index: 1, variant: "main" },
    { type: "audio", index: 0, variant: "main" },
  ] as const;
  for (const ref of refs) {
    for (const name of [undefined, "acme-apple", "a.b"]) {
      const path = `job/x/${fileNameFor(ref, "png", name)}`;
      assert.is(nameFromRecorded({ ...ref, path }), name, `${path}`);
    }
  }
  assert.is(nameFromRecorded({ type: "image", index: 0, variant: "main" }), undefined);
});

test.run();
