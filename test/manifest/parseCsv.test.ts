// CSV axes: header row, RFC 4180 quoting, CRLF, BOM; problems with their line.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { parseCsv } from "../../src/manifest/parseCsv.js";

test("rows become objects keyed by the header; quoted commas, quotes and newlines survive", () => {
  const got = parseCsv('sku,name\r\nA,"mug, blue"\r\nB,"say ""hi"""\r\nC,"two\nlines"\r\n');
  assert.ok(!Array.isArray(got));
  if (!Array.isArray(got)) {
    assert.equal(got.rows, [
      { sku: "A", name: "mug, blue" },
      { sku: "B", name: 'say "hi"' },
      { sku: "C", name: "two\nlines" },
    ]);
    assert.equal(got.lines, [2, 3, 4]);
  }
});

test("a UTF-8 BOM is not part of the first column name", () => {
  const got = parseCsv("\ufeffsku\nA\n");
  assert.ok(!Array.isArray(got) && got.header[0] === "sku");
});

test("blank lines are skipped and line numbers stay true", () => {
  const got = parseCsv("a\n\n1\n\n2\n");
  assert.ok(!Array.isArray(got) && got.lines.join() === "3,5");
});

test("a ragged row is reported at its line", () => {
  const got = parseCsv("a,b\n1,2\n3\n");
  assert.ok(Array.isArray(got));
  if (Array.isArray(got)) {
    assert.is(got[0]!.line, 3);
    assert.match(got[0]!.message, "1 field(s) but the header has 2");
  }
});

test("an unclosed quote is reported where the quote opens", () => {
  const got = parseCsv('a\n"x\n');
  assert.ok(Array.isArray(got) && got[0]!.line === 2 && got[0]!.message.includes("unclosed quote"));
});

test("duplicate and empty header names are errors", () => {
  const got = parseCsv("a,a,\n1,2,3\n");
  assert.ok(Array.isArray(got) && got.length === 2);
});

test.run();
