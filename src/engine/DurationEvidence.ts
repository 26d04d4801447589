// How long tasks of each kind and settings have taken in this run, from the service's own
// answers (its create and update times, so our polling delay does not lengthen them). The
// polling timing (pollTiming.ts) reads it as a few quantile points per setting; until a
// setting has `minSamples` finished tasks there is no evidence for it and the fixed rhythm
// applies. Plain bookkeeping: no I/O, no clock.

import type { PlannedTask } from "../manifest/PlannedTask.js";

/** At most this many points describe one setting's durations (quantiles once more were seen). */
const MAX_POINTS = 32;

/**
 * The settings that make tasks of a kind take similar times: for videos the resolution,
 * clip length and the kinds of inputs (editing a video is not like animating a still); for
 * images the resolution, how many and whether a series. Tasks sharing a key share evidence.
 */
export const durationKey = (task: PlannedTask): string => {
  if (task.kind === "video") {
    const r = task.request;
    const s = r.settings ?? {};
    const roles = [...new Set((r.contents ?? []).map((c) => c.type))].sort().join("+");
    return `video|${s.resolution ?? "720p"}|${s.duration ?? 5}|${roles}`;
  }
  const r = task.request;
  return `image|${r.model_name ?? ""}|${r.resolution ?? "1k"}|${r.result_type ?? "single"}|${r.n ?? 1}|${r.series_amount ?? ""}|${r.image_list?.length ?? 0}`;
};

/** The most recent this many durations per setting are kept (a long run's service may change speed). */
const MAX_SAMPLES = 1_000;

/** Where `value` goes in the ascending `list` (the first place whose value is not below it). */
const placeOf = (list: readonly number[], value: number): number => {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (list[mid]! < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
};

export class DurationEvidence {
  /**
   * Per key: the most recent durations, a ring once full, and the same durations kept in
   * ascending order (each sample moved in and the one it replaces moved out), so that the
   * points are read off, not sorted again after every sample: the polling timing asks for
   * them whenever a task ends (a copy and sort of 1,000 samples took about 0.2 ms).
   */
  private readonly samples = new Map<string, { list: number[]; sorted: number[]; next: number; total: number }>();
  private readonly cache = new Map<string, readonly number[]>();
  /** Bumped with every sample (keys the polling cache). */
  version = 0;

  constructor(private readonly minSamples: number) {}

  /** A task of this key took `ms` (service clock, create to end). */
  note(key: string, ms: number): void {
    if (!Number.isFinite(ms) || ms < 0) return;
    let s = this.samples.get(key);
    if (!s) this.samples.set(key, (s = { list: [], sorted: [], next: 0, total: 0 }));
    if (s.list.length < MAX_SAMPLES) s.list.push(ms);
    else {
      s.sorted.splice(placeOf(s.sorted, s.list[s.next]!), 1);
      s.list[s.next] = ms;
    }
    s.sorted.splice(placeOf(s.sorted, ms), 0, ms);
    s.next = (s.next + 1) % MAX_SAMPLES;
    s.total++;
    this.cache.delete(key);
    this.version++;
  }

  /** Durations noted for a key (all of them, also those no longer kept). */
  count(key: string): number {
    return this.samples.get(key)?.total ?? 0;
  }

  /** The durations of a key as at most 32 ascending points (quantiles), or undefined with too few seen. */
  points(key: string): readonly number[] | undefined {
    const cached = this.cache.get(key);
    if (cached) return cached;
    const s = this.samples.get(key);
    if (!s || s.list.length < Math.max(1, this.minSamples)) return undefined;
    const list = s.sorted;
    const n = list.length;
    const points = n <= MAX_POINTS ? [...list] : Array.from({ length: MAX_POINTS }, (_, i) => list[Math.min(n - 1, Math.floor(((i + 0.5) / MAX_POINTS) * n))]!);
    // The extremes stay: the shortest and longest seen bound where a task is expected to end.
    if (n > MAX_POINTS) {
      points[0] = list[0]!;
      points[MAX_POINTS - 1] = list[n - 1]!;
    }
    this.cache.set(key, points);
    return points;
  }
}
