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

export class DurationEvidence {
  private readonly samples = new Map<string, number[]>();
  private readonly cache = new Map<string, readonly number[]>();

  /** Bumped with every sample (keys the polling cache). */
  version = 0;

  constructor(private readonly minSamples: number) {}

  /** A task of this key took `ms` (service clock, create to end). */
  note(key: string, ms: number): void {
    if (!Number.isFinite(ms) || ms < 0) return;
    let list = this.samples.get(key);
    if (!list) this.samples.set(key, (list = []));
    // Kept sorted: binary search for the place.
    let lo = 0;
    let hi = list.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (list[mid]! <= ms) lo = mid + 1;
      else hi = mid;
    }
    list.splice(lo, 0, ms);
    this.cache.delete(key);
    this.version++;
  }

  count(key: string): number {
    return this.samples.get(key)?.length ?? 0;
  }

  /** The durations of a key as at most 32 ascending points (quantiles), or undefined with too few seen. */
  points(key: string): readonly number[] | undefined {
    const cached = this.cache.get(key);
    if (cached) return cached;
    const list = this.samples.get(key);
    if (!list || list.length < Math.max(1, this.minSamples)) return undefined;
    const points = list.length <= MAX_POINTS ? [...list] : Array.from({ length: MAX_POINTS }, (_, i) => list[Math.min(list.length - 1, Math.floor(((i + 0.5) / MAX_POINTS) * list.length))]!);
    // The extremes stay: the shortest and longest seen bound where a task is expected to end.
    if (list.length > MAX_POINTS) {
      points[0] = list[0]!;
      points[MAX_POINTS - 1] = list[list.length - 1]!;
    }
    this.cache.set(key, points);
    return points;
  }
}
