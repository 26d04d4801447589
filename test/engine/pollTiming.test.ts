// Adaptive polling: when the kind's tasks in flight are asked about next, from the
// durations seen so far (pollTiming.ts, DurationEvidence.ts), as unit tests, seeded
// property tests over random inputs, the engine's tick using it, and the policy run in a
// small simulation against the fixed rhythm, a fixed interval and an instant poller, on
// the emulator's own durations (test/bench/pollSimulation.ts).

import { test } from "uvu";
import * as assert from "uvu/assert";
import { Duration } from "effect";
import { DurationEvidence, durationKey } from "../../src/engine/DurationEvidence.js";
import { evidenceDue, nextPollAt, type PollTimingInput, type TimedTask } from "../../src/engine/pollTiming.js";
import { makePolicy } from "../../src/policy/Policy.js";
import type { PlannedTask } from "../../src/manifest/PlannedTask.js";
import { emulatorDurations, periodicAtQueries, queriesForUtilisation, simulatePolling } from "../bench/pollSimulation.js";
import { startEmulator } from "../../src/emulator/Emulator.js";
import { realisticTiming } from "../../src/emulator/EmulatorConfig.js";
import { Machine, makeTable, ofTag, seeded, task, view, type Random } from "./machine.js";

const base = { lastPoll: 0, rhythmMs: 3_000, floorMs: 2_000, ceilingMs: 60_000, idleBudgetMs: 3_000 } as const;
const at = (o: Partial<PollTimingInput> & { tasks: readonly TimedTask[] }) => nextPollAt({ ...base, ...o });

test("with no evidence the poll is due at the fixed rhythm", () => {
  assert.is(at({ tasks: [{ startedAt: 0 }, { startedAt: -5_000, durations: undefined }] }), 3_000);
});

test("one young task whose kind always took 100 s: polled once the expected idleness reaches the budget, at 100 s + 3 s", () => {
  assert.is(at({ lastPoll: 50_000, ceilingMs: 120_000, tasks: [{ startedAt: 0, durations: [100_000, 100_000, 100_000] }] }), 103_000);
});

test("the ceiling bounds the wait however far the likely end is", () => {
  assert.is(at({ tasks: [{ startedAt: 0, durations: [400_000, 420_000] }] }), 60_000);
});

test("a task older than every duration seen has no evidence: back to the rhythm", () => {
  assert.is(at({ lastPoll: 500_000, tasks: [{ startedAt: 0, durations: [100_000, 200_000] }] }), 503_000);
});

test("a task near its likely end is asked about sooner than a young one", () => {
  const durations = [100_000, 150_000, 200_000, 250_000, 300_000];
  const young = at({ lastPoll: 10_000, tasks: [{ startedAt: 0, durations }] });
  const old = at({ lastPoll: 290_000, tasks: [{ startedAt: 0, durations }] });
  assert.ok(old - 290_000 < young - 10_000, `old waits ${old - 290_000} ms, young ${young - 10_000} ms`);
  assert.ok(old - 290_000 < 15_000, `a task about to end is polled within 15 s (${old - 290_000})`);
});

test("a cued task counts as ended at its cue: polled within the budget after it", () => {
  assert.is(at({ lastPoll: 0, ceilingMs: 60_000, tasks: [{ startedAt: 0, durations: [500_000, 600_000], cuedAt: 10_000 }] }), 13_000);
});

test("never sooner than the floor, even with many tasks past their likely end", () => {
  const tasks = Array.from({ length: 8 }, () => ({ startedAt: 0, durations: [1_000, 2_000] }));
  assert.is(at({ lastPoll: 1_500, tasks }), 3_500);
});

// ---- properties, over random inputs (seeded: a failure names its seed) ----

const randomPoints = (r: Random): number[] => {
  const n = 1 + r.int(40);
  return Array.from({ length: n }, () => 1_000 + r.int(500_000)).sort((a, b) => a - b);
};

const randomInput = (r: Random): PollTimingInput => {
  const floorMs = 1 + r.int(5_000);
  const rhythmMs = floorMs + r.int(20_000);
  const ceilingMs = rhythmMs + r.int(100_000);
  const lastPoll = r.int(1_000_000);
  const shared = randomPoints(r);
  const tasks = Array.from({ length: r.int(12) }, (): TimedTask => {
    const startedAt = lastPoll - r.int(600_000) + (r.chance(0.2) ? r.int(30_000) : 0);
    const evidence = r.chance(0.7) ? (r.chance(0.5) ? shared : randomPoints(r)) : undefined;
    return { startedAt, durations: evidence, ...(r.chance(0.1) ? { cuedAt: lastPoll - 5_000 + r.int(20_000) } : {}) };
  });
  return { lastPoll, rhythmMs, floorMs, ceilingMs, idleBudgetMs: 1 + r.int(10_000), tasks };
};

