// Recovery at start-up: a fresh service forgets the old one's tasks, the manifest's tasks
// enter the run as the lockfile left them, and every task the lockfile does not record as
// created is looked up by external id in batches (50 video ids a query, image list pages),
// so it is followed rather than created again. Tasks whose create's outcome is unknown
// (`submitting`) are looked up with each poll until settled (createRules.ts). A lockfile
// that is not the one the last run left (restored, replaced: src/state/RunTrace.ts) may
// lack creates that landed seconds ago and are not yet visible: the tasks not found are
// looked up once more after the visibility window (`lookupAgainAt`) before any create.

import { Clock, Duration, Effect } from "effect";
import { classify } from "../api/classify.js";
import { refusalLine } from "../api/refusal.js";
import type { ProductKind } from "../policy/Policy.js";
import type { TaskState } from "../state/LockFile.js";
import type { AttemptWalk } from "../plan/attempts.js";
import type { EngineEvent } from "./EngineEvent.js";
import type { Planning } from "./Planning.js";
import { freshRecord, type Recorder } from "./Recorder.js";
import type { RunEvent } from "./RunEvent.js";
import type { RunnableManifest } from "./RunnableManifest.js";
import type { KindAdapter } from "./ServiceKinds.js";
import type { TaskTable } from "./TaskTable.js";
import { watermarkOf } from "./taskRules.js";

/** States a new service has nothing to add to: the files are here, or the task ended. */
const FINISHED_LOCALLY: ReadonlySet<TaskState> = new Set(["downloaded", "failed", "rejected"]);

/**
 * The old service is gone with its tasks (a new in-process emulator): waiting on them
 * would leave them stuck, so they are planned again. Finished work (downloaded, failed,
 * rejected) stays as the record of that run.
 */
export const forgetOldService = (recorder: Pick<Recorder, "records" | "put">): Effect.Effect<void> =>
  Effect.gen(function* () {
    const now = yield* Clock.currentTimeMillis;
    for (const [id, rec] of [...recorder.records]) {
      // An abandoned record is history (its next attempt is the task now): never rewritten.
      if (FINISHED_LOCALLY.has(rec.state) || (rec.state === "planned" && rec.task_id === undefined) || rec.abandoned !== undefined) continue;
      yield* recorder.put(id, freshRecord(rec, "planned", now));
    }
  });

export interface RecoveryDeps {
  readonly manifest: RunnableManifest;
  readonly table: TaskTable;
  readonly planning: Planning;
  readonly adapters: Record<ProductKind, KindAdapter>;
  readonly feed: (event: EngineEvent) => Effect.Effect<void>;
  readonly emit: (event: RunEvent) => void;
  /** The lockfile may lack creates that landed until this time (LockStore.mayLackCreatesUntil). */
  readonly mayLackCreatesUntil?: number | undefined;
  /** The service's address, named in a refusal's line (refusal.ts). */
  readonly address?: string | undefined;
  /** The plan's walk of each manifest task, in order (RunnerOptions.plan); undefined: walked at the start. */
  readonly walks?: readonly AttemptWalk[] | undefined;
}

/**
 * When the tasks a start-up lookup did not find must be looked up again before any is
 * created, or undefined when that lookup settles them. A lockfile that may lack creates
 * landed until `lacksUntil` cannot trust "not found" before the service's visibility
 * window has passed since then (`policy.unknownOutcomeWindow`, as for any create whose
 * outcome is unknown). A fresh service (a new emulator) holds nothing: never.
 */
export const lookupAgainAt = (lacksUntil: number | undefined, window: Duration.Duration, freshService: boolean): number | undefined =>
  lacksUntil === undefined || freshService ? undefined : lacksUntil + Duration.toMillis(window);

/** Admits the manifest's tasks (as the plan walked them) and looks up the ones whose outcome is unknown. */
export const recover = (deps: RecoveryDeps): Effect.Effect<void> =>
  Effect.gen(function* () {
    const { table } = deps;
    yield* deps.planning.admitAtStart(deps.walks);
    const again = lookupAgainAt(deps.mayLackCreatesUntil, table.config.policy.unknownOutcomeWindow, table.config.freshService);
    // Not found before `again`: proves nothing yet, so those tasks stay "look up first"
    // (fed as not looked up) until the second round settles them.
    const settleMissing = again === undefined || again <= (yield* Clock.currentTimeMillis);
    const notFound = { video: [] as string[], image: [] as string[] };
    const lookUp = (kind: "video" | "image", ids: readonly string[], settle: boolean) =>
      Effect.gen(function* () {
        const found = yield* Effect.either(deps.adapters[kind].byExternalId(ids, (id) => watermarkOf(table.entries.get(id)?.task)));
        const now = yield* Clock.currentTimeMillis;
        if (found._tag === "Left") {
          const refused = classify(found.left) === "refused";
          yield* deps.feed({ _tag: "LookupFailed", now, kind, message: refused ? refusalLine(found.left, { address: deps.address ?? "" }) : found.left.message, refused });
        } else {
          notFound[kind] = ids.filter((id) => !found.right.has(id));
          yield* deps.feed({ _tag: "LookedUp", now, ids: settle ? ids : ids.filter((id) => found.right.has(id)), found: found.right });
        }
      });
    for (const kind of ["video", "image"] as const) {
      const unsure = [...table.entries.values()].filter((e) => e.lookupFirst && e.phase === "waiting" && e.task.kind === kind);
      if (unsure.length === 0) continue;
      yield* lookUp(kind, unsure.map((e) => e.task.id), settleMissing);
    }
    const now = yield* Clock.currentTimeMillis;
    const count = notFound.video.length + notFound.image.length;
    if (!settleMissing && count > 0 && again! > now && !table.stop) {
      deps.emit({
        type: "notice",
        level: "warn",
        message:
          `${deps.manifest.lockfilePath} is not the lockfile the last run here left (restored or replaced?): it may lack tasks ` +
          `created until ${new Date(deps.mayLackCreatesUntil!).toISOString()}, which the service may not show yet. ` +
          `Waiting ${((again - now) / 1000).toFixed(1)} s, then looking ${count} task(s) up again before creating them`,
      });
      yield* Effect.sleep(Duration.millis(again! - now));
    }
    if (!settleMissing) {
      for (const kind of ["video", "image"] as const) {
        const ids = notFound[kind].filter((id) => table.entries.get(id)?.phase === "waiting");
        if (ids.length > 0) yield* lookUp(kind, ids, true);
      }
    }
    if (table.config.lookupFirst && table.counters.adopted > 0) {
      deps.emit({
        type: "notice",
        level: "info",
        message: `found ${table.counters.adopted} task(s) at the service that the lockfile did not record as created; they are followed, not created again`,
      });
    }
  });
