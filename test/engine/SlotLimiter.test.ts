// The AIMD slot limiter: a 1303 lowers the limit to what was in flight; it climbs back
// one slot at a time; a task bigger than the limit may still start alone.

import { test } from "uvu";
import * as assert from "uvu/assert";
import { SlotLimiter } from "../../src/engine/SlotLimiter.js";

test("a 1303 drops the slot limit to what was in flight; it grows back one slot per window, more slowly after each drop", () => {
  const s = new SlotLimiter(8, 1, 1);
  s.take(5);
  s.onNoSlot(5);
  assert.is(s.limit, 5);
  assert.ok(!s.fits(1));
  s.release(1);
  assert.ok(s.fits(1));
  for (let i = 0; i < 9; i++) s.onFinished();
  assert.is(s.limit, 5, "window after one drop: 5 * 2 finishes");
  s.onFinished();
  assert.is(s.limit, 6);
  assert.is(new SlotLimiter(3, 1, 1).limit, 3);
});

test("a task bigger than the limit may still start alone", () => {
  const s = new SlotLimiter(2, 1, 1);
  assert.ok(s.fits(9));
  s.take(9);
  assert.ok(!s.fits(1));
});

test.run();
