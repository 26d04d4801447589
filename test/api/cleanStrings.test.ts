// cleanStrings, which every answer of the service passes through: a clean answer comes
// back as the same value (nothing copied), a changed one as a copy with every string and
// key cleaned, members in their order, and a "__proto__" key kept as an own member.

import { suite } from "uvu";
import * as assert from "uvu/assert";
import { cleanStrings, serviceTextCleaner } from "../../src/api/neutralise.js";

const test = suite("cleanStrings");
const scrub = serviceTextCleaner("sk-clean-Ab12Cd34");

test("a clean answer is returned as the same value, nested objects and arrays included", () => {
  const answer = JSON.parse('{"code":0,"data":{"task_id":"t1","images":[{"url":"http://x/a.png"}],"n":3,"ok":true,"none":null}}');
  assert.is(cleanStrings(answer, scrub), answer);
});

test("a key or value to clean anywhere gives a copy with every member cleaned, in order; the input is untouched", () => {
  const text = '{"a":"plain","b":{"c":"Bearer sk-clean-Ab12Cd34"},"\\u001b[2Jd":["x","\\u202eevil"],"e":1}';
  const answer = JSON.parse(text);
  const out = cleanStrings(answer, scrub) as Record<string, unknown>;
  assert.equal(Object.keys(out), ["a", "b", "\\x1b[2Jd", "e"]);
  assert.equal(out, { a: "plain", b: { c: "Bearer [redacted]" }, "\\x1b[2Jd": ["x", "\\u202eevil"], e: 1 });
  assert.equal(answer, JSON.parse(text));
});

test('a "__proto__" member stays an own member of the copy and never becomes its prototype', () => {
  const answer = JSON.parse('{"__proto__":{"polluted":"sk-clean-Ab12Cd34"},"z":"sk-clean-Ab12Cd34"}');
  const out = cleanStrings(answer, scrub) as Record<string, unknown>;
  assert.is(Object.getPrototypeOf(out), Object.prototype);
  assert.ok(Object.prototype.hasOwnProperty.call(out, "__proto__"));
  assert.equal(Object.getOwnPropertyDescriptor(out, "__proto__")?.value, { polluted: "[redacted]" });
  assert.is((out as { polluted?: unknown }).polluted, undefined);
});

test.run();
