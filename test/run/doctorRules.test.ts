// doctor's verdicts, pure (src/run/doctorRules.ts): whether the video create path exists
// from the answer to a GET of it, and which line is the first thing to fix.

import { test } from "uvu";
import * as assert from "uvu/assert";
import { createPathVerdict, firstProblem, formatDoctorLine, type DoctorLine } from "../../src/run/doctorRules.js";

test("a GET of the create path: Allow naming POST, a 405 or words about the method say it exists", () => {
  assert.is(createPathVerdict({ status: 404, code: 1202, message: "invalid method GET for /omni-video/kling-o1; allowed: POST", allow: "POST" }), "exists");
  assert.is(createPathVerdict({ status: 405 }), "exists");
  assert.is(createPathVerdict({ status: 404, code: 1202, message: "invalid method" }), "exists");
});

test("words saying there is no such API, without an Allow header, say it is missing", () => {
  assert.is(createPathVerdict({ status: 404, code: 1202, message: "no such API: GET /omni-video/svc-o1" }), "missing");
  assert.is(createPathVerdict({ status: 404, message: "Not Found" }), "missing");
  // An Allow header outweighs the words.
  assert.is(createPathVerdict({ status: 404, code: 1202, message: "no such API", allow: "POST" }), "exists");
});

test("a bare 1202, a refused key or an HTML page say nothing sure", () => {
  assert.is(createPathVerdict({ status: 404, code: 1202, message: "" }), "unsure");
  assert.is(createPathVerdict({ status: 401, code: 1002, message: "no such API" }), "unsure");
  assert.is(createPathVerdict({ status: 500 }), "unsure");
});

test("the first ✗ is the first thing to fix; ? lines are no problem", () => {
  const lines: DoctorLine[] = [
    { check: "address", ok: true, text: "answers" },
    { check: "service name", ok: "unsure", text: "not confirmed" },
    { check: "outputs", ok: false, text: "cannot be written", problem: { _tag: "FolderNotWritable", message: "m" } },
    { check: "models", ok: false, text: "x", problem: { _tag: "ModelNotOffered", message: "m" } },
  ];
  assert.is(firstProblem(lines)?.check, "outputs");
  assert.is(firstProblem(lines.slice(0, 2)), undefined);
  assert.equal(lines.map(formatDoctorLine), ["✓ address: answers", "? service name: not confirmed", "✗ outputs: cannot be written", "✗ models: x"]);
});

test.run();
