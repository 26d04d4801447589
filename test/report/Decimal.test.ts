import { test } from "uvu";
import * as assert from "uvu/assert";
import { Decimal } from "../../src/report/Decimal.js";

test("0.1 + 0.2 is exactly 0.3", () => {
  assert.is(Decimal.of("0.1").plus(Decimal.of("0.2")).toString(), "0.3");
});

test("ten thousand 0.01 amounts sum to exactly 100.00", () => {
  assert.is(Decimal.sum(Array.from({ length: 10_000 }, () => "0.01")).toString(), "100.00");
});

test("scales align and signs work", () => {
  assert.is(Decimal.of("1.5").plus(Decimal.of("0.25")).toString(), "1.75");
  assert.is(Decimal.of("0.35").minus(Decimal.of("0.50")).toString(), "-0.15");
  assert.is(Decimal.of("-0.05").toString(), "-0.05");
  assert.is(Decimal.of("+3").toString(2), "3.00");
  assert.is(Decimal.of("12.3").toString(2), "12.30");
  assert.is(Decimal.zero.toString(2), "0.00");
  assert.is(Decimal.of("0.50").compare(Decimal.of("0.5")), 0);
  assert.is(Decimal.of("0.49").compare(Decimal.of("0.5")), -1);
});

test("amounts beyond float precision stay exact", () => {
  assert.is(Decimal.of("9007199254740993.000000001").plus(Decimal.of("0.000000001")).toString(), "9007199254740993.000000002");
});

test("malformed amounts are refused", () => {
  assert.is(Decimal.parse("1e3"), undefined);
  assert.is(Decimal.parse(""), undefined);
  assert.is(Decimal.parse("1.2.3"), undefined);
  assert.throws(() => Decimal.of("abc"), /not a decimal number: "abc"/);
});

test.run();
