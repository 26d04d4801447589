// Which of a lockfile's tasks are current: a task replaced by a changed one (`~` in plan),
// or abandoned at another service by `run --switch-service` (made again there), is superseded, one whose matrix position the manifest no longer has (`-`) is orphaned,
// one `omnibatch prune` removed is pruned. Reports, results.jsonl and status count the
// current ones and show the others apart; prune removes superseded and orphaned ones.
// Pure: the lockfile and, when the manifest is at hand, the plan against it (with the
// review decisions the plan is made with: a downstream task of an approved output is current).

import { type DiffOptions, diffPlan, type PlanResult } from "../plan/diffPlan.js";
import type { LoadedManifest } from "../manifest/LoadedManifest.js";
import type { LockFile, LockTask } from "../state/LockFile.js";

export type Standing = "current" | "superseded" | "orphaned" | "pruned";

export interface Standings {
  /** Only the tasks that are not current; a task absent here is current. */
  readonly of: ReadonlyMap<string, Exclude<Standing, "current">>;
  /** Superseded task -> the task that replaced it. */
  readonly supersededBy: ReadonlyMap<string, string>;
  /** Whether orphans could be told (the manifest was at hand). */
  readonly manifestKnown: boolean;
}

/** A compiled manifest complete enough to plan with (the CLI's); a bare task list is not. */
export const plannable = (m: unknown): m is LoadedManifest =>
  typeof m === "object" && m !== null && "expectedDownstreamCount" in m && "withAttempt" in m && "tasks" in m;

/**
 * A record's standing from the lockfile alone: pruned, superseded (it names the task
 * that replaced it, or was abandoned at another service: its next attempt is the task
 * now, created or not yet), or current.
 */
export const recordedStanding = (t: Pick<LockTask, "pruned_at" | "superseded_by" | "abandoned">): "pruned" | "superseded" | "current" =>
  t.pruned_at !== undefined ? "pruned" : t.superseded_by !== undefined || t.abandoned !== undefined ? "superseded" : "current";

/**
 * From the lockfile alone, superseded is what it records (`superseded_by`, `abandoned`). With the
 * plan, also what the plan finds at the same position, and orphans.
 */
export const standings = (lock: LockFile, plan?: Pick<PlanResult, "entries">): Standings => {
  const of = new Map<string, Exclude<Standing, "current">>();
  const supersededBy = new Map<string, string>();
  // for...in, not Object.entries: records decoded as read (a run's end) are held one at a time.
  for (const id in lock.tasks) {
    const t = lock.tasks[id]!;
    if (t.pruned_at !== undefined) of.set(id, "pruned");
    else if (t.superseded_by !== undefined || t.abandoned !== undefined) {
      of.set(id, "superseded");
      // Abandoned, its next attempt not created yet: superseded by nothing named so far.
      supersededBy.set(id, t.superseded_by ?? "");
    }
  }
  if (plan) {
    for (const e of plan.entries) {
      if (e.mark === "~") {
        // Replaced only once the new task exists: until then the old results are the current ones.
        continue;
      }
      if (e.mark !== "-" || of.has(e.id)) continue;
      const by = e.supersededBy;
      if (by !== undefined && lock.tasks[by] && lock.tasks[by]!.state !== "planned" && lock.tasks[by]!.state !== "rejected") {
        of.set(e.id, "superseded");
        supersededBy.set(e.id, by);
      } else if (by === undefined) of.set(e.id, "orphaned");
    }
  }
  return { of, supersededBy, manifestKnown: plan !== undefined };
};

/**
 * Standings of a lockfile, planning against the manifest when it is a complete one, with
 * its review decisions (src/review/manifestDecisions.ts) as `plan` and `run` plan with them:
 * without them every reviewed output awaits review, so the tasks made of approved ones
 * would read as orphaned.
 */
export const standingsFor = (lock: LockFile, manifest?: unknown, reviews?: DiffOptions["reviews"]): Standings =>
  standings(lock, plannable(manifest) ? diffPlan(manifest, lock, reviews ? { reviews } : {}) : undefined);

export const standingOf = (s: Standings, id: string): Standing => s.of.get(id) ?? "current";
