// The review gate's other half (issue 31), pure: a job with `review: { retake_rejected: N }`
// asks for a new take of a task whose output a person rejected, so a rejected still can
// bring a better one instead of a gap. Per matrix combination: the job's own takes are
// 1..K (`take: K`); each take with a rejected output brings the next new take (K+1, K+2,
// ...), at most N of them; a new take is reviewed like any other, and its rejection brings
// the next one while any is left. The plan (src/plan/diffPlan.ts) asks this per
// combination and plans the new takes like any task; the run creates what the plan says.

/** One new take the combination gets. */
export interface NewTake {
  /** Its take number: K+1, K+2, ... */
  readonly take: number;
  /** Which new take it is (1..N). */
  readonly nth: number;
  /** The take whose rejection brought it; absent for one kept because it was made before (its trigger's decision since changed). */
  readonly because?: number;
}

export interface RetakeAnswer {
  /** The new takes, in order (take K+1 first). */
  readonly takes: readonly NewTake[];
  /** Takes with a rejected output that bring no new take: all N allowed are planned already. */
  readonly refused: readonly number[];
}

export interface RetakeQuestion {
  /** The job's own takes (`take`, default 1). */
  readonly takes: number;
  /** `retake_rejected`: new takes allowed per combination. */
  readonly allowed: number;
  /**
   * Whether take `take` has an output a person rejected (its latest finished attempt's
   * outputs, by the review decisions). Asked in take order; a new take is asked about only
   * after it is in the answer so far.
   */
  readonly rejected: (take: number) => boolean;
  /** Whether new take `take` (> takes) is recorded in the lockfile: a new take made once is kept. */
  readonly recorded: (take: number) => boolean;
}

export const newTakes = (q: RetakeQuestion): RetakeAnswer => {
  const takes: NewTake[] = [];
  const refused: number[] = [];
  const allowed = Math.max(0, Math.floor(q.allowed));
  if (allowed === 0) return { takes, refused };
  // A new take recorded before stays part of the combination (never dropped, so its
  // paid results stay current), even when the decision that brought it was changed since.
  let kept = 0;
  for (let j = allowed; j >= 1; j--) {
    if (q.recorded(q.takes + j)) {
      kept = j;
      break;
    }
  }
  // Bounded: at most takes + allowed takes are looked at.
  for (let t = 1; ; t++) {
    if (t > q.takes + takes.length) {
      if (takes.length >= kept) break;
      takes.push({ take: q.takes + takes.length + 1, nth: takes.length + 1 });
    }
    if (!q.rejected(t)) continue;
    if (takes.length < allowed) takes.push({ take: q.takes + takes.length + 1, nth: takes.length + 1, because: t });
    else refused.push(t);
  }
  return { takes, refused };
};

/** The plan's reason for a new take: `new take: take 1 rejected in review (1 of retake_rejected: 1)`. */
export const newTakeNote = (n: NewTake, allowed: number): string =>
  n.because !== undefined
    ? `new take: take ${n.because} rejected in review (${n.nth} of retake_rejected: ${allowed})`
    : `new take ${n.nth} of retake_rejected: ${allowed}, made before for a rejection`;

/** The plan's word on a rejected take that brings no new take. */
export const refusedNote = (take: number, allowed: number): string =>
  `take ${take} rejected in review: no new take (retake_rejected: ${allowed} per combination, made or planned already)`;
