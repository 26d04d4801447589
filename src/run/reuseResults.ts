// The run's reuse step (issue 31), before the engine starts: each planned task whose
// request was paid for elsewhere (src/plan/reuse.ts, through diffPlan's `reusable`) has
// its source's files put in this manifest's outputs folder or store (reusePlace.ts: a hard
// link, a copy, a server-side copy within a store, a store's object downloaded, or the
// results fetched from the service by the source's task id; each checked by sha256 after), then is recorded `downloaded`
// with `reused_from` and no billing of its own, through the lockfile store. Files first,
// record after: a kill in between leaves files no record names (the next run finds them
// with the right bytes and records them), never a record without its files. The engine
// then finds these tasks done, and expands their downstream tasks from them: those have the
// same requests as the source's (inputs by content), so they were reused here too.

import { Clock, Effect } from "effect";
import { extname } from "node:path";
import { diffPlan, type PlanEntry, type PlanResult } from "../plan/diffPlan.js";
import type { LoadedManifest } from "../manifest/LoadedManifest.js";
import type { PlannedTask } from "../manifest/PlannedTask.js";
import { fileNameFor } from "../manifest/fileNames.js";
import type { ReuseSource } from "../plan/reuse.js";
import type { DecisionIndex } from "../review/reviewDecision.js";
import type { LockFile, LockOutput, LockTask } from "../state/LockFile.js";
import type { LockStoreService } from "../state/LockStore.js";
import type { LockfileWriteError } from "../state/LockfileError.js";
import { isStoreUrl, parseStoreUrl } from "../fs/StoreUrl.js";
import { isPlainRelativePath } from "../fs/insidePath.js";
import { openStoreSink } from "../outputs/openStore.js";
import type { StoreSink } from "../outputs/StoreSink.js";
import type { OmniClient } from "../api/OmniClient.js";
import type { Downloader } from "../outputs/Downloader.js";
import type { RunPolicy } from "../policy/Policy.js";
import type { ObjectStore } from "../store/ObjectStore.js";
import type { RunEvent } from "../engine/RunEvent.js";
import { openReuse, type ReuseAlso } from "./reuseIndex.js";
import { fetchFromService, placeOne, unplace, type ReuseTarget } from "./reusePlace.js";

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
  /** Where AWS_* settings for stores (this manifest's and the sources') are read from. Default: process.env. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** This manifest's outputs store as the run holds it (its listing then knows what the step placed); absent: opened here. */
  readonly outputStore?: StoreSink;
  /** Other manifests of this process's run: their lockfiles are looked in too (reuseIndex.ts). */
  readonly also?: ReuseAlso;
}

/** This manifest's outputs and the source stores, open for the step and closed after it (a scope). */
const openTarget = (manifest: LoadedManifest, env: Readonly<Record<string, string | undefined>> | undefined, held: StoreSink | undefined) =>
  Effect.gen(function* () {
    const opened = new Map<string, Promise<ObjectStore>>();
    yield* Effect.addFinalizer(() => Effect.promise(async () => {
      for (const s of opened.values()) await s.then((x) => x.close(), () => undefined);
    }));
    const sink = !isStoreUrl(manifest.outputsDir)
      ? undefined
      : held !== undefined
        ? held
        : yield* Effect.acquireRelease(Effect.promise(() => openStoreSink(manifest.outputsDir, { ...(env ? { env } : {}), check: false })), (s) => Effect.promise(() => s.close()));
    const source = (url: string): Promise<ObjectStore> => {
      let got = opened.get(url);
      if (got === undefined) {
        const location = parseStoreUrl(url);
        got = "problem" in location ? Promise.reject(new Error(location.problem)) : import("../store/S3Store.js").then((m) => m.openS3Store(location, env ? { env } : {}));
        opened.set(url, got);
      }
      return got;
    };
    return { outputsDir: manifest.outputsDir, ...(sink ? { sink } : {}), source } satisfies ReuseTarget;
  });

/** A reused task's files in this manifest's outputs, each checked by sha256: its outputs' records, or why not. */
const placeAll = (target: ReuseTarget, task: PlannedTask, dir: string, source: ReuseSource) =>
  Effect.gen(function* () {
    if (source.fetch) return yield* fetchFromService(target, task, dir, source);
    const outputs: LockOutput[] = [];
    const placed: string[] = [];
    for (const o of source.record.outputs) {
      if (o.path === undefined || o.sha256 === undefined) {
        if (o.meta !== undefined) outputs.push({ type: o.type, index: o.index, variant: o.variant, meta: o.meta });
        continue;
      }
      const from = source.files.get(o.path);
      const ext = extname(o.path).slice(1);
      const path = `${dir}/${fileNameFor(o, ext === "" ? "bin" : ext, task.name)}`;
      if (from === undefined || !isPlainRelativePath(path)) return { why: `its result ${o.path} has no safe place` } as const;
      const sha256 = o.sha256;
      const etag = yield* Effect.either(Effect.tryPromise(() => placeOne(target, source, { ...o, sha256 }, from, path)));
      if (etag._tag === "Left") {
        yield* Effect.promise(() => unplace(target, placed));
        const cause = (etag.left.cause as Error | undefined)?.message ?? etag.left.message;
        return { why: `its result ${source.store ? `${source.store}/` : ""}${from} could not be placed (${cause})` } as const;
      }
      placed.push(path);
      outputs.push({ type: o.type, index: o.index, variant: o.variant, path, ...(o.size !== undefined ? { size: o.size } : {}), sha256, ...(etag.right !== undefined ? { etag: etag.right } : {}) });
    }
    return { outputs } as const;
  });

