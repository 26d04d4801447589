// New takes after rejections in review (`review: { retake_rejected: N }`, issue 31), as
// the plan makes them: per matrix combination, the rule (src/review/retake.ts) says which
// new takes there are; each is classified as the manifest's tasks are (diffPlan's first
// pass), so it is `+` with its reason and estimate until made, `=` after, and its outputs
// go through the review gate to its downstream tasks like any other. Pure.

import type { LoadedManifest } from "../manifest/LoadedManifest.js";
import type { PlannedTask } from "../manifest/PlannedTask.js";
import { newTakeNote, newTakes, refusedNote } from "../review/retake.js";
import { type DecisionIndex, reviewStateOf } from "../review/reviewDecision.js";
import type { LockTask } from "../state/LockFile.js";
import type { PlanEntry } from "./diffPlan.js";

/** What of diffPlan's first pass the new takes are planned with (its classifier). */
export interface RetakeClassifier {
  readonly entries: PlanEntry[];
  readonly classify: (task: PlannedTask) => void;
  readonly tasksOf: Map<string, PlannedTask[]>;
  /** Manifest id -> its latest finished attempt (id, record). */
  readonly finished: ReadonlyMap<string, readonly [string, LockTask]>;
  readonly lockTasks: Readonly<Record<string, LockTask>>;
}

/** Whether a finished record has an output a person rejected. */
const hasRejected = (id: string, t: LockTask, reviews: DecisionIndex): boolean =>
  t.outputs.some((o) => o.variant === "main" && o.sha256 !== undefined && reviewStateOf({ task: id, output: o.index, sha256: o.sha256 }, reviews) === "rejected");

/**
 * New takes after rejections (src/review/retake.ts): per matrix combination of a job with
 * `retake_rejected`, the takes its rejected outputs bring, classified as the manifest's
 * tasks are (`+` with the reason, `=` once made) and added to the job's tasks, so the
 * downstream pass makes their clips once approved. A rejected take that brings none says why.
 */
export const retakePass = (manifest: LoadedManifest, st: RetakeClassifier, reviews: DecisionIndex): PlannedTask[] => {
  const { entries, classify, tasksOf, finished, lockTasks } = st;
  const made: PlannedTask[] = [];
  for (const job of manifest.jobs) {
    const allowed = job.retakeRejected ?? 0;
    const own = tasksOf.get(job.id);
    if (allowed <= 0 || job.upstream || !own) continue;
    // Takes recorded past 1: only those can be new takes made before (no id is worked out for the rest).
    const recordedTakes = new Set<number>();
    for (const id in lockTasks) if (lockTasks[id]!.job === job.id && lockTasks[id]!.take > 1) recordedTakes.add(lockTasks[id]!.take);
    if (reviews.size === 0 && recordedTakes.size === 0) continue;
    const added: PlannedTask[] = [];
    // A combination's takes 1..K come in a row (expandJob's addTakes).
    for (let i = 0; i < own.length; ) {
      let end = i + 1;
      while (end < own.length && own[end]!.take !== 1) end++;
      const takes = own.slice(i, end);
      i = end;
      const byTake = new Map(takes.map((t) => [t.take, t] as const));
      const taskOf = (take: number): PlannedTask => {
        let t = byTake.get(take);
        if (t === undefined) byTake.set(take, (t = manifest.withTake(takes[0]!, take)));
        return t;
      };
      const at = new Map<number, number>();
      const classifyTake = (take: number): void => {
        if (take <= takes.length || at.has(take)) return;
        const task = taskOf(take);
        at.set(take, entries.length);
        classify(task);
        added.push(task);
      };
      const answer = newTakes({
        takes: takes.length,
        allowed,
        rejected: (take) => {
          classifyTake(take);
          const done = finished.get(taskOf(take).id);
          return done !== undefined && hasRejected(done[0], done[1], reviews);
        },
        recorded: (take) => recordedTakes.has(take) && lockTasks[taskOf(take).id] !== undefined,
      });
      for (const n of answer.takes) {
        classifyTake(n.take);
        const e = entries[at.get(n.take)!]!;
        if (e.mark === "+" || e.mark === "~") entries[at.get(n.take)!] = { ...e, note: e.note ? `${newTakeNote(n, allowed)}; ${e.note}` : newTakeNote(n, allowed) };
      }
      for (const r of answer.refused) {
        const id = finished.get(taskOf(r).id)?.[0];
        const k = at.get(r) ?? entries.findIndex((e) => e.id === id && e.mark === "=");
        if (k >= 0) entries[k] = { ...entries[k]!, noNewTake: true, note: refusedNote(r, allowed) };
      }
    }
    own.push(...added);
    made.push(...added);
  }
  return made;
};

/** Downstream tasks a job expects of the new takes of its upstream job (not counted by the manifest, which knows only its own tasks). */
export const retakeDownstream = (manifest: LoadedManifest, job: LoadedManifest["jobs"][number], retakes: readonly PlannedTask[], outputsOf: ReadonlyMap<string, number>): number => {
  let n = 0;
  for (const t of retakes) if (t.job === job.upstream!.job) n += job.upstream!.mode === "tasks" ? 1 : (outputsOf.get(t.id) ?? t.slots);
  return n === 0 ? 0 : n * manifest.downstreamPerItem(job.id);
};