const forSeeds = (name: string, check: (r: Random, seed: number) => void) =>
  test(name, () => {
    for (let seed = 1; seed <= 400; seed++) check(seeded(seed), seed);
  });

forSeeds("property: the next poll is never sooner than the floor nor later than the ceiling after the last one", (r, seed) => {
  const input = randomInput(r);
  const due = nextPollAt(input);
  assert.ok(due >= input.lastPoll + input.floorMs - 1e-9, `seed ${seed}: ${due - input.lastPoll} < floor ${input.floorMs}`);
  assert.ok(due <= input.lastPoll + input.ceilingMs + 1e-9, `seed ${seed}: ${due - input.lastPoll} > ceiling ${input.ceilingMs}`);
});

forSeeds("property: tasks without evidence are never polled later than the rhythm", (r, seed) => {
  const input = randomInput(r);
  const withOne = { ...input, tasks: [...input.tasks, { startedAt: input.lastPoll - r.int(100_000) }] };
  assert.ok(nextPollAt(withOne) <= input.lastPoll + input.rhythmMs, `seed ${seed}`);
  const none = { ...input, tasks: input.tasks.map((t) => ({ startedAt: t.startedAt })) };
  if (none.tasks.length > 0) assert.is(nextPollAt(none), input.lastPoll + input.rhythmMs, `seed ${seed}: no evidence = the rhythm`);
});

forSeeds("property: no starvation: a task older than every duration seen is polled no later than the rhythm, whatever the others", (r, seed) => {
  const input = randomInput(r);
  const points = randomPoints(r);
  // Alive at the last poll and past the longest duration seen for its settings.
  const outlier: TimedTask = { startedAt: input.lastPoll - points[points.length - 1]! - 1 - r.int(1_000_000), durations: points };
  const due = nextPollAt({ ...input, tasks: [...input.tasks, outlier] });
  assert.ok(due <= input.lastPoll + input.rhythmMs, `seed ${seed}: polled ${due - input.lastPoll} ms after the last poll, rhythm ${input.rhythmMs}`);
});

forSeeds("property: one more task in flight never makes the next poll later", (r, seed) => {
  const input = randomInput(r);
  const extra = randomInput(r).tasks[0] ?? { startedAt: input.lastPoll, durations: randomPoints(r) };
  assert.ok(nextPollAt({ ...input, tasks: [...input.tasks, extra] }) <= nextPollAt(input) + 1e-6, `seed ${seed}`);
});

forSeeds("property: a larger idle budget never makes the next poll sooner", (r, seed) => {
  const input = randomInput(r);
  const more = { ...input, idleBudgetMs: input.idleBudgetMs + r.int(5_000) };
  assert.ok(nextPollAt(more) >= nextPollAt(input) - 1e-6, `seed ${seed}`);
});

forSeeds("property: monotone in the evidence: longer durations seen never make a young task's poll sooner", (r, seed) => {
  // Young: no duration seen is shorter than its age at the last poll, so what was seen is its whole distribution.
  const points = randomPoints(r);
  const lastPoll = 1_000_000;
  const tasks: TimedTask[] = Array.from({ length: 1 + r.int(8) }, () => ({ startedAt: lastPoll - r.int(points[0]!), durations: points }));
  const input: PollTimingInput = { lastPoll, rhythmMs: 5_000, floorMs: 1_000, ceilingMs: 1_000_000, idleBudgetMs: 1 + r.int(10_000), tasks };
  const shift = r.int(50_000);
  const stretch = 1 + r.next();
  const longer = points.map((p) => p * stretch + shift);
  const later = nextPollAt({ ...input, tasks: tasks.map((t) => ({ ...t, durations: longer })) });
  assert.ok(later >= nextPollAt(input) - 1e-6, `seed ${seed}`);
});