/** The record of a reused task: downloaded, its results placed, where it came from, no charge of its own. */
const reusedRecord = (task: PlannedTask, dir: string, source: ReuseSource, outputs: LockOutput[], now: number): LockTask => ({
  job: task.job,
  kind: task.kind,
  vars: task.vars,
  dir,
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
});

/**
 * Copies (or fetches) and records every reusable task's results; returns how many were
 * reused. A task whose files cannot be had with their recorded bytes is left to the engine
 * (created as before), with a warning.
 */
export const reuseResults = (manifest: LoadedManifest, store: LockStoreService, run: ReuseRun): Effect.Effect<number, LockfileWriteError, OmniClient | RunPolicy | Downloader> =>
  Effect.gen(function* () {
    if (run.off) return 0;
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
    const now = yield* Clock.currentTimeMillis;
    const settings = { emulated: run.emulated, service: run.service, off: run.off, warn, ownLock: lock, now, ...(run.env ? { env: run.env } : {}), ...(run.also ? { also: run.also } : {}) };
    const reuser = yield* Effect.promise(() => openReuse(manifest, settings));
    if (reuser === undefined) return 0;
    const plan = diffPlan(manifest, recorded, { ...reviews, reusable: reuser.reusable });
    const wanted = plan.entries.filter((e) => e.reused && e.dir !== undefined && run.keeps?.(e) !== false && reuser.chosen.has(e.id));
    if (wanted.length === 0) return 0;
    let reused = 0;
    let fetched = 0;
    yield* Effect.scoped(
      Effect.gen(function* () {
        const target = yield* openTarget(manifest, run.env, run.outputStore);
        for (const e of wanted) {
          const { task, source } = reuser.chosen.get(e.id)!;
          const got = yield* placeAll(target, task, e.dir!, source);
          if ("why" in got) {
            warn(`reuse: ${e.id} is created instead: ${got.why}`);
            continue;
          }
          // Files first, record after: a kill in between leaves files no record names.
          yield* store.put(e.id, reusedRecord(task, e.dir!, source, got.outputs, yield* Clock.currentTimeMillis));
          reused++;
          if (source.fetch) fetched++;
        }
      }),
    );
    if (reused > 0) {
      yield* store.flush;
      const by = fetched > 0 ? ` (${fetched} fetched again from the service by their task ids)` : "";
      run.onEvent?.({ type: "notice", level: "info", message: `reused ${reused} paid result(s) of the same request${by} (copied and checked by sha256, no charge); 'reuse: false' or --no-reuse creates them instead` });
    }
    return reused;
  });

export interface ReusePlanSettings {
  readonly emulated: boolean;
  readonly service: string;
  readonly renewFailed: ((task: import("../manifest/PlannedTask.js").PlannedTask) => boolean) | undefined;
  readonly reviews: DecisionIndex | undefined;
  readonly env?: Readonly<Record<string, string | undefined>>;
  readonly also?: ReuseAlso;
}

/**
 * The plan a person is asked about before spending: `plan` as made, or, when some of its
 * tasks to create were paid for elsewhere, the same plan with those reused (free). Reads
 * the other lockfiles only when the plan has something to create.
 */
export const planWithReuse = (manifest: LoadedManifest, lock: LockFile, plan: PlanResult, settings: ReusePlanSettings): Effect.Effect<PlanResult> =>
  Effect.gen(function* () {
    if (plan.total["+"] === 0 && plan.total["~"] === 0) return plan;
    const now = yield* Clock.currentTimeMillis;
    const reuser = yield* Effect.promise(() => openReuse(manifest, { emulated: settings.emulated, service: settings.service, off: false, warn: () => {}, ownLock: lock, now, ...(settings.env ? { env: settings.env } : {}) }));
    if (reuser === undefined) return plan;
    const recorded = Object.keys(lock.tasks).length ? lock : undefined;
    return diffPlan(manifest, recorded, {
      ...(settings.renewFailed ? { renewFailed: settings.renewFailed } : {}),
      ...(settings.reviews ? { reviews: settings.reviews } : {}),
      reusable: reuser.reusable,
    });
  });
