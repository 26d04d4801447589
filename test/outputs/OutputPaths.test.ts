// No output path may leave the outputs folder, whatever the service or manifest names.

import { test } from "uvu";
import * as assert from "uvu/assert";
import { resolveInside } from "../../src/outputs/OutputPaths.js";

test("no output path may leave the outputs folder", () => {
  assert.ok(resolveInside("/tmp/out", "job/task/video-1.mp4").startsWith("/tmp/out/"));
  for (const bad of ["../x", "job/../../x", "/etc/passwd", "C:/x", ""]) {
    assert.throws(() => resolveInside("/tmp/out", bad), /outside/, bad);
  }
});

test.run();
