// Adversarial: the unknown-outcome window must start when the create could last have
// landed, not when its request left. A slow create (the service carries it out just
// before the client gives up at 30 s, or just before a kill -9) makes the task late;
// a service whose visibility lag is well inside the window must not get a second
// create from a "not found" lookup that started `unknownOutcomeWindow` after the send.
// Pure: events by hand, no I/O.

import { test } from "uvu";
import * as assert from "uvu/assert";
import { Duration } from "effect";
import { makePolicy } from "../../src/policy/Policy.js";
import { Machine, makeTable, ofTag, task } from "./machine.js";

const window = Duration.toMillis(makePolicy(1).unknownOutcomeWindow);
const lag = 5_000; // the service's visibility lag: far inside the window

test("a create that timed out 30 s after its send is not sent again by a lookup one window after the send", () => {
  const m = new Machine(makeTable());
  m.feed({ _tag: "Admit", now: 0, task: task("a"), firstAttempt: 1, front: false });
  assert.is(ofTag(m.feed({ _tag: "Tick", now: 0 }), "Create").length, 1);
  // Sent at 0; the service carried it out at 29_900 (visible from 29_900 + lag); the client timed out at 30_000.
  m.feed({ _tag: "Unknown", now: 30_000, id: "a", message: "no answer within 30000 ms", sentAt: 0, exists: false, intentRecorded: true });
  const startedAt = Math.max(window, 30_000 + 1);
  assert.ok(startedAt < 29_900 + lag + window, "the lookup is inside (landing + window)");
  const polled = m.feed({ _tag: "Polled", now: startedAt + 5, asked: [], views: [], lookedUp: { ids: ["a"], found: new Map(), startedAt } });
  assert.is(ofTag(polled, "Record").length, 0, "not recorded planned");
  const creates = ofTag(m.feed({ _tag: "Tick", now: startedAt + 6 }), "Create");
  assert.is(creates.length, 0, "no second create while the task created at 29.9 s may still be invisible");
});

test("after kill -9, a `submitting` task whose slow create landed just before the kill is not sent again one window after submitted_at", () => {
  const m = new Machine(makeTable());
  // Sent at 0, the service carried it out at 58_000, the run was killed at 58_500 and restarted at 59_000.
  m.feed({ _tag: "Admit", now: 59_000, task: task("a"), firstAttempt: 1, front: false, known: { state: "submitting", submitted_at: 0 } });
  const entry = m.table.entries.get("a")!;
  assert.is(entry.phase, "inflight");
  const startedAt = 60_000; // a lookup one window after submitted_at; the task shows only from 63_000
  const polled = m.feed({ _tag: "Polled", now: startedAt + 5, asked: [], views: [], lookedUp: { ids: ["a"], found: new Map(), startedAt } });
  assert.is(ofTag(polled, "Record").length, 0, "not recorded planned");
  assert.is(entry.phase, "inflight");
  assert.is(ofTag(m.feed({ _tag: "Tick", now: startedAt + 6 }), "Create").length, 0, "no second create");
});

test.run();
