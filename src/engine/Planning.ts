// Tasks entering the run: the manifest's at start-up, as the plan walked them (its
// entries' attempt walks, with their records: no walk of them here), downstream ones when
// an upstream task's files are on disk, and the next attempt of a failed one (those two
// through the same attempt walk, src/plan/attempts.ts, over the run's records). Checks
// recorded files and hands each task to the state machine as an Admit event; keeps the
// fresh result links downstream requests carry.

import { Effect } from "effect";
import type { PlannedTask, UpstreamItem } from "../manifest/PlannedTask.js";
import type { DownloaderService } from "../outputs/Downloader.js";
import type { RemoteOutput } from "../protocol/TaskView.js";
import type { LockTask } from "../state/LockFile.js";
import type { EngineEvent, KnownRecord } from "./EngineEvent.js";
import type { Recorder } from "./Recorder.js";
import type { RunEvent } from "./RunEvent.js";
import type { RunnableManifest } from "./RunnableManifest.js";
import type { RunSelection } from "./RunSelection.js";
import type { Entry, TaskTable } from "./TaskTable.js";
import { attempts, type AttemptRecords, type AttemptWalk } from "../plan/attempts.js";
import { admissionOf } from "../plan/selection.js";
import { isResultFile, resultState } from "../outputs/resultState.js";
import type { LostResult } from "../outputs/scanResults.js";
import { gateItems } from "../review/gate.js";
import { isStoreUrl } from "../fs/StoreUrl.js";
import type { DecisionIndex } from "../review/reviewDecision.js";

/**
 * What the review gate holds back, per upstream task (re-expanding a task replaces its
 * figures, never adds to them): outputs awaiting a person, per reviewed job, and what
 * each downstream job waits on. The summary reads it.
 */
export class ReviewHold {
  /** upstream task id -> its job and outputs by state. */
  readonly outputs = new Map<string, { readonly job: string; readonly awaiting: number; readonly rejected: number; readonly approved: number }>();
  /** downstream job -> upstream task id -> its tasks waiting on outputs awaiting review. */
  readonly held = new Map<string, Map<string, number>>();
  /** Outputs awaiting review per reviewed job. */
  awaitingByJob(): Map<string, number> {
    const by = new Map<string, number>();
    for (const o of this.outputs.values()) if (o.awaiting > 0) by.set(o.job, (by.get(o.job) ?? 0) + o.awaiting);
    return by;
  }
  /** What each downstream job waits on, by job. */
  heldByJob(): Map<string, number> {
    const by = new Map<string, number>();
    for (const [job, per] of this.held) {
      let n = 0;
      for (const v of per.values()) n += v;
      if (n > 0) by.set(job, n);
    }
    return by;
  }
}

/** Result links of finished tasks, with when they were fetched: downstream requests carry them. */
export class UpstreamLinks {
  private readonly links = new Map<string, { readonly at: number; readonly outputs: readonly RemoteOutput[] }>();
  get(id: string) {
    return this.links.get(id);
  }
  set(id: string, outputs: readonly RemoteOutput[], at: number): void {
    this.links.set(id, { at, outputs });
  }
  forget(id: string): void {
    this.links.delete(id);
  }
}

const knownOf = (rec: LockTask): KnownRecord => ({
  state: rec.state,
  ...(rec.task_id ? { task_id: rec.task_id } : {}),
  ...(rec.created_at !== undefined ? { created_at: rec.created_at } : {}),
  ...(rec.submitted_at !== undefined ? { submitted_at: rec.submitted_at } : {}),
});

export interface PlanningDeps {
  readonly manifest: RunnableManifest;
  readonly table: TaskTable;
  readonly recorder: Recorder;
  readonly downloader: DownloaderService;
  readonly links: UpstreamLinks;
  readonly emit: (event: RunEvent) => void;
  /** Runs an event through the state machine and performs its effects. */
  readonly feed: (event: EngineEvent) => Effect.Effect<void>;
  readonly now: Effect.Effect<number>;
  /** A run of a chosen part (--only, --where, --failed, a saved plan); undefined: everything. */
  readonly selection?: RunSelection;
  /** Review decisions (src/review/): outputs of a job with `review` go downstream only once approved. */
  readonly reviews?: DecisionIndex;
  /** Filled with what the gate holds back. */
  readonly hold?: ReviewHold;
  /** `run --recreate-lost`: a task with lost results is made again as its next attempt (a new id). */
  readonly recreateLost?: boolean;
}