forSeeds("property: the answer does not depend on the rhythm when every task has evidence (and a cue is never later than the budget after it)", (r, seed) => {
  const input = randomInput(r);
  const e = evidenceDue(input);
  if (!e.anyWithout) assert.is(nextPollAt({ ...input, rhythmMs: input.rhythmMs + 7_000 }), nextPollAt(input), `seed ${seed}`);
  for (const t of input.tasks) {
    if (t.cuedAt === undefined) continue;
    const bound = Math.max(t.cuedAt, input.lastPoll) + input.idleBudgetMs;
    assert.ok(nextPollAt(input) <= Math.max(bound, input.lastPoll + input.floorMs) + 0.02, `seed ${seed}: cue at ${t.cuedAt} polled later than the budget`);
  }
});

// ---- the evidence ----

test("evidence: none until the minimum of samples; then ascending points, at most 32, keeping the shortest and longest", () => {
  const e = new DurationEvidence(5);
  for (const ms of [5, 3, 4, 1]) e.note("k", ms);
  assert.is(e.points("k"), undefined);
  e.note("k", 2);
  assert.equal(e.points("k"), [1, 2, 3, 4, 5]);
  const r = seeded(3);
  for (let i = 0; i < 500; i++) e.note("k", 10 + r.int(1_000));
  e.note("k", 5_000);
  const points = e.points("k")!;
  assert.is(points.length, 32);
  assert.is(points[0], 1);
  assert.is(points[31], 5_000);
  for (let i = 1; i < points.length; i++) assert.ok(points[i]! >= points[i - 1]!);
  e.note("k", -1);
  e.note("k", Number.NaN);
  assert.is(e.count("k"), 506, "negative or non-finite durations (odd service times) are not evidence");
  // Only the most recent 1,000 are kept: a service that got slower is seen as slower.
  for (let i = 0; i < 1_000; i++) e.note("k", 100_000 + i);
  assert.is(e.points("k")![0], 100_000);
  assert.is(e.count("k"), 1_506);
});

test("evidence: the points kept in order as samples come and go equal those of the last 1,000 samples sorted afresh (seeded)", () => {
  // The reference: the points as they were computed before the order was kept (a copy of the ring, sorted).
  const reference = (ring: readonly number[]): number[] => {
    const list = [...ring].sort((a, b) => a - b);
    const n = list.length;
    if (n <= 32) return list;
    const points = Array.from({ length: 32 }, (_, i) => list[Math.min(n - 1, Math.floor(((i + 0.5) / 32) * n))]!);
    points[0] = list[0]!;
    points[31] = list[n - 1]!;
    return points;
  };
  for (const seed of [1, 2, 3]) {
    const r = seeded(seed);
    const e = new DurationEvidence(5);
    const rings = new Map<string, number[]>();
    for (let i = 0; i < 3_000; i++) {
      const key = r.pick(["a", "b"]);
      // Repeated values too (a coarse service clock gives many equal durations).
      const ms = r.chance(0.3) ? 100 * r.int(5) : r.int(100_000);
      e.note(key, ms);
      const ring = rings.get(key) ?? [];
      ring.push(ms);
      if (ring.length > 1_000) ring.shift();
      rings.set(key, ring);
      if (i % 7 === 0 || i > 2_950) {
        for (const [k, list] of rings) {
          if (list.length < 5) assert.is(e.points(k), undefined);
          else assert.equal(e.points(k), reference(list), `seed ${seed}, sample ${i}, key ${k}`);
        }
      }
    }
  }
});

test("evidence is kept per kind and settings: video resolution and clip length, image count", () => {
  const video = (settings: Record<string, unknown>) =>
    ({ ...task("v"), request: { contents: [{ type: "prompt", text: "p" }], settings } }) as unknown as PlannedTask;
  const image = (n: number) => ({ ...task("i", "image"), request: { prompt: "p", n } }) as unknown as PlannedTask;
  assert.is.not(durationKey(video({ resolution: "720p", duration: 5 })), durationKey(video({ resolution: "1080p", duration: 5 })));
  assert.is.not(durationKey(video({ resolution: "720p", duration: 5 })), durationKey(video({ resolution: "720p", duration: 10 })));
  assert.is(durationKey(video({ resolution: "720p", duration: 5 })), durationKey(video({})), "defaults are the service's defaults");
  assert.is.not(durationKey(image(1)), durationKey(image(4)));
});

// ---- in the engine ----

