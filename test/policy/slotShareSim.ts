// A small discrete-event simulation of several runs of one account sharing its pool of
// slots, each run admitting creates by the slot-share rule (src/policy/slotShare.ts) as
// the engine does: a create takes a slot at the service if one is free when it arrives,
// else it is refused (1303); a run learns that one of its tasks ended only at its next
// poll. Seeded and bounded (events and simulated time), so a test that uses it is
// reproducible and always ends.

import { mayStart, nextShare, startShare, type SlotShare, type SlotShareRule } from "../../src/policy/slotShare.js";

export interface SimOptions {
  readonly pool: number;
  /** Tasks of each run (one slot each); every run starts at time 0 unless `startsAt` says otherwise. */
  readonly runs: readonly number[];
  readonly startsAt?: readonly number[];
  /** Each run's ceiling (the manifest's concurrency); default: the pool. */
  readonly ceiling?: number;
  readonly rule: SlotShareRule;
  readonly seed: number;
  /** Task durations, uniform in [min, max] ms (default: the real service's 1 to 8 minutes). */
  readonly durationMs?: readonly [number, number];
  /** A run polls its tasks this often (each run at its own phase). */
  readonly pollMs?: number;
  /** A create's round trip; it takes its slot half way. */
  readonly rttMs?: number;
  /** Creates one run has on the wire at once (policy.createConcurrency). */
  readonly createConcurrency?: number;
}

export interface RunFigures {
  readonly tasks: number;
  readonly refused: number;
  readonly startedAt: number;
  readonly doneAt: number;
  /** Mean slots held at the service (by the service's count) while every run had work left. */
  readonly meanShare: number;
}

export interface SimResult {
  readonly makespanMs: number;
  readonly utilisation: number;
  readonly refused: number;
  readonly refusedPerTask: number;
  /** Utilisation and refusals per task over each quarter of the makespan. */
  readonly quarters: readonly { readonly utilisation: number; readonly refused: number }[];
  readonly runs: readonly RunFigures[];
  /** Jain's index of the runs' mean shares while all had work (1: equal; 1/n: one run has all). */
  readonly fairness: number;
  readonly events: number;
  readonly finished: boolean;
}

const mulberry32 = (seed: number) => {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
};

type SimEvent =
  | { readonly at: number; readonly kind: "arrive"; readonly run: number; readonly task: number }
  | { readonly at: number; readonly kind: "answer"; readonly run: number; readonly task: number; readonly accepted: boolean }
  | { readonly at: number; readonly kind: "end"; readonly run: number; readonly task: number }
  | { readonly at: number; readonly kind: "poll"; readonly run: number }
  | { readonly at: number; readonly kind: "wake"; readonly run: number };

interface RunState {
  share: SlotShare;
  waiting: number;
  /** Slots the run counts as its own: creates on the wire and tasks not yet seen ended. */
  holding: number;
  creating: number;
  /** Tasks ended at the service that the run has not seen yet. */
  unseen: number;
  refused: number;
  startedAt: number;
  doneAt: number;
  atService: number;
  shareTime: number;
  wakeAt: number;
  readonly tasks: number;
}

const MAX_EVENTS = 500_000;
const MAX_TIME_MS = 48 * 3600_000;