/** Lockfile states in which a task still needs its create (nothing at the service yet, as far as the lockfile knows). */
const needsCreate = (rec: LockTask | undefined): boolean => rec === undefined || (rec.state === "planned" && rec.task_id === undefined) || rec.state === "rejected";

/** A saved plan names the ids it may create: anything else is said once each, not created. */
const savedPlanBound = (deps: Pick<PlanningDeps, "selection" | "recorder" | "emit">) => {
  const { selection, recorder } = deps;
  const refused = new Set<string>();
  return (task: PlannedTask): boolean => {
    if (!selection?.mayCreate || selection.mayCreate(task.id) || !needsCreate(recorder.get(task.id))) return true;
    if (!refused.has(task.id)) {
      refused.add(task.id);
      deps.emit({ type: "notice", level: "info", message: `${task.id} (${task.job}): not in the saved plan, not created; make a new plan to include it` });
    }
    return false;
  };
};

/** Whether `o` is a result that may be lost now: deleted at the service, or past its 30 days there. */
const maybeGone = (o: LockTask["outputs"][number], rec: LockTask, now: number): boolean =>
  isResultFile(o) && (o.deleted_at !== undefined || resultState({ output: o, task: rec, local: "missing", now }).state === "lost");

/** The lost results of a record as the downloader sees its outputs at `now`. */
const lostResultsOf = (downloader: DownloaderService, id: string, rec: LockTask, now: number): Effect.Effect<LostResult[]> =>
  Effect.gen(function* () {
    const lost: LostResult[] = [];
    for (const o of rec.outputs) {
      if (!maybeGone(o, rec, now)) continue;
      const local = o.path !== undefined && (yield* downloader.verify([o])) ? "matches" : "missing";
      const v = resultState({ output: o, task: rec, local, now });
      if (v.state === "lost") {
        lost.push({ task: id, job: rec.job, vars: rec.vars, ...(o.path !== undefined ? { path: o.path } : {}), why: v.why, ...(v.at !== undefined ? { at: v.at } : {}) });
      }
    }
    return lost;
  });

/**
 * How many results of each downloaded record are lost (only records with a result that
 * may be lost are looked at): the plan of a `run --recreate-lost` walks with them
 * (attempts.ts `lostCount`; src/run/prepareRun.ts), as the engine's walk mid-run does.
 */
export const lostCounts = (downloader: DownloaderService, records: ReadonlyMap<string, LockTask>, now: number): Effect.Effect<Map<string, number>> =>
  Effect.gen(function* () {
    const counts = new Map<string, number>();
    for (const [id, rec] of records) {
      if (rec.state !== "downloaded" || !rec.outputs.some((o) => maybeGone(o, rec, now))) continue;
      counts.set(id, (yield* lostResultsOf(downloader, id, rec, now)).length);
    }
    return counts;
  });

/**
 * Lost results (resultState.ts) of a record, and of the tasks this run took up, as the
 * downloader sees their outputs (a folder, later a store); only the ones the service
 * deleted or that are past its 30 days are looked up.
 */
const makeLostResults = (deps: Pick<PlanningDeps, "table" | "recorder" | "downloader" | "now">) => {
  const { table, recorder, downloader } = deps;
  const lostOf = (id: string, rec: LockTask): Effect.Effect<LostResult[]> => Effect.flatMap(deps.now, (now) => lostResultsOf(downloader, id, rec, now));
  const lostCount = (rec: LockTask): Effect.Effect<number> => Effect.map(lostOf("", rec), (l) => l.length);

  /**
   * The lost results of the tasks this run took up, in id order. Only tasks with a result
   * that may be lost are looked at further (a rerun over 100,000 results kept at the
   * service and on disk runs no effect per task).
   */
  const lostOfRun: Effect.Effect<LostResult[]> = Effect.flatMap(deps.now, (now) => {
    const ids: string[] = [];
    for (const id of table.entries.keys()) {
      const rec = recorder.get(id);
      if (rec !== undefined && rec.outputs.some((o) => maybeGone(o, rec, now))) ids.push(id);
    }
    ids.sort();
    return Effect.map(
      Effect.forEach(ids, (id) => {
        const rec = recorder.get(id);
        return rec ? lostOf(id, rec) : Effect.succeed([]);
      }),
      (lists) => lists.flat(),
    );
  });
  return { maybeGone, lostCount, lostOfRun };
};

