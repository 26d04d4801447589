// Folder names for results: safe on every OS, bounded, never climbing out of outputs.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { comboFolder, describeVars, folderPath, folderSegment } from "../../src/manifest/outputFolder.js";

test("separators, dots, control and reserved characters never survive in a segment", () => {
  for (const bad of ["../..", "a/b", "a\\b", "x\u0000y", "c:d", "what?*", "..hidden", "trailing. "]) {
    const s = folderSegment(bad);
    assert.not.match(s, /[\/\\:\u0000-\u001f?*]/, bad);
    assert.ok(s !== "." && s !== ".." && !s.startsWith("."), `${bad} -> ${s}`);
    assert.ok(!s.endsWith(".") && !s.endsWith(" "), `${bad} -> ${s}`);
  }
});

test("Windows device names get a prefix, empty text a placeholder, long text a bound", () => {
  assert.is(folderSegment("CON"), "_CON");
  assert.is(folderSegment("nul.txt"), "_nul.txt");
  assert.is(folderSegment(""), "_");
  assert.is(folderSegment("x".repeat(500)).length, 60);
});

test("a template path keeps its parts but drops '..' and empty parts", () => {
  assert.is(folderPath("../a//b/./c"), "a/b/c");
  assert.is(folderPath("/etc/passwd"), "etc/passwd");
  assert.is(folderPath(".."), "_");
});

test("combination folders join values; rows contribute their id-like field", () => {
  assert.is(comboFolder({ product: { name: "Mug", sku: "A-1" }, style: "studio light" }), "A-1_studio-light");
  assert.is(comboFolder({}), "task");
  assert.is(comboFolder({ row: { colour: "red" } }), "red");
});

test("matrix values are described compactly for messages", () => {
  assert.is(describeVars({ product: { sku: "A-1" }, style: "street" }), "product=A-1 style=street");
  assert.is(describeVars({}), "(no matrix)");
});

test.run();
