// The ETA comes from the work left, not from the pace so far: tasks not started times the
// typical duration seen in this run, over the slots, plus what the tasks in flight still
// need; unknown until a task of every job with work left has finished. Unit cases, then
// properties over random inputs (seeded, bounded; a failure names its seed).

import { test } from "uvu";
import * as assert from "uvu/assert";
import { estimateEta, formatEta, typicalDuration, type JobWork } from "../../src/cli/eta.js";
import { seeded } from "../engine/machine.js";

const job = (notStarted: number, inFlightAges: number[] = [], durations: number[] = []): JobWork => ({ notStarted, inFlightAges, durations });

test("unknown while a job with work left has no finished task to learn from", () => {
  assert.is(estimateEta([job(10)], 5), undefined);
  assert.is(estimateEta([job(0, [1000])], 5), undefined);
  // Stills are known, reels are not: the whole estimate is unknown (not stills' pace applied to reels).
  assert.is(estimateEta([job(4, [], [10_000]), job(24)], 5), undefined);
});

test("nothing left is 0, even with no evidence", () => {
  assert.is(estimateEta([], 5), 0);
  assert.is(estimateEta([job(0, [], [])], 5), 0);
});

test("the issue's case: 24 reels not started at ~20 s each over 4 slots is 2 minutes, not the seconds the pace so far suggests", () => {
  // 12 stills finished fast; 24 reels left, 4 in flight just started, 20 s typical.
  const eta = estimateEta([job(0, [], Array(12).fill(3000)), job(20, [0, 0, 0, 0], [20_000])], 4)!;
  assert.is(eta, (24 * 20_000) / 4);
  assert.is(formatEta(eta), "2m");
});

test("tasks in flight count only what they still need; a task past its typical time needs nothing more", () => {
  assert.is(estimateEta([job(0, [5000], [20_000])], 1), 15_000);
  assert.is(estimateEta([job(0, [60_000], [20_000])], 1), 0);
});

test("never less than one task's own duration: more slots do not make a single task faster", () => {
  assert.is(estimateEta([job(1, [], [30_000])], 100), 30_000);
});

test("the typical duration is the median: one slow task does not move it", () => {
  assert.is(typicalDuration([1, 2, 1000]), 2);
  assert.is(typicalDuration([1, 3]), 2);
  assert.is(typicalDuration([]), undefined);
});

test("formatEta: unknown, seconds, minutes, hours", () => {
  assert.is(formatEta(undefined), "unknown");
  assert.is(formatEta(44_400), "44s");
  assert.is(formatEta(125_000), "2m");
  assert.is(formatEta(3_900_000), "1h05m");
});

const randomJobs = (r: ReturnType<typeof seeded>): JobWork[] =>
  Array.from({ length: 1 + r.int(3) }, () =>
    job(
      r.int(50),
      Array.from({ length: r.int(6) }, () => r.int(120_000)),
      Array.from({ length: r.int(4) }, () => 1 + r.int(120_000)),
    ),
  );

test("properties: more work never shortens the ETA, more slots never lengthen it, known iff every job with work has evidence", () => {
  for (let seed = 1; seed <= 500; seed++) {
    const r = seeded(seed);
    const jobs = randomJobs(r);
    const slots = 1 + r.int(20);
    const eta = estimateEta(jobs, slots);
    const evidence = jobs.every((j) => j.notStarted + j.inFlightAges.length === 0 || j.durations.length > 0);
    assert.is(eta !== undefined, evidence, `seed ${seed}: known iff evidence`);
    if (eta === undefined) continue;
    assert.ok(eta >= 0 && Number.isFinite(eta), `seed ${seed}: finite, not negative`);
    const more = jobs.map((j, i) => (i === 0 ? { ...j, notStarted: j.notStarted + 1 + r.int(10) } : j));
    assert.ok(estimateEta(more, slots)! >= eta, `seed ${seed}: more tasks not started`);
    assert.ok(estimateEta(jobs, slots + 1 + r.int(10))! <= eta, `seed ${seed}: more slots`);
    const older = jobs.map((j) => ({ ...j, inFlightAges: j.inFlightAges.map((a) => a + 1000) }));
    assert.ok(estimateEta(older, slots)! <= eta, `seed ${seed}: time passing on tasks in flight`);
    // With one slot it is exactly the sum of the work (no rounding hides a task).
    const typical = (j: JobWork) => typicalDuration(j.durations) ?? 0;
    const total = jobs.reduce((n, j) => n + j.notStarted * typical(j) + j.inFlightAges.reduce((k, a) => k + Math.max(0, typical(j) - a), 0), 0);
    assert.is(estimateEta(jobs, 1), total, `seed ${seed}: one slot is the sum of the work`);
  }
});

test.run();