/** The results of a finished task as items for its downstream jobs, from its record and the fresh links the run holds. */
const upstreamItemsOf = (deps: Pick<PlanningDeps, "recorder" | "links" | "downloader">, entry: Entry): UpstreamItem[] => {
  const { recorder, links, downloader } = deps;
  const rec = recorder.get(entry.task.id);
  if (!rec) return [];
  const urls = links.get(entry.task.id)?.outputs ?? [];
  // Without a known link (a result from an earlier run) the id is still right, since
  // identity uses the content hash; the link is refreshed before any create uses it.
  const linkOf = (o: LockTask["outputs"][number]) =>
    urls.find((u) => u.type === o.type && u.index === o.index && u.variant === "main")?.url ?? `https://omnibatch.invalid/stale/${o.sha256}`;
  return rec.outputs
    .filter((o) => o.variant === "main" && (o.type === "image" || o.type === "video") && o.path && o.sha256)
    .map((o) => ({
      job: entry.task.job,
      task: entry.task.id,
      index: o.index,
      type: o.type as "image" | "video",
      // Without a known link (a result from an earlier run) the id is still right, since
      // identity uses the content hash; the link is refreshed before any create uses it.
      url: linkOf(o),
      // A file in the outputs folder; with a store (no local file), the link stands in (itemFile.ts).
      file: isStoreUrl(downloader.absolutePath(o.path!)) ? linkOf(o) : downloader.absolutePath(o.path!),
      sha256: o.sha256!,
      vars: entry.task.vars,
    }));
};

/**
 * The attempt the engine admits for a walk that started from `root` (the manifest's
 * task, in the folder the run gives it: ownFolders.ts): every attempt of a task keeps the
 * first one's folder.
 */
const placedAttempt = (root: PlannedTask, walk: AttemptWalk): PlannedTask =>
  walk.task === walk.planned || walk.task.id === root.id ? root : walk.task.dir === root.dir ? walk.task : { ...walk.task, dir: root.dir };

/**
 * The manifest's tasks at start-up, each with the plan's walk of it (diffPlan's entries,
 * aligned with the tasks): the engine walks nothing again. One the plan has done
 * (downloaded, no later attempt, the whole manifest run, nothing downstream of it, no
 * result that may be lost) whose files are here is only counted (TaskTable.countDone):
 * no entry, no event, no effect; the rest are admitted in order, as the walk says
 * (`admitWalked`). A rerun of 100,000 finished tasks checks their files and admits nothing.
 */
const startAdmission =
  (
    deps: Pick<PlanningDeps, "selection" | "recreateLost" | "table" | "recorder" | "downloader" | "now">,
    admitWalked: (walk: AttemptWalk, task: PlannedTask, front: boolean, parentCreatedHere: boolean) => Effect.Effect<void>,
    maybeGone: (o: LockTask["outputs"][number], rec: LockTask, now: number) => boolean,
    toVerify: (rec: LockTask) => readonly LockTask["outputs"][number][],
    readByOthers: (job: string) => boolean,
  ) =>
  (tasks: readonly PlannedTask[], walks: readonly AttemptWalk[]): Effect.Effect<void> =>
    Effect.flatMap(deps.now, (now) => {
      const { selection, table, recorder, downloader } = deps;
      const counting = selection === undefined && deps.recreateLost !== true && !table.config.freshService && downloader.verifyNow !== undefined;
      const rest: number[] = [];
      for (let i = 0; i < tasks.length; i++) {
        const t = tasks[i]!;
        const walk = walks[i]!;
        const rec = walk.record;
        if (
          counting &&
          walk.walked.length === 0 &&
          rec?.state === "downloaded" &&
          !readByOthers(t.job) &&
          !recorder.hasAttempt(t.job, t.attempt + 1) &&
          !rec.outputs.some((o) => maybeGone(o, rec, now)) &&
          downloader.verifyNow!(toVerify(rec)) === true
        ) {
          table.countDone(t);
          continue;
        }
        rest.push(i);
      }
      return Effect.forEach(rest, (i) => admitWalked(walks[i]!, placedAttempt(tasks[i]!, walks[i]!), false, false), { discard: true });
    });

