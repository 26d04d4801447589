// The run's reuse step (issue 31), before the engine starts: each planned task whose
// request was paid for elsewhere (src/plan/reuse.ts, through diffPlan's `reusable`) has
// its source's files put in this manifest's outputs folder (a hard link where the file
// system allows, else a copy; checked by sha256 after), then is recorded `downloaded`
// with `reused_from` and no billing of its own, through the lockfile store. Files first,
// record after: a kill in between leaves files no record names (the next run finds them
// with the right bytes and records them), never a record without its files. The engine
// then finds these tasks done, and expands their downstream tasks from them: those have the
// same requests as the source's (inputs by content), so they were reused here too.

import { Effect } from "effect";
import { copyFileSync, linkSync, mkdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import { createHash } from "node:crypto";
import { dirname, extname, join } from "node:path";
import { diffPlan, type PlanEntry, type PlanResult } from "../plan/diffPlan.js";
import type { LoadedManifest } from "../manifest/LoadedManifest.js";
import { fileNameFor } from "../manifest/fileNames.js";
import type { DecisionIndex } from "../review/reviewDecision.js";
import type { LockFile, LockOutput, LockTask } from "../state/LockFile.js";
import type { LockStoreService } from "../state/LockStore.js";
import type { LockfileWriteError } from "../state/LockfileError.js";
import { isStoreUrl } from "../fs/StoreUrl.js";
import { isPlainRelativePath } from "../fs/insidePath.js";
import type { RunEvent } from "../engine/RunEvent.js";
import { openReuse, type ReuseAlso } from "./reuseIndex.js";

export interface ReuseRun {
  readonly emulated: boolean;
  /** This run's service identity. */
  readonly service: string;
  /** `run --no-reuse`. */
  readonly off: boolean;
  readonly reviews?: DecisionIndex;
  /** A run of a chosen part (--only, --where, a saved plan): only the tasks it takes are reused. */
  readonly keeps?: (entry: PlanEntry) => boolean;
  readonly onEvent?: (event: RunEvent) => void;
  /** Other manifests of this process's run: their lockfiles are looked in too (reuseIndex.ts). */
  readonly also?: ReuseAlso;
}

const sha256Of = (file: string): string => createHash("sha256").update(readFileSync(file)).digest("hex");

/** `from` at `to` with the same bytes (hard link, else copy), through a temporary name; throws when the bytes differ after. */
const placeFile = (from: string, to: string, sha256: string): void => {
  mkdirSync(dirname(to), { recursive: true });
  const tmp = `${to}.reuse-${process.pid}.tmp`;
  rmSync(tmp, { force: true });
  try {
    try {
      linkSync(from, tmp);
    } catch {
      copyFileSync(from, tmp);
    }
    if (sha256Of(tmp) !== sha256) throw new Error(`${from} changed while it was copied`);
    renameSync(tmp, to);
  } finally {
    rmSync(tmp, { force: true });
  }
};

/**
 * Copies and records every reusable task's results; returns how many were reused. A task
 * whose files cannot be placed is left to the engine (created as before), with a warning.
 */
export const reuseResults = (manifest: LoadedManifest, store: LockStoreService, run: ReuseRun): Effect.Effect<number, LockfileWriteError> =>
  Effect.gen(function* () {
    if (isStoreUrl(manifest.outputsDir) || run.off) return 0;
    const warn = (message: string) => run.onEvent?.({ type: "notice", level: "warn", message });
    const reviews = run.reviews ? { reviews: run.reviews } : {};
    // A rerun with a record for every task asks nothing of other lockfiles: they are not read,
    // and the store's records are not copied (its own map is looked at, before any put).
    // Downstream tasks are known only from the plan: asked once when there are such jobs.
    const view = yield* store.view;
    const everyRecorded = view.size > 0 && manifest.tasks.every((t) => view.has(t.id));
    if (everyRecorded && !manifest.jobs.some((j) => j.upstream)) return 0;
    const lock = yield* store.snapshot;
    const recorded = Object.keys(lock.tasks).length ? lock : undefined;
    if (recorded !== undefined && everyRecorded) {
      let asked = false;
      diffPlan(manifest, recorded, {
        ...reviews,
        reusable: () => {
          asked = true;
          return undefined;
        },
      });
      if (!asked) return 0;
    }
    const reuser = yield* Effect.promise(() => openReuse(manifest, { emulated: run.emulated, service: run.service, off: run.off, warn, ownLock: lock, ...(run.also ? { also: run.also } : {}) }));
    if (reuser === undefined) return 0;
    const plan = diffPlan(manifest, recorded, { ...reviews, reusable: reuser.reusable });
    let reused = 0;
    const now = Date.now();
    for (const e of plan.entries) {
      if (!e.reused || e.dir === undefined || run.keeps?.(e) === false) continue;
      const hit = reuser.chosen.get(e.id);
      if (hit === undefined) continue;
      const { task, source } = hit;
      const outputs: LockOutput[] = [];
      let placed = true;
      for (const o of source.record.outputs) {
        if (o.path === undefined || o.sha256 === undefined) {
          if (o.meta !== undefined) outputs.push({ type: o.type, index: o.index, variant: o.variant, meta: o.meta });
          continue;
        }
        const from = source.files.get(o.path);
        const ext = extname(o.path).slice(1);
        const path = `${e.dir}/${fileNameFor(o, ext === "" ? "bin" : ext, task.name)}`;
        if (from === undefined || !isPlainRelativePath(path)) {
          placed = false;
          break;
        }
        try {
          placeFile(from, join(manifest.outputsDir, ...path.split("/")), o.sha256);
        } catch (error) {
          warn(`reuse: ${e.id} is created instead: its result ${from} could not be placed (${(error as Error).message})`);
          placed = false;
          break;
        }
        outputs.push({ type: o.type, index: o.index, variant: o.variant, path, ...(o.size !== undefined ? { size: o.size } : {}), sha256: o.sha256 });
      }
      if (!placed) continue;
      const record: LockTask = {
        job: task.job,
        kind: task.kind,
        vars: task.vars,
        dir: e.dir,
        request_hash: task.requestHash,
        take: task.take,
        attempt: task.attempt,
        state: "downloaded",
        // The service's task: only where its ids mean something (the same region), so fresh links to the results can be had for downstream tasks.
        ...(source.sameService && source.record.task_id !== undefined ? { task_id: source.record.task_id, ...(source.record.created_at !== undefined ? { created_at: source.record.created_at } : {}) } : {}),
        planned_at: now,
        finished_at: now,
        updated_at: now,
        outputs,
        billing: [],
        ...(task.upstream ? { upstream: task.upstream } : {}),
        reused_from: {
          lockfile: source.lockfile,
          id: source.id,
          ...(source.paidAt !== undefined ? { paid_at: source.paidAt } : {}),
          ...(source.cost ? { cost: source.cost } : {}),
        },
      };
      yield* store.put(e.id, record);
      reused++;
    }
    if (reused > 0) {
      yield* store.flush;
      run.onEvent?.({ type: "notice", level: "info", message: `reused ${reused} paid result(s) of the same request (copied and checked by sha256, no charge); 'reuse: false' or --no-reuse creates them instead` });
    }
    return reused;
  });

export interface ReusePlanSettings {
  readonly emulated: boolean;
  readonly service: string;
  readonly renewFailed: ((task: import("../manifest/PlannedTask.js").PlannedTask) => boolean) | undefined;
  readonly reviews: DecisionIndex | undefined;
  readonly also?: ReuseAlso;
}

/**
 * The plan a person is asked about before spending: `plan` as made, or, when some of its
 * tasks to create were paid for elsewhere, the same plan with those reused (free). Reads
 * the other lockfiles only when the plan has something to create.
 */
export const planWithReuse = (manifest: LoadedManifest, lock: LockFile, plan: PlanResult, settings: ReusePlanSettings): Effect.Effect<PlanResult> =>
  Effect.gen(function* () {
    if (isStoreUrl(manifest.outputsDir) || (plan.total["+"] === 0 && plan.total["~"] === 0)) return plan;
    const reuser = yield* Effect.promise(() => openReuse(manifest, { emulated: settings.emulated, service: settings.service, off: false, warn: () => {}, ownLock: lock, ...(settings.also ? { also: settings.also } : {}) }));
    if (reuser === undefined) return plan;
    const recorded = Object.keys(lock.tasks).length ? lock : undefined;
    return diffPlan(manifest, recorded, {
      ...(settings.renewFailed ? { renewFailed: settings.renewFailed } : {}),
      ...(settings.reviews ? { reviews: settings.reviews } : {}),
      reusable: reuser.reusable,
    });
  });
