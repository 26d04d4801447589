// The one money type (src/money/): exact sums whatever the inputs, manifest prices read
// as written, only plain decimal strings accepted from outside, negative charges never
// lowering what was spent, and the one image output-count rule (src/rules/outputCount.ts).
import { test } from "uvu";
import * as assert from "uvu/assert";
import { cashCharged } from "../../src/money/charges.js";
import { amountOf, formatAmount, fromPrice, parseAmount, sum, times } from "../../src/money/Money.js";
import { imageOutputs } from "../../src/rules/outputCount.js";

test("sums are exact: 0.1 + 0.2 is 0.3, and 0.07 per second times 5 s is 0.35", () => {
  assert.is(formatAmount(sum([amountOf("0.1"), amountOf("0.2")])), "0.3");
  assert.is(formatAmount(times(fromPrice(0.07)!, 5)), "0.35");
  assert.is(formatAmount(times(fromPrice(1e-7)!, 3)), "0.0000003");
  // A float loop would drift: ten thousand 0.01 add up to exactly 100.
  assert.is(formatAmount(sum(Array.from({ length: 10_000 }, () => amountOf("0.01")))), "100");
});

test("only plain decimal strings are amounts: exponents, NaN, hex and empty text are not", () => {
  for (const bad of ["1e309", "NaN", "0x10", "", "-", "1.", ".5", "Infinity"]) assert.is(parseAmount(bad), undefined, bad);
  assert.is(formatAmount(parseAmount(" -0.350 ")!), "-0.35");
  assert.is(formatAmount(amountOf(undefined)), "0");
  assert.is(fromPrice(Number.NaN), undefined);
});

test("money shows at least the asked digits after the point", () => {
  assert.is(formatAmount(amountOf("1"), 2), "1.00");
  assert.is(formatAmount(amountOf("1.005"), 2), "1.005");
});

test("cash charged: only cash, the asked currency (or none given); negative or unreadable amounts never lower it", () => {
  const billing = [
    { charge_type: "cash", amount: "0.35", currency: "USD" },
    { charge_type: "cash", amount: "0.15" },
    { charge_type: "cash", amount: "1", currency: "CNY" },
    { charge_type: "unit", amount: "3", package_type: "video" },
    { charge_type: "cash", amount: "-5", currency: "USD" },
    { charge_type: "cash", amount: "1e309", currency: "USD" },
  ] as never;
  assert.is(formatAmount(cashCharged(billing, "USD")), "0.5");
});

test("image outputs: n for a single result, series_amount (default 4) for a series, auto expected 4 and at most 9", () => {
  assert.equal(imageOutputs({}), { expected: 1, atMost: 1 });
  assert.equal(imageOutputs({ n: 3 }), { expected: 3, atMost: 3 });
  assert.equal(imageOutputs({ result_type: "series", n: 3 }), { expected: 4, atMost: 4 });
  assert.equal(imageOutputs({ result_type: "series", series_amount: 6 }), { expected: 6, atMost: 6 });
  assert.equal(imageOutputs({ result_type: "series", series_amount: "auto" }), { expected: 4, atMost: 9 });
  assert.equal(imageOutputs({ result_type: "series", series_amount: "{{ amount }}" }), { expected: 4, atMost: 4 });
  assert.equal(imageOutputs({ n: 12 }), { expected: 1, atMost: 1 }, "out of range: the rules report it; counted as the default");
});

test.run();
