// Which charges a record's change brings (the run's "this run"), and charges that name
// no currency counted all the same.

import { test } from "uvu";
import * as assert from "uvu/assert";
import type { BillingEntry } from "../../src/protocol/wire.js";
import { cashByCurrency, newCharges } from "../../src/money/charges.js";

const bill: BillingEntry[] = [{ charge_type: "cash", amount: "0.024" }];

test("newCharges: a task's finishing answer is a charge; its billing read again once finished is not", () => {
  assert.equal(newCharges("processing", { state: "succeeded", billing: bill }), bill);
  assert.equal(newCharges(undefined, { state: "failed", billing: bill }), bill);
  assert.equal(newCharges("submitting", { state: "succeeded", billing: bill }), bill, "made again after its record was reset");
  assert.equal(newCharges("downloaded", { state: "succeeded", billing: bill }), [], "files fetched again");
  assert.equal(newCharges("succeeded", { state: "failed", billing: bill }), []);
  assert.equal(newCharges("processing", { state: "downloaded", billing: bill }), [], "downloaded follows succeeded, which brought the charge");
});

test("cashByCurrency: charges without a currency, when none is known, are listed under '' rather than dropped", () => {
  assert.equal(cashByCurrency([bill, bill]), { "": "0.048" });
  assert.equal(cashByCurrency([bill], "USD"), { USD: "0.024" });
  assert.equal(cashByCurrency([bill, [{ charge_type: "cash", amount: "1", currency: "CNY" }]]), { CNY: "1.024" });
  assert.equal(cashByCurrency([]), {});
});

test.run();
