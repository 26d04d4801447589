// The Range header the review server honours for a seeking video (src/cli/reviewServer/byteRange.ts):
// each form a browser sends, the forms a server may ignore, and the unsatisfiable ones
// (416); plus, over many sizes and headers, that every range given lies inside the file.

import { test } from "uvu";
import * as assert from "uvu/assert";
import { parseRange } from "../../src/cli/reviewServer/byteRange.js";

test("bytes=a-b, a- and -n: inclusive offsets clipped to the file", () => {
  assert.equal(parseRange("bytes=0-99", 1000), { start: 0, end: 99 });
  assert.equal(parseRange("bytes=500-", 1000), { start: 500, end: 999 });
  assert.equal(parseRange("bytes=900-5000", 1000), { start: 900, end: 999 });
  assert.equal(parseRange("bytes=-100", 1000), { start: 900, end: 999 });
  assert.equal(parseRange("bytes=-5000", 1000), { start: 0, end: 999 });
  assert.equal(parseRange("BYTES = 3 - 4", 10), { start: 3, end: 4 });
});

test("no header, another unit, several ranges or a malformed one: the whole file", () => {
  for (const h of [undefined, "items=0-1", "bytes=0-1,5-6", "bytes=", "bytes=-", "bytes=5-2", "bytes=a-b", "bytes=1.5-2", "bytes=99999999999999999999-"]) {
    assert.is(parseRange(h, 1000), undefined, String(h));
  }
});

test("a range that starts at or past the end, or asks for no bytes, is unsatisfiable", () => {
  assert.is(parseRange("bytes=1000-", 1000), "unsatisfiable");
  assert.is(parseRange("bytes=1000-2000", 1000), "unsatisfiable");
  assert.is(parseRange("bytes=-0", 1000), "unsatisfiable");
  assert.is(parseRange("bytes=0-", 0), "unsatisfiable");
  assert.is(parseRange("bytes=-10", 0), "unsatisfiable");
});

test("property: every range given lies inside the file and is what was asked, clipped", () => {
  let seed = 7;
  const rand = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed % n;
  };
  for (let i = 0; i < 5000; i++) {
    const size = rand(3000);
    const a = rand(3500);
    const b = rand(3500);
    const form = rand(3);
    const header = form === 0 ? `bytes=${a}-${b}` : form === 1 ? `bytes=${a}-` : `bytes=-${b}`;
    const r = parseRange(header, size);
    if (r === undefined) {
      assert.ok(form === 0 && b < a, `${header} for ${size} bytes was ignored`);
    } else if (r === "unsatisfiable") {
      assert.ok(size === 0 || (form !== 2 && a >= size) || (form === 2 && b === 0), `${header} for ${size} bytes`);
    } else {
      assert.ok(r.start >= 0 && r.start <= r.end && r.end < size, `${header} for ${size} bytes gave ${r.start}-${r.end}`);
      if (form === 0) assert.equal(r, { start: a, end: Math.min(b, size - 1) });
      if (form === 1) assert.equal(r, { start: a, end: size - 1 });
      if (form === 2) assert.equal(r, { start: Math.max(0, size - b), end: size - 1 });
    }
  }
});

test.run();
