// No output path may leave the outputs folder, whatever the service or manifest names.

import { test } from "uvu";
import * as assert from "uvu/assert";
import { join, resolve } from "node:path";
import { resolveInside } from "../../src/outputs/OutputPaths.js";

test("no output path may leave the outputs folder", () => {
  assert.ok(resolveInside("/tmp/out", "job/task/video-1.mp4").startsWith("/tmp/out/"));
  for (const bad of ["../x", "job/../../x", "/etc/passwd", "C:/x", ""]) {
    assert.throws(() => resolveInside("/tmp/out", bad), /outside/, bad);
  }
});

test("a plain path resolves to what path.join makes of it (the fast path joins text), at any root", () => {
  const rels = ["job/task/video-1.mp4", "a", "stills/0_1/image-1.png", "x/.hidden/...", "j/ spaced name /é.png", "a/.b/..c/c..", "job/task-x/take-2/image-1.watermark.png"];
  for (const root of ["/tmp/out", "/tmp/out/", "/", "relative/out", "./out/../out2"]) {
    for (const rel of rels) assert.is(resolveInside(root, rel), join(resolve(root), ...rel.split("/")), `${root} + ${rel}`);
  }
  // Not plain (empty part, `.`): normalised, and still inside.
  assert.is(resolveInside("/tmp/out", "job//task/./f.png"), "/tmp/out/job/task/f.png");
  assert.is(resolveInside("/tmp/out", "job/x/../f.png"), "/tmp/out/job/f.png");
});

test.run();