test("the engine: with 5 durations of ~100 s seen, a young video is not polled on the rhythm but near its likely end", () => {
  const m = new Machine(makeTable({ callbacks: false, concurrency: 1 }, makePolicy(1)));
  let now = 0;
  // Five tasks, one after the other, each taking 100 s at the service.
  for (let i = 0; i < 6; i++) {
    const id = `t${i}`;
    m.feed({ _tag: "Admit", now, task: task(id), firstAttempt: 1, front: false });
    assert.is(ofTag(m.feed({ _tag: "Tick", now }), "Create").length, 1);
    m.feed({ _tag: "Created", now, id, taskId: `s${i}`, createdAt: now });
    const polls: number[] = [];
    let t = now;
    for (let guard = 0; guard < 1_000; guard++) {
      m.feed({ _tag: "Tick", now: t });
      const loop = m.table.loop;
      if (loop._tag !== "Wait") break;
      t = Math.max(t + 1, loop.until);
      const poll = ofTag(m.feed({ _tag: "Tick", now: t }), "Poll")[0];
      if (!poll) continue;
      polls.push(t - now);
      const ended = t - now >= 100_000;
      const v = { ...view(`s${i}`, id, ended ? "succeeded" : "processing"), createdAt: now, updatedAt: ended ? now + 100_000 : t };
      m.feed({ _tag: "Polled", now: t, asked: poll.tasks, views: [v] });
      if (ended) break;
    }
    if (i < 5) {
      // No evidence yet: the fixed rhythm (3 s growing with age, capped at 15 s).
      assert.ok(polls.length > 10, `task ${i}: ${polls.length} polls on the rhythm`);
    } else {
      // Evidence: nothing early in its life (the ceiling, 60 s after the last poll, which
      // was 1 ms before this create, bounds the first wait), then the idle budget (3.2 s)
      // after the likely end.
      const budget = Duration.toMillis(makePolicy(1).pollIdleBudget("video"));
      assert.equal(polls, [59_999, 100_000 + budget], `task ${i}: polls at ${polls.join(", ")}`);
    }
    now = t + 1;
  }
});

test("a task's age counts from when its create left, not from when a busy loop took in the answer", () => {
  const m = new Machine(makeTable({ callbacks: false, concurrency: 1 }, makePolicy(1)));
  m.feed({ _tag: "Admit", now: 0, task: task("a"), firstAttempt: 1, front: false });
  m.feed({ _tag: "Tick", now: 0 });
  m.feed({ _tag: "Created", now: 9_000, id: "a", taskId: "s", createdAt: 1_000, sentAt: 1_000 });
  assert.is(m.table.entries.get("a")!.sentAt, 1_000);
  // A send time after the answer (clock oddities) never makes a task younger than its answer says.
  const n = new Machine(makeTable({ callbacks: false, concurrency: 1 }, makePolicy(1)));
  n.feed({ _tag: "Admit", now: 0, task: task("b"), firstAttempt: 1, front: false });
  n.feed({ _tag: "Tick", now: 0 });
  n.feed({ _tag: "Created", now: 5_000, id: "b", taskId: "s", createdAt: 1_000, sentAt: 7_000 });
  assert.is(n.table.entries.get("b")!.sentAt, 5_000);
});

// ---- the policy alone, simulated at real speed ----

test("simulated: tasks of tight durations are polled far less than on the rhythm and their ends are seen no later", () => {
  const policy = makePolicy(1);
  const tight = { tasks: 200, slots: 8, seed: 5, createPathMs: 0, policy, queuedMs: [10_000, 12_000], processingMs: [90_000, 95_000] } as const;
  const rhythm = simulatePolling({ ...tight, mode: "rhythm" });
  const adaptive = simulatePolling({ ...tight, mode: "adaptive" });
  assert.ok(adaptive.queriesPerTask < rhythm.queriesPerTask / 2, `queries per task: adaptive ${adaptive.queriesPerTask}, rhythm ${rhythm.queriesPerTask}`);
  assert.ok(adaptive.utilisation >= rhythm.utilisation - 0.005, `utilisation: adaptive ${adaptive.utilisation}, rhythm ${rhythm.utilisation}`);
});

