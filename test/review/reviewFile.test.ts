// The review file: the pure decision rule (a decision covers exactly the file it was
// made on), its text (sorted, stable, read back the same), its positioned errors, its
// atomic write on the real file system, and its name beside the manifest.

import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { emulatedReviewFilePath, reviewFilePathFor, type ReviewEntry, type ReviewFile } from "../../src/review/ReviewFile.js";
import { indexDecisions, reviewStateOf, withDecisions } from "../../src/review/reviewDecision.js";
import { parseReviewFile, readReviewFile, ReviewFileInvalid } from "../../src/review/readReviewFile.js";
import { formatReviewFile, writeReviewFile } from "../../src/review/writeReviewFile.js";
import { exitCodeFor } from "../../src/exit/ExitCode.js";
import { seeded } from "../engine/machine.js";

const sha = (c: string) => c.repeat(64);
const entry = (task: string, output: number, s: string, decision: "approved" | "rejected"): ReviewEntry => ({
  task,
  output,
  sha256: s,
  decision,
  at: "2026-11-23T22:00:00.000Z",
});

test("a decision applies to the output it names, with the same sha256", () => {
  const file: ReviewFile = { version: 1, outputs: [entry("d-stills-a", 0, sha("a"), "approved"), entry("d-stills-a", 1, sha("b"), "rejected")] };
  const idx = indexDecisions(file);
  assert.is(reviewStateOf({ task: "d-stills-a", output: 0, sha256: sha("a") }, idx), "approved");
  assert.is(reviewStateOf({ task: "d-stills-a", output: 1, sha256: sha("b") }, idx), "rejected");
  assert.is(reviewStateOf({ task: "d-stills-a", output: 2, sha256: sha("a") }, idx), "awaiting");
  assert.is(reviewStateOf({ task: "d-stills-b", output: 0, sha256: sha("a") }, idx), "awaiting");
});

test("a decision made on another file of the same output does not carry over", () => {
  const idx = indexDecisions({ version: 1, outputs: [entry("d-stills-a", 0, sha("a"), "approved")] });
  assert.is(reviewStateOf({ task: "d-stills-a", output: 0, sha256: sha("c") }, idx), "awaiting");
});

test("property: the state is the decision of the entry with the same task, output and sha256, else awaiting; a later decision replaces the earlier", () => {
  for (let seed = 1; seed <= 300; seed++) {
    const r = seeded(seed);
    let file: ReviewFile = { version: 1, outputs: [] };
    const model = new Map<string, ReviewEntry>();
    for (let step = 0; step < 40; step++) {
      const e = entry(`t-${r.int(5)}`, r.int(3), sha(r.pick(["a", "b", "c"])), r.pick(["approved", "rejected"] as const));
      file = withDecisions(file, [e]);
      model.set(`${e.task}/${e.output}`, e);
    }
    const idx = indexDecisions(file);
    assert.is(file.outputs.length, model.size, `seed ${seed}: one entry per output`);
    for (let t = 0; t < 5; t++)
      for (let o = 0; o < 3; o++)
        for (const s of ["a", "b", "c"]) {
          const m = model.get(`t-${t}/${o}`);
          const want = m && m.sha256 === sha(s) ? m.decision : "awaiting";
          assert.is(reviewStateOf({ task: `t-${t}`, output: o, sha256: sha(s) }, idx), want, `seed ${seed}: t-${t}#${o} ${s}`);
        }
    // Written sorted, read back the same, and the same decisions in any order give the same bytes.
    const text = formatReviewFile(file);
    assert.equal(parseReviewFile(text, "x.review.yaml"), file, `seed ${seed}: round trip`);
    const shuffled = [...file.outputs].sort(() => r.next() - 0.5);
    assert.is(formatReviewFile({ version: 1, outputs: shuffled }), text, `seed ${seed}: stable text`);
    const keys = file.outputs.map((e) => [e.task, e.output] as const);
    for (let i = 1; i < keys.length; i++) {
      const [a, b] = [keys[i - 1]!, keys[i]!];
      assert.ok(a[0] < b[0] || (a[0] === b[0] && a[1] < b[1]), `seed ${seed}: sorted`);
    }
  }
});

