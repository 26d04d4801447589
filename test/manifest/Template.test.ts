// Logic-less templates: dotted paths into vars, rows and items; nothing evaluated.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { isTemplateError, parseTemplate, render, type Template } from "../../src/manifest/Template.js";

const scopeOf = (data: Record<string, unknown>) => (n: string) => data[n];
const names = () => ["brand", "row"];
const t = (text: string): Template => {
  const parsed = parseTemplate(text);
  if (isTemplateError(parsed)) throw new Error(parsed.message);
  return parsed;
};

test("text without braces is one literal part", () => {
  assert.equal(t("plain").parts, ["plain"]);
});

test("names, dotted fields and list indexes are filled in as text", () => {
  const r = render(t("{{ brand }} {{row.name}} #{{ row.tags.1 }} {{ row.n }}"), scopeOf({ brand: "Acme", row: { name: "mug", tags: ["a", "b"], n: 3 } }), names);
  assert.equal(r, { ok: true, value: "Acme mug #b 3" });
});

test("an unknown name is an error at the offset of its braces, listing the known names", () => {
  const r = render(t("x {{ nope }}"), scopeOf({}), names);
  assert.equal(r.ok, false);
  if (!r.ok) {
    assert.is(r.offset, 2);
    assert.match(r.message, "unknown name 'nope'");
    assert.match(r.message, "brand, row");
  }
});

test("a missing field names the fields that exist", () => {
  const r = render(t("{{ row.photo }}"), scopeOf({ row: { sku: "A", name: "B" } }), names);
  assert.ok(!r.ok && r.message.includes("'row' has no field 'photo'") && r.message.includes("sku, name"));
});

test("a row inserted whole is an error, not [object Object]", () => {
  const r = render(t("{{ row }}"), scopeOf({ row: { sku: "A" } }), names);
  assert.ok(!r.ok && r.message.includes("not text"));
});

test("expressions are refused: only a name or a dotted path", () => {
  const p = parseTemplate("{{ a + b }}");
  assert.ok(isTemplateError(p) && p.message.includes("only a name or a dotted path"));
});

test("an unclosed template is an error at its opening braces", () => {
  const p = parseTemplate("ab {{ c");
  assert.ok(isTemplateError(p) && p.offset === 3);
});

test("values are inserted as text, never evaluated again", () => {
  const r = render(t("{{ a }}"), scopeOf({ a: "{{ b }}", b: "no" }), names);
  assert.equal(r, { ok: true, value: "{{ b }}" });
});

test.run();
