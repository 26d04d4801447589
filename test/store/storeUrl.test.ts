// The pure parts of stores: parsing s3://bucket/prefix, keys under a prefix, and pull's
// --only/--where selection.

import { suite } from "uvu";
import * as assert from "uvu/assert";
import { parseWhere, selected } from "../../src/run/pullSelection.js";
import { isStoreUrl, objectKey, parseStoreUrl, relativeKey, type StoreLocation } from "../../src/fs/StoreUrl.js";

const test = suite("store url");

test("s3://bucket/prefix gives bucket and prefix; keys are the local relative paths under it", () => {
  const l = parseStoreUrl("s3://my-results/ci/demo/") as StoreLocation;
  assert.equal([l.bucket, l.prefix, l.url], ["my-results", "ci/demo", "s3://my-results/ci/demo"]);
  assert.is(objectKey(l, "keyframes/a/image-1.png"), "ci/demo/keyframes/a/image-1.png");
  assert.is(relativeKey(l, "ci/demo/keyframes/a/image-1.png"), "keyframes/a/image-1.png");
  assert.is(relativeKey(l, "ci/demo2/x"), undefined);
  const bare = parseStoreUrl("s3://bucket") as StoreLocation;
  assert.is(objectKey(bare, "a/b.png"), "a/b.png");
  assert.ok(isStoreUrl("S3://x/y"));
  assert.not.ok(isStoreUrl("outputs/s3"));
});

test("a bad bucket name or a prefix with empty, '.' or '..' parts is refused with a reason", () => {
  for (const bad of ["s3://", "s3://Upper/x", "s3://ab", "s3://b_u/x", "s3://bucket/a//b", "s3://bucket/../x", "http://bucket/x"]) {
    const r = parseStoreUrl(bad);
    assert.ok("problem" in r, bad);
  }
});

test("--where key=value matches matrix values, dotted for a row's column; --only picks jobs", () => {
  const w = parseWhere(["style=studio", "product.sku=A-1"]);
  assert.ok(Array.isArray(w));
  const task = { job: "keyframes", vars: { style: "studio", product: { sku: "A-1", name: "Mug" } } };
  assert.ok(selected(task, [], w as never));
  assert.ok(selected(task, ["keyframes"], w as never));
  assert.not.ok(selected(task, ["clips"], w as never));
  assert.not.ok(selected({ ...task, vars: { style: "street", product: { sku: "A-1" } } }, [], w as never));
  assert.not.ok(selected({ ...task, vars: { style: "studio" } }, [], w as never), "a missing value does not match");
  assert.ok("problem" in parseWhere(["nokey"]));
  assert.ok("problem" in parseWhere(["=x"]));
});

test.run();
