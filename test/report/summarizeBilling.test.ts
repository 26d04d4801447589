import { test } from "uvu";
import * as assert from "uvu/assert";
import { summarizeBilling } from "../../src/report/summarizeBilling.js";
import { nearingDeletion } from "../../src/report/nearingDeletion.js";
import type { LockFile } from "../../src/state/LockFile.js";
import { fixtureLock, NOW } from "./fixtureLock.js";

test("cash totals are exact sums, CNY and USD apart, test_balance apart from balance", () => {
  const s = summarizeBilling(fixtureLock);
  assert.equal(s.cash, [
    { currency: "CNY", cash_type: "balance", charged: "1.05", list_price: "1.50", saving: "0.45", tasks: 1 },
    // 0.1 + 0.2 + 0.7 = 1.0 exactly; 0.2 + 0.25 + 1.0 = 1.45
    { currency: "USD", cash_type: "balance", charged: "1.0", list_price: "1.45", saving: "0.45", tasks: 3 },
    { currency: "USD", cash_type: "test_balance", charged: "5.5", list_price: "5.5", saving: "0.0", tasks: 1 },
  ]);
});

test("units are summed per package type", () => {
  assert.equal(summarizeBilling(fixtureLock).units, [
    { package_type: "image", units: "2.5", tasks: 2 },
    { package_type: "video", units: "3", tasks: 1 },
  ]);
});

test("counts per state, per job, and failed tasks with their reason and zero charge", () => {
  const s = summarizeBilling(fixtureLock);
  assert.is(s.tasks, 10);
  assert.equal(s.states, { planned: 0, submitting: 0, submitted: 0, processing: 1, succeeded: 1, downloaded: 6, failed: 1, rejected: 1 });
  assert.equal(s.jobs.map((j) => [j.job, j.tasks, j.states.downloaded]), [["clips", 6, 4], ["keyframes", 4, 2]]);
  assert.equal(s.jobs[1]!.cash, []);
  assert.equal(s.failed, [
    { id: "spring-keyframes-g", job: "keyframes", state: "failed", task_id: "t-g", code: 1301, reason: "content risk | prompt, rejected", cash: [], units: [] },
    { id: "spring-keyframes-h", job: "keyframes", state: "rejected", code: 1201, reason: "bad resolution", cash: [], units: [] },
  ]);
});

test("a thousand random amounts total to their independent exact sum", () => {
  let seed = 7;
  const rand = () => ((seed = (seed * 48271) % 2147483647), seed);
  const tasks: Record<string, LockFile["tasks"][string]> = {};
  let cents = 0n; // independent sum, in integer thousandths
  for (let i = 0; i < 1000; i++) {
    const thousandths = BigInt(rand() % 100_000);
    cents += thousandths;
    const amount = `${thousandths / 1000n}.${(thousandths % 1000n).toString().padStart(3, "0")}`;
    tasks[`t${i}`] = { ...fixtureLock.tasks["spring-clips-b"]!, billing: [{ charge_type: "cash", cash_type: "balance", currency: "USD", amount, list_price: amount }] };
  }
  const s = summarizeBilling({ lockfile_version: 1, name: "x", tasks });
  assert.is(s.cash[0]!.charged, `${cents / 1000n}.${(cents % 1000n).toString().padStart(3, "0")}`);
});

test("nearingDeletion flags results not downloaded within warnDays of the 30-day deletion", () => {
  const t = fixtureLock.tasks;
  assert.is(nearingDeletion(t["spring-clips-j"]!, NOW), true); // 27 days old, not downloaded
  assert.is(nearingDeletion(t["spring-clips-j"]!, NOW, 2), false);
  assert.is(nearingDeletion(t["spring-clips-a"]!, NOW + 40 * 86_400_000), false); // downloaded: safe
  assert.is(nearingDeletion(t["spring-clips-i"]!, NOW), false); // still processing, fresh
});

test.run();
