// The slot limiter: the slots a run's tasks hold, and the slot-share rule
// (src/policy/slotShare.ts) fed with them: a 1303 lowers the limit from what was held and
// quiets the kind; an end of the run's own task ends the wait and grows it back; a task
// bigger than the limit may still start alone.

import { test } from "uvu";
import * as assert from "uvu/assert";
import { SlotLimiter } from "../../src/engine/SlotLimiter.js";
import type { SlotShareRule } from "../../src/policy/slotShare.js";

const rule: SlotShareRule = { decrease: 0.6, increase: 1, waitMs: 2_000, waitMaxMs: 64_000, retryAfterCapMs: 20_000 };

test("a 1303 lowers the limit from the slots held and quiets the kind; the run's own end lifts the wait and grows it back", () => {
  const s = new SlotLimiter(8, rule);
  s.take(6);
  s.release(1); // the refused task's slot
  const again = s.onNoSlot(1, 10_000);
  assert.is(again, 12_000);
  assert.is(s.limit, 3, "0.6 × (5 held + 1 refused)");
  assert.not.ok(s.fits(1, 11_000), "quiet, and over the limit");
  s.release(3);
  assert.not.ok(s.fits(1, 11_000), "under the limit now, still quiet");
  assert.ok(s.fits(1, 12_000));
  s.onFinished();
  assert.is(s.quietUntil, 0);
  assert.ok(s.fits(1, 11_000), "one of its own tasks ended: its slot is free");
  assert.is(s.limit, 3);
  s.onFinished();
  s.onFinished();
  assert.is(s.limit, 4);
  assert.is(new SlotLimiter(3, rule).limit, 3);
});

test("refusals in a row wait longer; an accepted create starts the doubling over", () => {
  const s = new SlotLimiter(5, rule);
  assert.is(s.onNoSlot(1, 0), 2_000);
  assert.is(s.onNoSlot(1, 2_000), 6_000);
  s.onCreated();
  assert.is(s.onNoSlot(1, 10_000), 12_000);
  assert.is(s.onNoSlot(1, 12_000, 9_000), 21_000, "a longer Retry-After");
});

test("a task bigger than the limit may still start alone", () => {
  const s = new SlotLimiter(2, rule);
  assert.ok(s.fits(9, 0));
  s.take(9);
  assert.ok(!s.fits(1, 0));
});

test.run();
