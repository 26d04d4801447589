// When to ask the service about a kind's tasks in flight next, from what the run has seen
// of how long such tasks take: few queries early in a task's expected life, denser where
// the observed durations say it is likely to end. Pure: times come in as numbers (ms,
// from the events Effect's Clock stamped), so the same input gives the same answer.
//
// One query covers every task of the kind in flight, so the question is not per task but
// for the whole set: poll once the slot-time expected to have been idle since the last
// poll (tasks that have ended unseen, each idling from its end) reaches `idleBudgetMs`.
// A query then costs about the same expected idleness wherever it falls: sparse while
// every task is young, dense when several are near their likely end. Clamped between a
// floor (never more often) and a ceiling (never less often: a stuck or slow task is still
// noticed), and no later than the fixed rhythm for any task without evidence.

/** One task in flight, as the timing sees it. */
export interface TimedTask {
  /** When it was sent (or adopted), ms: its age drives the estimate. */
  readonly startedAt: number;
  /**
   * Durations seen for tasks like it (same kind and settings), ms, ascending, as
   * `DurationEvidence.points` gives them; undefined while there are too few.
   */
  readonly durations?: readonly number[] | undefined;
  /** A callback cue said it may have ended at this time (only a cue: the poll decides). */
  readonly cuedAt?: number | undefined;
}

export interface PollTimingInput {
  /** The kind's last poll (ms). */
  readonly lastPoll: number;
  /** The fixed rhythm's interval now (Policy.pollInterval): used for tasks without evidence. */
  readonly rhythmMs: number;
  /** Never poll sooner than this after the last poll. */
  readonly floorMs: number;
  /** Never later than this after the last poll. */
  readonly ceilingMs: number;
  /** Poll once this much slot-time is expected to have idled since the last poll. */
  readonly idleBudgetMs: number;
  readonly tasks: readonly TimedTask[];
}

/** One piece of an observed-duration distribution: `mass` spread evenly over [lo, hi]. */
interface Piece {
  readonly lo: number;
  readonly hi: number;
}

/**
 * The observed durations as a distribution: each point's mass spread evenly from the
 * midpoint with its lower neighbour to the midpoint with its upper one (the first and last
 * points bound it), so a task is not assumed to end only exactly where others did.
 */
const piecesOf = (points: readonly number[]): Piece[] => {
  const n = points.length;
  const out: Piece[] = [];
  for (let j = 0; j < n; j++) {
    const p = points[j]!;
    const lo = j === 0 ? p : (points[j - 1]! + p) / 2;
    const hi = j === n - 1 ? p : (p + points[j + 1]!) / 2;
    out.push({ lo, hi });
  }
  return out;
};

/** P(D <= x) for one piece. */
const cdf = (p: Piece, x: number): number => (x <= p.lo ? (x < p.lo ? 0 : p.hi === p.lo ? 1 : 0) : x >= p.hi ? 1 : (x - p.lo) / (p.hi - p.lo));

/** ∫_{-∞}^{x} P(D <= u) du for one piece. */
const cdfIntegral = (p: Piece, x: number): number => {
  if (x <= p.lo) return 0;
  if (x >= p.hi) return (p.hi - p.lo) / 2 + (x - p.hi);
  return ((x - p.lo) * (x - p.lo)) / (2 * (p.hi - p.lo));
};

/**
 * A task's expected idle slot-time from age `a0` (alive then, as far as we know) to age
 * `x`: ∫_{a0}^{x} P(D <= u | D > a0) du. Undefined when no observed duration lies past
 * `a0` (the task outlived everything seen: no evidence for it).
 */
const idleFrom = (pieces: readonly Piece[], a0: number): ((x: number) => number) | undefined => {
  let survive = 0;
  for (const p of pieces) survive += 1 - cdf(p, a0);
  if (survive <= 1e-9) return undefined;
  const base = pieces.map((p) => ({ p, i0: cdfIntegral(p, a0), g0: cdf(p, a0) }));
  return (x) => {
    if (x <= a0) return 0;
    let sum = 0;
    for (const { p, i0, g0 } of base) sum += cdfIntegral(p, x) - i0 - g0 * (x - a0);
    return sum / survive;
  };
};

/** What the evidence says, before the rhythm is applied: cacheable while the tasks, the last poll and the evidence stay the same. */
export interface EvidenceDue {
  /** When the expected idleness of the tasks with evidence reaches the budget (clamped), or the ceiling. */
  readonly due: number;
  /** Some task has no evidence: the rhythm bounds the answer too. */
  readonly anyWithout: boolean;
}

/** The part of `nextPollAt` that does not depend on the rhythm. */
export const evidenceDue = (input: Omit<PollTimingInput, "rhythmMs">): EvidenceDue => {
  const { lastPoll: last, floorMs, ceilingMs, idleBudgetMs } = input;
  const earliest = last + floorMs;
  const latest = last + Math.max(floorMs, ceilingMs);
  let anyWithout = false;
  const idle: ((t: number) => number)[] = [];
  const piecesByPoints = new Map<readonly number[], Piece[]>();
  for (const t of input.tasks) {
    if (t.cuedAt !== undefined) {
      // Cued: taken as ended at the cue (never before the last poll, which saw it running).
      const from = Math.max(t.cuedAt, last);
      idle.push((at) => Math.max(0, at - from));
      continue;
    }
    const points = t.durations;
    const a0 = Math.max(0, last - t.startedAt);
    // No evidence for this task (too few seen, or it outlived all of them): the rhythm.
    if (points === undefined || points.length === 0 || a0 >= points[points.length - 1]!) {
      anyWithout = true;
      continue;
    }
    let pieces = piecesByPoints.get(points);
    if (!pieces) piecesByPoints.set(points, (pieces = piecesOf(points)));
    const f = idleFrom(pieces, a0);
    if (f === undefined) anyWithout = true;
    else idle.push((at) => f(at - t.startedAt));
  }
  let due = latest;
  if (idle.length > 0) {
    const total = (at: number) => {
      let s = 0;
      for (const f of idle) s += f(at);
      return s;
    };
    // Expected idleness only grows with time: the first whole millisecond it reaches the
    // budget (within rounding), by bisection within [earliest, latest].
    const reached = (t: number) => total(t) >= idleBudgetMs - 1e-6;
    if (reached(earliest)) due = earliest;
    else if (reached(latest)) {
      let lo = earliest;
      let hi = latest;
      for (let i = 0; i < 64 && hi - lo > 1; i++) {
        const mid = Math.floor((lo + hi) / 2);
        if (mid <= lo || mid >= hi) break;
        if (reached(mid)) hi = mid;
        else lo = mid;
      }
      due = hi;
    }
  }
  return { due, anyWithout };
};

/** The evidence's answer bounded by the rhythm (for tasks without evidence), the floor and the ceiling. */
export const withRhythm = (e: EvidenceDue, input: Pick<PollTimingInput, "lastPoll" | "rhythmMs" | "floorMs" | "ceilingMs">): number => {
  const earliest = input.lastPoll + input.floorMs;
  const latest = input.lastPoll + Math.max(input.floorMs, input.ceilingMs);
  const due = e.anyWithout ? Math.min(e.due, input.lastPoll + input.rhythmMs) : e.due;
  return Math.min(latest, Math.max(earliest, due));
};

/** The time (ms) the kind's tasks in flight should be polled next. */
export const nextPollAt = (input: PollTimingInput): number => withRhythm(evidenceDue(input), input);
