// The slot-share rule (src/policy/slotShare.ts), event by event: a 1303 lowers the limit
// multiplicatively and quiets the kind for a wait that doubles with refusals in a row;
// creates refused together count once; an end of one of the run's own tasks ends the wait
// and grows the limit by one slot per limit's worth of ends, up to the ceiling.

import { Duration } from "effect";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { makePolicy, slotShareRule } from "../../src/policy/Policy.js";
import { mayStart, nextShare, noSlotWaitMs, slotsAllowed, startShare, type SlotShare, type SlotShareRule } from "../../src/policy/slotShare.js";

const rule: SlotShareRule = { decrease: 0.5, increase: 1, waitMs: 2_000, waitMaxMs: 16_000, retryAfterCapMs: 20_000 };
const refused = (s: SlotShare, now: number, holding: number, retryAfterMs?: number) =>
  nextShare(rule, s, { _tag: "Refused", now, holding, slots: 1, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) });
const ended = (s: SlotShare, times = 1) => {
  for (let i = 0; i < times; i++) s = nextShare(rule, s, { _tag: "Ended" });
  return s;
};

test("a fresh share allows the ceiling at once; a task bigger than the limit may start alone", () => {
  const s = startShare(5);
  assert.is(slotsAllowed(s), 5);
  assert.ok(mayStart(s, 4, 1, 0));
  assert.not.ok(mayStart(s, 5, 1, 0));
  assert.ok(mayStart(s, 0, 9, 0), "alone, whatever its size");
  assert.not.ok(mayStart(s, 1, 9, 0));
});

test("a 1303 drops the limit to decrease × (held + refused), never below one nor above the limit in use", () => {
  let s = refused(startShare(8), 1_000, 5);
  assert.is(s.limit, 3, "0.5 × 6");
  assert.is(slotsAllowed(s), 3);
  s = refused(s, 10_000, 7);
  assert.is(s.limit, 3, "a refusal never raises it");
  assert.is(refused(startShare(8), 0, 0).limit, 1, "holding nothing: one slot, not zero");
});

test("after a 1303 no create leaves for the wait, doubled per refusal in a row up to the cap; an accepted create resets the doubling", () => {
  let s = refused(startShare(5), 1_000, 0);
  assert.is(s.quietUntil, 3_000);
  assert.not.ok(mayStart(s, 0, 1, 2_999), "not even alone");
  assert.ok(mayStart(s, 0, 1, 3_000));
  s = refused(s, 3_100, 0);
  assert.is(s.quietUntil, 3_100 + 4_000);
  s = refused(s, 7_100, 0);
  s = refused(s, 15_100, 0);
  assert.is(s.quietUntil, 15_100 + 16_000, "the fourth in a row: 16 s, the cap");
  s = refused(s, 31_100, 0);
  assert.is(s.quietUntil - 31_100, 16_000, "capped");
  s = nextShare(rule, s, { _tag: "Accepted" });
  assert.is(s.refusedInRow, 0);
  s = refused(s, 50_000, 1);
  assert.is(s.quietUntil, 52_000, "the first wait again");
  assert.equal([0, 1, 2, 3, 4, 9].map((n) => noSlotWaitMs(rule, n)), [2_000, 4_000, 8_000, 16_000, 16_000, 16_000]);
});

test("creates refused together (before the wait ends) count once toward the next wait", () => {
  let s = refused(startShare(5), 1_000, 3);
  s = refused(s, 1_050, 2);
  s = refused(s, 1_100, 1);
  assert.is(s.refusedInRow, 1);
  assert.is(s.quietUntil, 3_100, "the first wait, from the last of them");
  assert.is(s.limit, 1, "but each one's evidence lowers the limit: 0.5 × (1 + 1)");
});

test("a longer Retry-After is honoured, up to its cap", () => {
  assert.is(refused(startShare(5), 0, 0, 9_000).quietUntil, 9_000);
  assert.is(refused(startShare(5), 0, 0, 1_000).quietUntil, 2_000);
  assert.is(refused(startShare(5), 0, 0, 90_000).quietUntil, 20_000);
});

test("one of the run's own tasks ending ends the wait (its slot is free) and grows the limit by 1 / limit", () => {
  let s = refused(startShare(5), 1_000, 3);
  assert.is(s.limit, 2);
  s = ended(s);
  assert.is(s.quietUntil, 0);
  assert.ok(mayStart(s, 1, 1, 1_001));
  assert.is(s.limit, 2.5);
  s = ended(s);
  assert.is(slotsAllowed(s), 3, "two ends at 2 slots: one slot more");
  s = ended(s, 3);
  assert.is(slotsAllowed(s), 4, "three ends at 3 slots: one more");
});

test("a run alone climbs back from one slot to the ceiling, and no further, in the ends of one slot per limit", () => {
  let s = refused(startShare(9), 0, 0);
  assert.is(slotsAllowed(s), 1);
  let ends = 0;
  while (slotsAllowed(s) < 9 && ends < 1_000) {
    s = ended(s);
    ends++;
  }
  assert.is(ends, 1 + 2 + 3 + 4 + 5 + 6 + 7 + 8);
  s = ended(s, 50);
  assert.is(s.limit, 9);
});

test("the policy's numbers reach the rule, scaled with the policy", () => {
  const r = slotShareRule(makePolicy(0.02));
  assert.is(r.waitMs, 40);
  assert.is(r.waitMaxMs, 1_280);
  assert.is(r.decrease, makePolicy(1).slotDecrease);
  assert.is(r.retryAfterCapMs, Duration.toMillis(makePolicy(0.02).retryAfterCap));
  assert.ok(r.decrease > 0 && r.decrease < 1, "a refusal must lower the limit below what was asked for");
});

test.run();
