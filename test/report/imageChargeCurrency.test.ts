// Image tasks report cash charges without a currency (they are in the account's): with no
// budget and no prices, the ones recorded before the first video charge named it kept
// none, and the billing summary (status "Spent:", billing.*) showed "? 0.048; USD 0.936"
// for good. They are read in the one currency the account's charges name.

import { test } from "uvu";
import * as assert from "uvu/assert";
import { accountCurrency } from "../../src/money/charges.js";
import { summarizeBilling } from "../../src/report/summarizeBilling.js";
import type { LockFile, LockTask } from "../../src/state/LockFile.js";

const task = (job: string, kind: "video" | "image", billing: LockTask["billing"]): LockTask => ({
  job, kind, vars: {}, dir: `${job}/x`, request_hash: "abc", take: 1, attempt: 1, state: "downloaded", updated_at: 1, outputs: [], billing,
});
const image = (amount: string) => task("stills", "image", [{ charge_type: "cash", amount, list_price: amount }]);
const video = (amount: string, currency: "USD" | "CNY") => task("clips", "video", [{ charge_type: "cash", cash_type: "balance", amount, currency, list_price: amount }]);

test("accountCurrency: the one currency the cash charges name; none or several give undefined", () => {
  assert.is(accountCurrency([image("0.024").billing, video("0.28", "USD").billing, video("0.35", "USD").billing]), "USD");
  assert.is(accountCurrency([image("0.024").billing]), undefined);
  assert.is(accountCurrency([video("0.28", "USD").billing, video("2", "CNY").billing]), undefined);
  assert.is(accountCurrency([[{ charge_type: "unit", amount: "1", package_type: "image" }]]), undefined);
});

test("image charges recorded without a currency count in the account's currency, in totals and per job", () => {
  const lock: LockFile = {
    lockfile_version: 1,
    name: "cur",
    tasks: { a: image("0.024"), b: image("0.024"), c: video("0.28", "USD"), d: video("0.656", "USD") },
  };
  const s = summarizeBilling(lock);
  assert.equal(s.cash.map((c) => [c.currency, c.charged, c.tasks]), [["USD", "0.984", 4]]);
  assert.equal(s.jobs.find((j) => j.job === "stills")!.cash.map((c) => [c.currency, c.charged]), [["USD", "0.048"]]);
});

test("with charges in two currencies, a charge without one stays apart as '?'", () => {
  const lock: LockFile = { lockfile_version: 1, name: "cur", tasks: { a: image("0.024"), c: video("0.28", "USD"), d: video("2", "CNY") } };
  assert.equal(summarizeBilling(lock).cash.map((c) => c.currency), ["?", "CNY", "USD"]);
});

test.run();