export const simulateShare = (o: SimOptions): SimResult => {
  const random = mulberry32(o.seed);
  const [dMin, dMax] = o.durationMs ?? [60_000, 480_000];
  const pollMs = o.pollMs ?? 5_000;
  const rtt = o.rttMs ?? 300;
  const createConcurrency = o.createConcurrency ?? 4;
  const queue: SimEvent[] = [];
  const push = (e: SimEvent) => {
    // Sorted insert from the end (most events are near the end of the line).
    let i = queue.length;
    while (i > 0 && queue[i - 1]!.at > e.at) i--;
    queue.splice(i, 0, e);
  };
  const runs: RunState[] = o.runs.map((tasks, r) => ({
    share: startShare(o.ceiling ?? o.pool),
    waiting: tasks,
    holding: 0,
    creating: 0,
    unseen: 0,
    refused: 0,
    startedAt: o.startsAt?.[r] ?? 0,
    doneAt: 0,
    atService: 0,
    shareTime: 0,
    wakeAt: Infinity,
    tasks,
  }));
  let used = 0;
  let busyMs = 0;
  let firstCreate = Infinity;
  let lastEnd = 0;
  const refusalsAt: number[] = [];
  const slotSpans: [number, number][] = [];
  let allBusySince = 0;
  let lastAt = 0;
  let taskSeq = 0;
  const allHaveWork = () => runs.every((r) => r.startedAt <= lastAt && (r.waiting > 0 || r.creating > 0));

  const admit = (r: number, now: number) => {
    const run = runs[r]!;
    if (now < run.startedAt) return;
    while (run.waiting > 0 && run.creating < createConcurrency && mayStart(run.share, run.holding, 1, now)) {
      run.waiting--;
      run.holding++;
      run.creating++;
      const task = taskSeq++;
      push({ at: now + rtt / 2, kind: "arrive", run: r, task });
    }
    if (run.waiting > 0 && run.share.quietUntil > now && run.share.quietUntil < run.wakeAt) {
      run.wakeAt = run.share.quietUntil;
      push({ at: run.share.quietUntil, kind: "wake", run: r });
    }
  };

  runs.forEach((run, r) => {
    push({ at: run.startedAt, kind: "wake", run: r });
    push({ at: run.startedAt + random() * pollMs, kind: "poll", run: r });
  });

  let events = 0;
  while (queue.length > 0 && events < MAX_EVENTS) {
    const e = queue.shift()!;
    if (e.at > MAX_TIME_MS) break;
    events++;
    // Shares while every run has work: integrate each run's slots at the service.
    const dt = e.at - lastAt;
    if (allHaveWork()) for (const run of runs) run.shareTime += run.atService * dt;
    if (allHaveWork()) allBusySince += dt;
    lastAt = e.at;
    const run = runs[e.run]!;
    switch (e.kind) {
      case "arrive": {
        const accepted = used < o.pool;
        if (accepted) {
          used++;
          run.atService++;
          firstCreate = Math.min(firstCreate, e.at);
          const d = dMin + random() * (dMax - dMin);
          busyMs += d;
          slotSpans.push([e.at, e.at + d]);
          push({ at: e.at + d, kind: "end", run: e.run, task: e.task });
        } else refusalsAt.push(e.at);
        push({ at: e.at + rtt / 2, kind: "answer", run: e.run, task: e.task, accepted });
        break;
      }
      case "answer":
        run.creating--;
        if (e.accepted) run.share = nextShare(o.rule, run.share, { _tag: "Accepted" });
        else {
          run.refused++;
          run.holding--;
          run.waiting++;
          run.share = nextShare(o.rule, run.share, { _tag: "Refused", now: e.at, holding: run.holding, slots: 1 });
        }
        admit(e.run, e.at);
        break;
      case "end":
        used--;
        run.atService--;
        run.unseen++;
        lastEnd = Math.max(lastEnd, e.at);
        break;
      case "poll": {
        for (; run.unseen > 0; run.unseen--) {
          run.holding--;
          run.share = nextShare(o.rule, run.share, { _tag: "Ended" });
        }
        if (run.waiting === 0 && run.creating === 0 && run.holding === 0) {
          run.doneAt = e.at;
          break; // no more polls: the run is over
        }
        admit(e.run, e.at);
        push({ at: e.at + pollMs, kind: "poll", run: e.run });
        break;
      }
      case "wake":
        if (run.wakeAt <= e.at) run.wakeAt = Infinity;
        admit(e.run, e.at);
        break;
    }
  }
  const finished = runs.every((r) => r.doneAt > 0);
  const makespanMs = lastEnd - firstCreate;
  const quarters = [0, 1, 2, 3].map((q) => {
    const from = firstCreate + (q * makespanMs) / 4;
    const to = firstCreate + ((q + 1) * makespanMs) / 4;
    const busy = slotSpans.reduce((a, [s, t]) => a + Math.max(0, Math.min(t, to) - Math.max(s, from)), 0);
    return { utilisation: busy / (o.pool * (to - from)), refused: refusalsAt.filter((at) => at >= from && (at < to || q === 3)).length };
  });
  const shares = runs.map((r) => (allBusySince > 0 ? r.shareTime / allBusySince : 0));
  const sum = shares.reduce((a, b) => a + b, 0);
  const squares = shares.reduce((a, b) => a + b * b, 0);
  const tasks = o.runs.reduce((a, b) => a + b, 0);
  return {
    makespanMs,
    utilisation: busyMs / (o.pool * makespanMs),
    refused: refusalsAt.length,
    refusedPerTask: refusalsAt.length / tasks,
    quarters,
    runs: runs.map((r, i) => ({ tasks: r.tasks, refused: r.refused, startedAt: r.startedAt, doneAt: r.doneAt, meanShare: shares[i]! })),
    fairness: squares > 0 ? (sum * sum) / (runs.length * squares) : 1,
    events,
    finished,
  };
};
