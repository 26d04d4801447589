// How long the work left should take, from the whole plan: tasks not started yet (queued,
// and expected downstream tasks that do not exist yet) times the typical duration seen
// so far in this run, spread over the slots, plus what the tasks in flight still need.
// Each job has its own typical duration (an image is not a video); a job with work left
// and no finished task to learn from makes the whole estimate unknown. Pure.

export interface JobWork {
  /** Tasks of the job not started yet (queued, and expected downstream tasks). */
  readonly notStarted: number;
  /** Ages (ms) of the job's tasks in flight, since this run saw them start. */
  readonly inFlightAges: readonly number[];
  /** Durations (ms, start to result on disk) of the job's tasks finished in this run. */
  readonly durations: readonly number[];
}

/** The typical duration of a list of durations: its median (a few slow tasks do not move it). */
export const typicalDuration = (durations: readonly number[]): number | undefined => {
  const finite = durations.filter((d) => Number.isFinite(d) && d >= 0);
  if (finite.length === 0) return undefined;
  const sorted = [...finite].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

/**
 * Milliseconds until the work left is done, or undefined while there is no evidence
 * (work left in a job none of whose tasks finished in this run). 0 when nothing is left.
 * The work is the time still needed by every task (in flight: typical − age, at least 0;
 * not started: typical), over `slots` running at once; never less than the longest
 * remainder of a single task in flight (one task cannot go faster by sharing slots).
 */
export const estimateEta = (jobs: readonly JobWork[], slots: number): number | undefined => {
  const lanes = Math.max(1, Math.floor(slots));
  let work = 0;
  let longest = 0;
  for (const job of jobs) {
    const left = Math.max(0, Math.floor(job.notStarted)) + job.inFlightAges.length;
    if (left === 0) continue;
    const typical = typicalDuration(job.durations);
    if (typical === undefined) return undefined;
    for (const age of job.inFlightAges) {
      const rest = Math.max(0, typical - Math.max(0, age));
      work += rest;
      longest = Math.max(longest, rest);
    }
    const notStarted = Math.max(0, Math.floor(job.notStarted));
    work += notStarted * typical;
    if (notStarted > 0) longest = Math.max(longest, typical);
  }
  return Math.max(work / lanes, longest);
};

/** `2m`, `45s`, `1h05m`, `<1s` (tasks in flight past their typical time), for an ETA (rounded: an estimate, not a clock). */
export const formatEta = (ms: number | undefined): string => {
  if (ms === undefined) return "unknown";
  const s = Math.max(0, Math.round(ms / 1000));
  if (s === 0) return "<1s";
  if (s < 60) return `${s}s`;
  const m = Math.round(s / 60);
  if (m < 60) return `${m}m`;
  return `${Math.floor(m / 60)}h${String(m % 60).padStart(2, "0")}m`;
};