test("simulated: the saturation scenario's durations (1 to 8 minutes), 8 slots: at most 2.6 queries per task where the rhythm makes about 7", () => {
  const policy = makePolicy(1);
  const o = { tasks: 400, slots: 8, seed: 1, createPathMs: 0, policy } as const;
  const rhythm = simulatePolling({ ...o, mode: "rhythm" });
  const adaptive = simulatePolling({ ...o, mode: "adaptive" });
  assert.ok(rhythm.queriesPerTask > 6, `rhythm ${rhythm.queriesPerTask}`);
  assert.ok(adaptive.queriesPerTask <= 2.6, `adaptive ${adaptive.queriesPerTask}`);
  assert.ok(adaptive.utilisation >= 0.95, `adaptive utilisation ${adaptive.utilisation}`);
  assert.ok(Duration.toMillis(policy.pollCeiling("video")) >= Duration.toMillis(policy.pollInterval("video", 1e9)), "ceiling ≥ the rhythm's cap");
  assert.ok(Duration.toMillis(policy.pollFloor("video")) <= Duration.toMillis(policy.pollInterval("video", 0)), "floor ≤ the rhythm's start");
});

test("simulated durations are the emulator's own: the same seed gives the same durations in create order", async () => {
  const emulator = await startEmulator({ seed: 7, slots: { video: 12, image: 12 }, timing: { ...realisticTiming, scale: 1 }});
  try {
    const headers = { authorization: `Bearer ${emulator.apiKey}`, "content-type": "application/json" };
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) {
      const res = await fetch(`${emulator.url}/omni-video/kling-o1`, { method: "POST", headers, body: JSON.stringify({ contents: [{ type: "prompt", text: `clip ${i}` }], settings: { aspect_ratio: "16:9" } }) });
      const body = (await res.json()) as { code: number; data?: { id: string } };
      assert.is(body.code, 0, JSON.stringify(body));
      ids.push(body.data!.id);
    }
    emulator.advanceClock(10 * 60_000);
    const res = await fetch(`${emulator.url}/tasks?task_ids=${ids.join(",")}`, { headers });
    const tasks = ((await res.json()) as { data: { id: string; status: string; create_time: number; update_time: number }[] }).data;
    const byId = new Map(tasks.map((t) => [t.id, t]));
    const expected = emulatorDurations(7, 12, realisticTiming.video.queuedMs, realisticTiming.video.processingMs);
    ids.forEach((id, i) => {
      const t = byId.get(id)!;
      assert.is(t.status, "succeeded");
      // The emulator rounds each of its two draws to a millisecond.
      assert.ok(Math.abs(t.update_time - t.create_time - expected[i]!) <= 1, `task ${i}: ${t.update_time - t.create_time} ms at the emulator, ${expected[i]} simulated`);
    });
  } finally {
    await emulator.close();
  }
});

test("simulated, the saturation scenario: no timing passes the instant poller, and the adaptive timing keeps up with a fixed interval at the same queries per task", () => {
  // Why polling alone misses 0.97 at 2.5 queries per task here (docs/benchmarks.md, "Adaptive polling"):
  // ends of 1-to-8-minute tasks through 8 slots come almost as a Poisson stream, so where
  // the polls fall matters little; this holds the adaptive timing to that reference.
  const o = { tasks: 400, slots: 8, createPathMs: 0, policy: makePolicy(1) } as const;
  const seeds = [7, 1007, 2007];
  const adaptive = seeds.map((seed) => simulatePolling({ ...o, seed, mode: "adaptive" }));
  const instant = seeds.map((seed) => simulatePolling({ ...o, seed, mode: "instant" }));
  const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const periodic = periodicAtQueries(o, seeds, mean(adaptive.map((r) => r.queriesPerTask)));
  seeds.forEach((seed, i) => assert.ok(instant[i]!.utilisation > adaptive[i]!.utilisation, `seed ${seed}: instant ${instant[i]!.utilisation}, adaptive ${adaptive[i]!.utilisation}`));
  assert.ok(Math.abs(periodic.queriesPerTask - mean(adaptive.map((r) => r.queriesPerTask))) < 0.1, `periodic ${periodic.queriesPerTask} queries per task`);
  assert.ok(mean(adaptive.map((r) => r.utilisation)) >= periodic.utilisation - 0.002, `adaptive ${mean(adaptive.map((r) => r.utilisation))}, fixed interval ${periodic.utilisation}`);
  // And what 0.97 costs by polling on every one of these seeds: well over the 2.5 queries the goal leaves.
  const needed = queriesForUtilisation(o, seeds, 0.97);
  assert.ok(needed !== undefined && needed > 3, `queries per task for 0.97: ${needed}`);
});

test.run();