/**
 * The next attempt of a failed task, at the front of the line: the attempt walk going on
 * from the failed attempt, past any recorded one that is history (they use up no retry).
 */
const makeRetry = (deps: Pick<PlanningDeps, "manifest" | "table" | "recorder" | "feed" | "now">, records: AttemptRecords, mayCreate: (task: PlannedTask) => boolean) => {
  const { manifest, table, recorder } = deps;
  const pastHistory = (task: PlannedTask, firstAttempt: number): [PlannedTask, number] => {
    const walk = attempts(
      task,
      records,
      { withAttempt: (t: PlannedTask, n: number) => manifest.withAttempt(t, n), retryFailedOf: table.config.retryFailedOf, freshService: table.config.freshService === true },
      { firstAttempt, walked: [manifest.withAttempt(task, task.attempt - 1).id] },
    );
    return [walk.task, walk.firstAttempt];
  };
  return (failedNext: PlannedTask, failedFirst: number, parentCreatedHere: boolean): Effect.Effect<void> => {
    const [task, firstAttempt] = pastHistory(failedNext, failedFirst);
    return !mayCreate(task)
      ? // Not in the saved plan: the failed attempt stays the task's last word (and is counted as failed).
        Effect.flatMap(deps.now, (now) => {
          const failed = manifest.withAttempt(failedNext, failedNext.attempt - 1);
          const rec = recorder.get(failed.id);
          return rec ? deps.feed({ _tag: "Admit", now, task: failed, firstAttempt: failedFirst, front: true, known: knownOf(rec) }) : Effect.void;
        })
      : Effect.flatMap(deps.now, (now) => {
          const rec = recorder.get(task.id);
          return deps.feed({ _tag: "AdmitRetry", now, task, firstAttempt, parentCreatedHere, ...(rec ? { known: knownOf(rec) } : {}) });
        });
  };
};

