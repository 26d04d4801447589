// Which charges cannot be true (issue 27, item 11): negative, not a decimal number, or
// more than any one task costs. Such a charge is refused, never summed.

import { test } from "uvu";
import * as assert from "uvu/assert";
import { chargeProblem, impossibleCharge, MAX_TASK_CHARGE } from "../../src/money/chargeCheck.js";

test("plausible charges pass: decimal strings from 0 to the ceiling, absent ones", () => {
  for (const v of ["0", "0.35", "1.50", "12", MAX_TASK_CHARGE, "10000.0", undefined, null]) assert.is(chargeProblem(v), undefined, String(v));
});

test("negative, unreadable and absurdly large charges are refused, each with why", () => {
  assert.is(chargeProblem("-5"), "negative");
  assert.is(chargeProblem(-0.5), "negative");
  assert.is(chargeProblem("-0.000001"), "negative");
  for (const v of ["NaN", "Infinity", "1e309", "0x10", "", " ", "1,5", true, {}, []]) assert.is(chargeProblem(v), "not a decimal number", JSON.stringify(v));
  assert.is(chargeProblem("10000.000001"), `more than ${MAX_TASK_CHARGE} for one task`);
  assert.is(chargeProblem("99999999"), `more than ${MAX_TASK_CHARGE} for one task`);
});

test("either task shape: a video task's billing entries, an image task's deductions; the first bad one is named by path", () => {
  assert.equal(impossibleCharge({ billing: [{ charge_type: "cash", amount: "0.28", list_price: "0.35" }, { charge_type: "unit", amount: "-5" }] }), {
    path: "/billing/1/amount",
    value: '"-5"',
    why: "negative",
  });
  assert.equal(impossibleCharge({ billing: [{ amount: "0.28", list_price: "NaN" }] })?.path, "/billing/0/list_price");
  assert.equal(impossibleCharge({ final_unit_deduction: "0", final_balance_deduction: { quota: "-0.024", list_price: "0.03" } }), {
    path: "/final_balance_deduction/quota",
    value: '"-0.024"',
    why: "negative",
  });
  assert.is(impossibleCharge({ final_unit_deduction: "1e9" })?.path, "/final_unit_deduction");
  assert.is(impossibleCharge({ billing: [{ amount: "0.28" }], final_balance_deduction: { quota: "0.024" } }), undefined);
  assert.is(impossibleCharge({ billing: [] }), undefined);
  assert.is(impossibleCharge("not an item"), undefined);
  // A long lie is shown cut short.
  assert.ok(impossibleCharge({ billing: [{ amount: "-".repeat(500) }] })!.value.length < 50);
});

test.run();