test("one decision changes one entry's lines in the text (small diffs)", () => {
  const base = withDecisions({ version: 1, outputs: [] }, [entry("d-a", 0, sha("a"), "approved"), entry("d-b", 0, sha("b"), "approved"), entry("d-c", 0, sha("c"), "approved")]);
  const after = withDecisions(base, [{ ...entry("d-b", 0, sha("b"), "rejected"), at: "2026-11-23T23:00:00.000Z" }]);
  const [x, y] = [formatReviewFile(base).split("\n"), formatReviewFile(after).split("\n")];
  assert.is(x.length, y.length);
  assert.is(x.filter((line, i) => line !== y[i]).length, 2); // decision and at
});

test("strings that YAML would read as something else are quoted and read back as strings", () => {
  const file = withDecisions({ version: 1, outputs: [] }, [{ ...entry("true", 0, sha("a"), "approved"), job: "123", file: "a b/#c: d.png" }]);
  assert.equal(parseReviewFile(formatReviewFile(file), "x"), file);
});

test("a sha256 YAML would read as a number (digits only, 1e...) is written so it reads back as the same text", () => {
  for (const s of ["0".repeat(64), `1e${"5".repeat(62)}`, `${"1".repeat(63)}0`]) {
    const file = withDecisions({ version: 1, outputs: [] }, [entry("d-a", 0, s, "approved")]);
    assert.equal(parseReviewFile(formatReviewFile(file), "x"), file, s);
  }
});

test("a schema problem is reported as file:line:col with the line, and maps to exit 2", () => {
  const text = ["version: 1", "outputs:", "  - task: d-a", "    output: 0", "    sha256: abc", "    decision: maybe", '    at: "now"', "    colour: red", ""].join("\n");
  try {
    parseReviewFile(text, "demo.review.yaml");
    assert.unreachable("should have thrown");
  } catch (error) {
    assert.instance(error, ReviewFileInvalid);
    const message = (error as ReviewFileInvalid).message;
    assert.match(message, /demo\.review\.yaml:5:13: error: outputs\[0\]\.sha256 must be/);
    assert.match(message, /demo\.review\.yaml:6:15: error: outputs\[0\]\.decision must be one of "approved", "rejected"/);
    assert.match(message, /demo\.review\.yaml:8:5: error: unknown key 'colour' in outputs\[0\]/);
    assert.match(message, / 6 \|     decision: maybe/);
    assert.is(exitCodeFor(error), 2);
  }
});

test("two decisions for one output are an error pointing at the second", () => {
  const text = formatReviewFile({ version: 1, outputs: [entry("d-a", 0, sha("a"), "approved")] }) + formatReviewFile({ version: 1, outputs: [entry("d-a", 0, sha("b"), "rejected")] }).split("\n").filter((l) => l.startsWith("  ")).join("\n") + "\n";
  try {
    parseReviewFile(text, "r.yaml");
    assert.unreachable("should have thrown");
  } catch (error) {
    assert.match((error as Error).message, /r\.yaml:11:5: error: outputs\[1\]: a second decision for output 0 of d-a \(the first is at line 6\)/);
  }
});

test("broken YAML is reported with its place", () => {
  assert.throws(() => parseReviewFile("version: 1\noutputs: [\n", "r.yaml"), (e: Error) => /r\.yaml:\d+:\d+: error/.test(e.message));
});

test("the file sits beside the manifest; the emulated one apart, named as the emulated lockfile is", () => {
  assert.is(reviewFilePathFor("/p/demo.yaml"), "/p/demo.review.yaml");
  assert.is(reviewFilePathFor("/p/demo.YML"), "/p/demo.review.yaml");
  assert.is(emulatedReviewFilePath("/p/demo.review.yaml"), "/p/demo.emulate.review.yaml");
});

test("written atomically: no temp file left, a missing file reads as empty, an empty file too", async () => {
  const dir = mkdtempSync(join(tmpdir(), "omnibatch-review-"));
  try {
    const path = join(dir, "m.review.yaml");
    assert.equal(readReviewFile(path), { version: 1, outputs: [] });
    const file = withDecisions({ version: 1, outputs: [] }, [entry("d-a", 1, sha("a"), "rejected"), entry("d-a", 0, sha("b"), "approved")]);
    await writeReviewFile(path, file);
    assert.equal(readdirSync(dir), ["m.review.yaml"]);
    assert.equal(readReviewFile(path), file);
    assert.ok(readFileSync(path, "utf8").indexOf("output: 0") < readFileSync(path, "utf8").indexOf("output: 1"));
    writeFileSync(path, "# nothing yet\n");
    assert.equal(readReviewFile(path), { version: 1, outputs: [] });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
