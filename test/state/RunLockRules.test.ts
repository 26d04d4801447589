// The run lock's pure rules (src/state/RunLockRules.ts): when a lock or a takeover guard
// is stale, how long a taker may act on its judgement, and whether what it moved aside is
// the lock it judged. Examples, then properties over seeded random inputs.

import { test } from "uvu";
import * as assert from "uvu/assert";
import { COARSE_MTIME_MS, isStale, judgementStillValid, movedIsJudged, staleMarginMs } from "../../src/state/RunLockRules.js";
import { rng } from "./randomTask.js";

const NOW = 1_790_000_000_000;
const seen = (ageMs: number, ownerAliveHere: boolean | undefined, staleMs = 30_000) => ({ now: NOW, heartbeat: NOW - ageMs, ownerAliveHere, staleMs });

test("the margin: 2 s for the default 30 s limit, a quarter of a short limit", () => {
  assert.is(staleMarginMs(30_000), 2_000);
  assert.is(staleMarginMs(1_000), 250);
  assert.is(staleMarginMs(0), 0);
});

test("stale: an owner dead on this host at once; otherwise only past the limit and its margin", () => {
  assert.ok(isStale(seen(0, false)), "dead here, heartbeat just now");
  assert.not.ok(isStale(seen(30_001, true)), "alive here, 1 ms past the limit: the margin (a whole-second mtime)");
  assert.not.ok(isStale(seen(31_999, undefined)), "another host, inside the margin");
  assert.not.ok(isStale(seen(32_000, undefined)), "another host, at the margin's end");
  assert.ok(isStale(seen(32_001, undefined)), "another host, past it");
  assert.ok(isStale(seen(40_000, true)), "alive here (a reused pid, or frozen), heartbeat long gone");
  assert.not.ok(isStale(seen(-60_000, undefined)), "a heartbeat in the future (that host's clock ahead) is fresh");
});

test("a taker may act on its judgement only within half the stale limit (its own monotonic clock)", () => {
  assert.ok(judgementStillValid(0, 30_000));
  assert.ok(judgementStillValid(15_000, 30_000));
  assert.not.ok(judgementStillValid(15_001, 30_000));
  assert.not.ok(judgementStillValid(-1, 30_000), "a clock that went back proves nothing");
});

test("what was moved aside is ours to remove only when it is the lock judged stale", () => {
  assert.ok(movedIsJudged("a1", "a1"));
  assert.not.ok(movedIsJudged("a1", "b2"), "another run's lock, placed since");
  assert.not.ok(movedIsJudged("a1", undefined));
  assert.not.ok(movedIsJudged(undefined, "b2"));
  assert.ok(movedIsJudged(undefined, undefined), "the same ownerless folder of an older version");
});

test("properties: over 20,000 random observations", () => {
  const r = rng(20261124);
  for (let i = 0; i < 20_000; i++) {
    const staleMs = Math.floor(r() * 120_000);
    const age = Math.floor((r() - 0.2) * 3 * (staleMs + 3_000));
    const alive = ([true, false, undefined] as const)[Math.floor(r() * 3)];
    const s = seen(age, alive, staleMs);
    const margin = staleMarginMs(staleMs);
    const label = JSON.stringify({ staleMs, age, alive });
    assert.ok(margin >= 0 && margin <= COARSE_MTIME_MS && margin <= staleMs, `margin bounds ${label}`);
    // A dead owner here is stale whatever its heartbeat; otherwise never within limit + margin.
    if (alive === false) assert.ok(isStale(s), `dead here ${label}`);
    else assert.is(isStale(s), age > staleMs + margin, label);
    // Monotone in time: stale now, stale later.
    if (isStale(s)) assert.ok(isStale({ ...s, now: s.now + Math.floor(r() * 60_000) }), `monotone ${label}`);
    // A fresher heartbeat never makes a lock stale that was not.
    if (!isStale(s)) assert.not.ok(isStale({ ...s, heartbeat: s.heartbeat + Math.floor(r() * 60_000) }), `fresher ${label}`);
    // A guard the taker made within the time it may act on is never stale to another taker:
    // its age then is at most half the limit, well inside limit + margin.
    const elapsed = Math.floor(r() * staleMs);
    if (judgementStillValid(elapsed, staleMs)) assert.not.ok(isStale(seen(elapsed, true, staleMs)), `own guard ${label}`);
    // Moved aside: taken only when it is the very lock judged.
    const tokens = ["a", "b", undefined] as const;
    const judged = tokens[Math.floor(r() * 3)];
    const moved = tokens[Math.floor(r() * 3)];
    assert.is(movedIsJudged(judged, moved), judged === moved);
  }
});

test.run();