export const makePlanning = (deps: PlanningDeps) => {
  const { manifest, table, recorder, downloader, links, selection } = deps;
  const mayCreate = savedPlanBound(deps);

  const { maybeGone, lostCount, lostOfRun } = makeLostResults(deps);
  // Asked once per finished task: computed once per job.
  const downstreamByJob = new Map(manifest.jobs.map((u) => [u.id, manifest.jobs.filter((j) => j.upstream?.job === u.id)] as const));
  const downstreamOf = (job: string) => downstreamByJob.get(job) ?? [];
  const reviewed = new Set(manifest.jobs.filter((j) => j.review).map((j) => j.id));
  const reviews: DecisionIndex = deps.reviews ?? new Map();

  /** The outputs a downloaded task's files are checked against: a result the service deleted cannot be fetched again. */
  const toVerify = (rec: LockTask): readonly LockTask["outputs"][number][] =>
    rec.outputs.some((o) => o.deleted_at !== undefined) ? rec.outputs.filter((o) => o.deleted_at === undefined) : rec.outputs;

  /**
   * Adds a task (following its retry chain through the lockfile) in the phase the lockfile says.
   * A rerun's usual task (downloaded, no later attempt recorded, the whole manifest run)
   * takes a short path with no walk and two effects, not a generator of six: the same
   * event as the walk would feed (100,000 finished tasks are admitted at a rerun's start).
   */
  const admit = (planned: PlannedTask, front: boolean, parentCreatedHere = false): Effect.Effect<void> => {
    const rec = selection === undefined && deps.recreateLost !== true && !table.config.freshService ? recorder.get(planned.id) : undefined;
    if (rec?.state !== "downloaded" || rec.abandoned !== undefined || recorder.hasAttempt(planned.job, planned.attempt + 1)) return admitWalk(planned, front, parentCreatedHere);
    if (table.has(planned.id)) return Effect.void;
    return Effect.flatMap(downloader.verify(toVerify(rec)), (filesOk) =>
      Effect.flatMap(deps.now, (now) =>
        deps.feed({
          _tag: "Admit",
          now,
          task: planned,
          firstAttempt: planned.attempt,
          front,
          known: knownOf(rec),
          filesOk,
          ...(parentCreatedHere ? { parentCreatedHere: true } : {}),
        }),
      ),
    );
  };

  /** Jobs whose finished tasks something reads (a downstream job, the review gate): those enter as entries, to be expanded. */
  const readByOthers = (job: string): boolean => downstreamOf(job).length > 0 || reviewed.has(job);

  /** The attempt walk (src/plan/attempts.ts) over the run's records; the lost results it asks about are looked up here. */
  const records: AttemptRecords = { get: (id: string) => recorder.get(id), hasAttempt: (job: string, attempt: number) => recorder.hasAttempt(job, attempt) };
  const walkOf = (planned: PlannedTask, renew: boolean): Effect.Effect<AttemptWalk> =>
    Effect.gen(function* () {
      const now = yield* deps.now;
      const known = new Map<string, number>();
      const rules = {
        withAttempt: (t: PlannedTask, n: number) => manifest.withAttempt(t, n),
        retryFailedOf: table.config.retryFailedOf,
        ...(renew ? { renew: () => true } : {}),
        recreateLost: deps.recreateLost === true,
        freshService: table.config.freshService === true,
        lostCount: (id: string, rec: LockTask) => (rec.outputs.some((o) => maybeGone(o, rec, now)) ? known.get(id) : 0),
      };
      // Bounded: each pass learns one more record's lost results.
      for (;;) {
        const walk = attempts(planned, records, rules);
        if (walk.needLost === undefined) return walk;
        known.set(walk.needLost[0], yield* lostCount(walk.needLost[1]));
      }
    });

  /**
   * Admits the attempt a walk reached (`task`: it, in the run's folder) as the run takes it
   * (selection.ts `admissionOf`). Taken: it may be created (a saved plan bounds that) and is
   * followed. Context: it enters only when its results are on disk. A result the service
   * has deleted cannot be fetched again: only the others are checked (a missing one of
   * those is fetched again, a deleted one is lost).
   */
  const admitWalked = (walk: AttemptWalk, task: PlannedTask, front: boolean, parentCreatedHere: boolean): Effect.Effect<void> =>
    Effect.gen(function* () {
      for (const [lost, next] of walk.recreated) {
        deps.emit({ type: "notice", level: "warn", message: `${lost}: its results are lost; made again as ${next} (--recreate-lost)` });
      }
      if (table.has(task.id)) return;
      const { firstAttempt } = walk;
      const rec = walk.record;
      const role = admissionOf(selection, walk);
      if (role === "skip") return;
      if (role === "context") {
        if (!(yield* downloader.verify(toVerify(rec!)))) return;
        return yield* deps.feed({ _tag: "Admit", now: yield* deps.now, task, firstAttempt, front, known: knownOf(rec!), filesOk: true });
      }
      if (!mayCreate(task)) return;
      const filesOk = rec?.state === "downloaded" ? yield* downloader.verify(toVerify(rec)) : undefined;
      yield* deps.feed({
        _tag: "Admit",
        now: yield* deps.now,
        task,
        firstAttempt,
        front,
        ...(rec ? { known: knownOf(rec) } : {}),
        ...(filesOk !== undefined ? { filesOk } : {}),
        // Past a recorded failed attempt, the task's parent is that attempt, not the upstream.
        ...(parentCreatedHere && walk.task === walk.planned ? { parentCreatedHere: true } : {}),
      });
    });

  /** A task entering mid-run (downstream): the attempt walk over the run's records, then admitted as it says. With --failed a selected task whose attempts all failed gets one new attempt now. */
  const admitWalk = (planned: PlannedTask, front: boolean, parentCreatedHere: boolean): Effect.Effect<void> =>
    Effect.flatMap(walkOf(planned, renewOf(planned)), (walk) => admitWalked(walk, walk.task, front, parentCreatedHere));

  const renewOf = (planned: PlannedTask): boolean => selection?.failed === true && selection.selects(planned);

  /**
   * The manifest's tasks at start-up: with the plan's walks of them (RunnerOptions.plan),
   * as they are; without a plan (the engine run alone), each walked here first, by the same walk.
   */
  const startTasks = startAdmission(deps, admitWalked, maybeGone, toVerify, readByOthers);
  const admitAtStart = (walks: readonly AttemptWalk[] | undefined): Effect.Effect<void> =>
    Effect.flatMap(walks !== undefined ? Effect.succeed(walks) : Effect.forEach(manifest.tasks, (t) => walkOf(t, renewOf(t))), (w) =>
      startTasks(manifest.tasks, w),
    );

  const retry = makeRetry(deps, records, mayCreate);

  const upstreamItems = (entry: Entry): UpstreamItem[] => upstreamItemsOf(deps, entry);

  /**
   * Downstream tasks of a finished task, made from the lockfile's records of its outputs
   * (never from what is on disk). One whose upstream result the service has deleted
   * cannot be sent (its request needs the result's link): unless already made, it is
   * held, counted in `held`, and stays in the plan.
   */
  const expand = (entry: Entry): Effect.Effect<void> =>
    downstreamOf(entry.task.job).length === 0 && !reviewed.has(entry.task.job)
      ? Effect.void
      : Effect.gen(function* () {
          const all = upstreamItems(entry);
          const gated = reviewed.has(entry.task.job);
          if (gated) {
            const g = gateItems(all, "outputs", reviews);
            deps.hold?.outputs.set(entry.task.id, { job: entry.task.job, awaiting: g.awaiting, rejected: g.rejected, approved: g.approved });
          }
          if (all.length === 0) return;
          const deleted = new Set((recorder.get(entry.task.id)?.outputs ?? []).filter((o) => o.deleted_at !== undefined && o.variant === "main").map((o) => o.index));
          for (const job of downstreamOf(entry.task.job)) {
            if (selection && !selection.relevantJobs.has(job.id)) continue;
            let items: readonly UpstreamItem[] = all;
            if (gated) {
              // Only approved outputs are used; the rest wait for a person (or never, when rejected).
              const g = gateItems(all, job.upstream?.mode ?? "outputs", reviews);
              const waiting = deps.hold?.held.get(job.id) ?? new Map<string, number>();
              waiting.set(entry.task.id, g.held * (manifest.downstreamPerItem?.(job.id) ?? 1));
              deps.hold?.held.set(job.id, waiting);
              items = g.pass;
              if (items.length === 0) continue;
            }
            let tasks: PlannedTask[];
            const key = `${job.id}\u0000${entry.task.id}`;
            try {
              tasks = manifest.expandDownstream(job.id, items);
              unexpanded.delete(key);
            } catch (error) {
              deps.emit({ type: "notice", level: "warn", message: `${job.id}: cannot expand from ${entry.task.id}: ${(error as Error).message}` });
              unexpanded.set(key, `${job.id} from ${entry.task.id}`);
              continue;
            }
            for (const t of tasks) {
              const usesDeleted = job.upstream?.mode === "outputs" ? deleted.has(t.upstream?.output ?? -1) : deleted.size > 0;
              const rec = recorder.get(t.id);
              if (usesDeleted && (rec === undefined || rec.state === "planned")) {
                held.add(t.id);
                continue;
              }
              yield* admit(t, true, entry.createdHere === true);
            }
          }
        });

  /** Downstream tasks not sent because an upstream result they need is deleted at the service. */
  const held = new Set<string>();
  /** Downstream jobs whose tasks could not be made from an upstream task's results (job and upstream task): the run does not end 0. */
  const unexpanded = new Map<string, string>();

  return { admit, admitAtStart, retry, expand, upstreamItems, held, unexpanded, lostOfRun };
};

export type Planning = ReturnType<typeof makePlanning>;
