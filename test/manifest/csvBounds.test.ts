// A data file is untrusted input: a CSV under the 256 MB size cap that is one long line
// (50 MB took 1.78 GB of memory, 150 MB ended in a V8 heap abort) is refused at once with
// `file:line:col` (exit 2). A field, a row and the number of columns are bounded
// (MAX_CSV_FIELD_CHARS, MAX_CSV_ROW_CHARS, MAX_CSV_COLUMNS); each is tested at its limit
// (accepted) and just over it (refused), and a large valid file still parses.

import { test } from "uvu";
import * as assert from "uvu/assert";
import { execa } from "execa";
import { fileURLToPath } from "node:url";
import { MAX_CSV_COLUMNS, MAX_CSV_FIELD_CHARS, MAX_CSV_ROW_CHARS, parseCsv, type CsvProblem, type CsvRows } from "../../src/manifest/parseCsv.js";
import { tempManifest } from "./tempManifest.js";

const bin = fileURLToPath(new URL("../../dist/cli/bin.js", import.meta.url));

const rows = (r: CsvRows | CsvProblem[]): CsvRows => {
  if (Array.isArray(r)) throw new Error(`expected rows, got ${JSON.stringify(r)}`);
  return r;
};
const problem = (r: CsvRows | CsvProblem[]): CsvProblem => {
  if (!Array.isArray(r)) throw new Error("expected a problem");
  assert.is(r.length, 1);
  return r[0]!;
};

test("a field of exactly MAX_CSV_FIELD_CHARS is read; one more character is refused at the field's line and column", () => {
  const at = "x".repeat(MAX_CSV_FIELD_CHARS);
  assert.is(rows(parseCsv(`sku,name\nA,${at}\n`)).rows[0]!.name!.length, MAX_CSV_FIELD_CHARS);
  assert.is(rows(parseCsv(`sku,name\nA,"${at}"`)).rows[0]!.name!.length, MAX_CSV_FIELD_CHARS, "quoted, at the end of the file");
  const over = problem(parseCsv(`sku,name\nA,${at}y\n`));
  assert.equal([over.line, over.col], [2, 3]);
  assert.match(over.message, `a field longer than ${MAX_CSV_FIELD_CHARS} characters`);
  const quoted = problem(parseCsv(`sku,name\nA,"${at}y"`));
  assert.equal([quoted.line, quoted.col], [2, 3]);
  const unended = problem(parseCsv(`sku\n${at}y`));
  assert.equal([unended.line, unended.col], [2, 1], "at the end of the file, no newline");
});

test("a row of exactly MAX_CSV_ROW_CHARS is read; one more character is refused at the row's line", () => {
  const columns = 5;
  const width = Math.floor(MAX_CSV_ROW_CHARS / columns);
  const header = Array.from({ length: columns }, (_, i) => `c${i}`).join(",");
  const fields = Array.from({ length: columns }, (_, i) => "v".repeat(i === columns - 1 ? MAX_CSV_ROW_CHARS - (columns - 1) * (width + 1) : width));
  const row = fields.join(",");
  assert.is(row.length, MAX_CSV_ROW_CHARS);
  assert.is(rows(parseCsv(`${header}\n${row}\n`)).rows.length, 1);
  assert.is(rows(parseCsv(`${header}\n${row}`)).rows.length, 1, "the last row, no newline");
  const over = problem(parseCsv(`${header}\n\n${row}v\n`));
  assert.equal([over.line, over.col], [3, 1]);
  assert.match(over.message, `a row longer than ${MAX_CSV_ROW_CHARS} characters`);
  assert.equal([problem(parseCsv(`${header}\n${row}v`)).line], [2], "the last row, no newline");
});

test("MAX_CSV_COLUMNS columns are read; one more is refused at the comma that starts it", () => {
  const header = Array.from({ length: MAX_CSV_COLUMNS }, (_, i) => `c${i}`).join(",");
  assert.is(rows(parseCsv(`${header}\n${"1,".repeat(MAX_CSV_COLUMNS - 1)}1\n`)).header.length, MAX_CSV_COLUMNS);
  const over = problem(parseCsv(`${header},extra\n`));
  assert.equal([over.line, over.col], [1, header.length + 1]);
  assert.match(over.message, `more than ${MAX_CSV_COLUMNS} columns`);
});

test("a large valid file (20,000 rows, 4 MB) still parses, quickly", () => {
  const lines = ["sku,name,description,photo"];
  for (let i = 0; i < 20_000; i++) lines.push(`S-${i},"Product ${i}, blue","${"a long description ".repeat(8)}",assets/p${i}.png`);
  const text = `${lines.join("\r\n")}\r\n`;
  assert.ok(text.length > 3_500_000);
  const t0 = Date.now();
  const got = rows(parseCsv(text));
  assert.is(got.rows.length, 20_000);
  assert.is(got.rows[19_999]!.name, "Product 19999, blue");
  assert.ok(Date.now() - t0 < 10_000, `${Date.now() - t0} ms`);
});

test("validate (the built CLI): a CSV that is one line just over the field limit exits 2 with file:line:col, no stack", async () => {
  const m = tempManifest("version: 1\nname: t\njobs:\n  a:\n    kind: image\n    prompt: \"{{ r.sku }}\"\n    matrix: { r: { rows: rows.csv } }\n", {
    "rows.csv": `sku,${"x".repeat(MAX_CSV_FIELD_CHARS + 1)}`,
  });
  try {
    const r = await execa("node", [bin, "validate", m.file], { reject: false, timeout: 60_000, env: { OMNIBATCH_API_KEY: "" } });
    assert.is(r.exitCode, 2, r.stderr);
    assert.match(r.stderr, /rows\.csv:1:5\b/);
    assert.match(r.stderr, `a field longer than ${MAX_CSV_FIELD_CHARS} characters`);
    assert.not.match(r.stderr, /\n\s+at /);
  } finally {
    m.cleanup();
  }
});

test.run();
