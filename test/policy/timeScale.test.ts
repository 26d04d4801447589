// OMNIBATCH_TIME_SCALE applies only where the service is an emulator (--emulate, a
// loopback address); elsewhere it is ignored with a warning. And whatever policy a run
// is given, its waits that guard against paying twice stay at the real service's values
// against a service that is not on this machine. Pure rules.

import { Duration } from "effect";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { livePolicy, makePolicy, withSafetyFloors } from "../../src/policy/Policy.js";
import { timeScaleFor } from "../../src/policy/timeScale.js";

const remote = { emulated: false, url: "https://api.example.com/v1" };

test("the time scale applies to --emulate and to a service on loopback by name or address", () => {
  assert.equal(timeScaleFor("0.05", { emulated: true, url: "" }), { scale: 0.05 });
  for (const url of ["http://127.0.0.1:4010", "http://localhost:4010/v1", "http://[::1]:8080", "http://emu.localhost:9"]) {
    assert.equal(timeScaleFor("0.05", { emulated: false, url }), { scale: 0.05 }, url);
  }
});

test("the time scale is ignored with a warning naming the service when the service is not on loopback", () => {
  for (const url of ["https://api.example.com/v1", "http://10.0.0.5:8080", "http://192.168.1.2", "http://[2001:db8::1]/", "http://127.0.0.1.example.com"]) {
    const choice = timeScaleFor("0.05", { emulated: false, url });
    assert.is(choice.scale, undefined, url);
    assert.match(choice.warning ?? "", /^OMNIBATCH_TIME_SCALE=0\.05 ignored: it is for an emulator on this machine/, url);
    assert.ok(choice.warning!.includes(new URL(url).origin), url);
  }
});

test("an unset or empty time scale is no choice and no warning; a malformed one is ignored with a warning", () => {
  assert.equal(timeScaleFor(undefined, remote), { scale: undefined });
  assert.equal(timeScaleFor("  ", remote), { scale: undefined });
  for (const text of ["abc", "0", "-1", "2", "Infinity", "NaN"]) {
    const choice = timeScaleFor(text, { emulated: true, url: "" });
    assert.is(choice.scale, undefined, text);
    assert.match(choice.warning ?? "", /must be a number above 0 and at most 1/, text);
  }
});

test("withSafetyFloors keeps the unknown-outcome window and missingAfter at least the live ones, and the rest as given", () => {
  const fast = makePolicy(0.05);
  const floored = withSafetyFloors(fast);
  assert.is(Duration.toMillis(floored.unknownOutcomeWindow), 60_000);
  assert.is(Duration.toMillis(floored.missingAfter), 600_000);
  assert.is(Duration.toMillis(floored.noSlotWait), Duration.toMillis(fast.noSlotWait));
  assert.is(floored.scale, 0.05);
  // A longer window than the live one is kept.
  const slow = { ...livePolicy, unknownOutcomeWindow: Duration.minutes(5) };
  assert.is(Duration.toMillis(withSafetyFloors(slow).unknownOutcomeWindow), 300_000);
});

test.run();
