// The budget check: charged cash, in-flight estimates and the next task, added exactly.

import { test } from "uvu";
import * as assert from "uvu/assert";
import { spending, wouldExceed, isExhausted } from "../../src/engine/Budget.js";

test("the budget counts charged cash, in-flight estimates and the next task, exactly", () => {
  const spent = spending([[{ charge_type: "cash", amount: "0.1", currency: "USD" }], [{ charge_type: "cash", amount: "0.2", currency: "USD" }, { charge_type: "unit", amount: "5", package_type: "video" }]], [{ currency: "USD", amount: "0.4" }], "USD");
  const limit = { max: "1.0", currency: "USD" };
  assert.ok(!wouldExceed(limit, spent, { currency: "USD", amount: "0.3" }), "0.1 + 0.2 + 0.4 + 0.3 = 1.0 is not over");
  assert.ok(wouldExceed(limit, spent, { currency: "USD", amount: "0.30000001" }));
  assert.ok(!wouldExceed(limit, spent, { currency: "CNY", amount: "100" }), "other currencies do not count");
  assert.ok(!isExhausted(limit, spent));
});

test.run();
