// The lockfile's and reports' JSON: keys sorted at every level, nothing lost. An own key
// `__proto__` (JSON.parse makes one from any text, the service's answers included) must
// come out as a member, not set the copy's prototype and vanish.
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { sortKeys, stableJson, stableJsonLine } from "../../src/state/stableJson.js";

const t = suite("stableJson");

t("keys sorted at every level; undefined members left out; arrays keep their order", () => {
  const value = { b: 1, a: { d: [3, { z: 1, y: 2 }], c: undefined } };
  assert.is(stableJsonLine(value), '{"a":{"d":[3,{"y":2,"z":1}]},"b":1}');
  assert.is(stableJson({ b: 1, a: 2 }), '{\n  "a": 2,\n  "b": 1\n}\n');
});

t("an own __proto__ key survives, at the top and nested, and does not become the prototype", () => {
  const parsed = JSON.parse('{"z":1,"__proto__":{"polluted":true},"m":{"__proto__":"x","a":2}}') as Record<string, unknown>;
  const sorted = sortKeys(parsed) as Record<string, unknown>;
  assert.is(Object.getPrototypeOf(sorted), Object.prototype);
  assert.is((sorted as { polluted?: unknown }).polluted, undefined);
  assert.ok(Object.hasOwn(sorted, "__proto__"));
  assert.is(stableJsonLine(parsed), '{"__proto__":{"polluted":true},"m":{"__proto__":"x","a":2},"z":1}');
  // Read back, it is the same data again.
  assert.is(stableJsonLine(JSON.parse(stableJsonLine(parsed))), stableJsonLine(parsed));
});

t("property: for random objects of random keys (some __proto__), parse(stableJsonLine(v)) has the same members", () => {
  // mulberry32: a small PRNG whose low bits are usable (an LCG's made only primitives here).
  let seed = 7;
  const rand = (n: number) => {
    seed = (seed + 0x6d2b79f5) | 0;
    let x = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) % n;
  };
  let withProto = 0;
  const keys = ["a", "b", "__proto__", "constructor", "toString", "k1", "é"];
  const make = (depth: number): unknown => {
    if (depth === 0 || rand(3) === 0) return rand(2) === 0 ? rand(100) : `s${rand(10)}`;
    if (rand(4) === 0) return Array.from({ length: rand(3) }, () => make(depth - 1));
    const names = Array.from(new Set(Array.from({ length: rand(5) }, () => keys[rand(keys.length)]!)));
    if (names.includes("__proto__")) withProto++;
    const text = `{${names.map((k) => `${JSON.stringify(k)}:${JSON.stringify(make(depth - 1))}`).join(",")}}`;
    return JSON.parse(text);
  };
  const members = (v: unknown): unknown =>
    Array.isArray(v) ? v.map(members) : v !== null && typeof v === "object" ? Object.keys(v).sort().map((k) => [k, members((v as Record<string, unknown>)[k])]) : v;
  for (let i = 0; i < 500; i++) {
    const v = make(4);
    assert.equal(members(JSON.parse(stableJsonLine(v))), members(v), stableJsonLine(v));
  }
  assert.ok(withProto >= 50, `the values drawn hold __proto__ often enough (${withProto} objects)`);
});

t.run();
