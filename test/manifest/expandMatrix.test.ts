// Matrix semantics as in CI matrix syntax: product order, exclude (partial and object
// matches), include (extend matching combinations, never overwrite original values,
// add unmatched entries as new combinations).
import { test } from "uvu";
import * as assert from "uvu/assert";
import { expandMatrix, matches } from "../../src/manifest/expandMatrix.js";

const values = (combos: ReturnType<typeof expandMatrix>) => combos.map((c) => c.values);

test("no axes and no include gives one empty combination", () => {
  assert.equal(values(expandMatrix([])), [{}]);
});

test("the product runs the last axis fastest", () => {
  const got = values(expandMatrix([{ name: "a", values: [1, 2] }, { name: "b", values: ["x", "y"] }]));
  assert.equal(got, [{ a: 1, b: "x" }, { a: 1, b: "y" }, { a: 2, b: "x" }, { a: 2, b: "y" }]);
});

test("exclude removes every combination matching all of its keys (partial entries match many)", () => {
  const got = values(
    expandMatrix([{ name: "a", values: [1, 2] }, { name: "b", values: ["x", "y"] }], [], [{ b: "y" }]),
  );
  assert.equal(got, [{ a: 1, b: "x" }, { a: 2, b: "x" }]);
});

test("exclude matches object values (CSV rows) on the fields it gives, text against numbers", () => {
  const rows = [{ sku: "A-1", n: "1" }, { sku: "B-2", n: "2" }];
  const got = values(
    expandMatrix([{ name: "p", values: rows }, { name: "s", values: ["studio", "street"] }], [], [{ p: { n: 1 }, s: "street" }]),
  );
  assert.equal(got.length, 3);
  assert.not.ok(got.some((c) => (c.p as { sku: string }).sku === "A-1" && c.s === "street"));
});

test("include adds its extra keys to every combination whose original values it matches", () => {
  const got = values(
    expandMatrix([{ name: "os", values: ["linux", "mac"] }, { name: "v", values: [1, 2] }], [{ os: "mac", extra: "m" }]),
  );
  assert.equal(got, [
    { os: "linux", v: 1 },
    { os: "linux", v: 2 },
    { os: "mac", v: 1, extra: "m" },
    { os: "mac", v: 2, extra: "m" },
  ]);
});

test("include never overwrites an original value: a conflicting entry becomes a new combination", () => {
  const got = values(expandMatrix([{ name: "os", values: ["linux"] }], [{ os: "windows", extra: 1 }]));
  assert.equal(got, [{ os: "linux" }, { os: "windows", extra: 1 }]);
});

test("include may overwrite a value added by an earlier include", () => {
  const got = values(expandMatrix([{ name: "os", values: ["linux"] }], [{ color: "red" }, { color: "blue" }]));
  assert.equal(got, [{ os: "linux", color: "blue" }]);
});

test("include with only new keys extends every combination", () => {
  const got = values(expandMatrix([{ name: "a", values: [1, 2] }], [{ tag: "t" }]));
  assert.equal(got, [{ a: 1, tag: "t" }, { a: 2, tag: "t" }]);
});

test("include without axes makes one combination per entry", () => {
  const got = values(expandMatrix([], [{ a: 1 }, { a: 2, b: 3 }]));
  assert.equal(got, [{ a: 1 }, { a: 2, b: 3 }]);
});

test("an excluded combination can be added back by include", () => {
  const got = values(expandMatrix([{ name: "a", values: [1, 2] }], [{ a: 2, x: 1 }], [{ a: 2 }]));
  assert.equal(got, [{ a: 1 }, { a: 2, x: 1 }]);
});

test("include matches the original combinations only, not ones exclude removed", () => {
  const got = values(expandMatrix([{ name: "a", values: [1, 2] }, { name: "b", values: [1] }], [{ a: 1, tag: "t" }], [{ a: 1 }]));
  assert.equal(got, [{ a: 2, b: 1 }, { a: 1, tag: "t" }]);
});

test("matches compares lists by position and objects by the given keys", () => {
  assert.ok(matches({ a: 1, b: 2 }, { a: 1 }));
  assert.not.ok(matches({ a: 1 }, { a: 1, b: 2 }));
  assert.ok(matches([1, 2], [1, 2]));
  assert.not.ok(matches([1, 2], [2, 1]));
  assert.not.ok(matches("x", { a: 1 }));
});

test.run();
