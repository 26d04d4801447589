// Submitting: the create worker. Looks the task up first when the lockfile does not record
// it as created, refreshes a downstream request's upstream links when stale, makes the
// intent durable (`submitting`, flushed) before the request leaves, sends, and reports
// one CreateOutcome (an intent written ahead, tick.ts `writeAhead`, is not written again).
// Every send after the first (fresh links after a refused one, a retry) confirms the run
// lock again first.
// What to do after an error is decided in createRules.ts; a create whose outcome is
// unknown is never sent again by the worker (it reports Unknown).

import { Clock, Duration, Effect, type Either } from "effect";
import type { ApiError } from "../api/ApiError.js";
import { classify, retryAfterOf } from "../api/classify.js";
import { refusalLine } from "../api/refusal.js";
import type { PlannedTask } from "../manifest/PlannedTask.js";
import type { Policy, ProductKind } from "../policy/Policy.js";
import type { TaskView } from "../protocol/TaskView.js";
import type { LockfileWriteError } from "../state/LockfileError.js";
import type { LockStoreService } from "../state/LockStore.js";
import { afterCreateError, echoesAnotherTask, outOfSends, type CreateErrorStep } from "./createRules.js";
import type { CreateOutcome, EngineEffect } from "./EngineEvent.js";
import type { Planning, UpstreamLinks } from "./Planning.js";
import type { Recorder } from "./Recorder.js";
import type { RunnableManifest } from "./RunnableManifest.js";
import { viewOne, type KindAdapter } from "./ServiceKinds.js";
import type { TaskTable } from "./TaskTable.js";
import { watermarkOf } from "./taskRules.js";

export interface SubmittingDeps {
  readonly adapters: Record<ProductKind, KindAdapter>;
  readonly recorder: Recorder;
  readonly store: LockStoreService;
  readonly policy: Policy;
  readonly manifest: RunnableManifest;
  readonly table: TaskTable;
  readonly links: UpstreamLinks;
  readonly planning: Planning;
  readonly callbackUrl: string | undefined;
  /** The service's address, named in a refusal's line (refusal.ts). */
  readonly address: string;
}

const errorCode = (e: ApiError): number | undefined => (e._tag === "ServiceError" ? e.code : undefined);

/** The model a create names in its body (an image create's model_name); the video create names it in its path. */
const modelOf = (task: PlannedTask): string | undefined => (task.kind === "image" ? task.request.model_name : undefined);

export const makeSubmitting = (deps: SubmittingDeps) => {
  const { adapters, recorder, store, policy, manifest, table, links } = deps;

  /** A downstream request carries an upstream result URL; send it only while fresh. */
  const freshRequest = (task: PlannedTask): Effect.Effect<PlannedTask, ApiError | string> =>
    Effect.gen(function* () {
      if (!task.upstream) return task;
      const up = table.entries.get(task.upstream.task);
      const known = links.get(task.upstream.task);
      if (known && (yield* Clock.currentTimeMillis) - known.at < Duration.toMillis(policy.urlFreshFor)) return task;
      if (!up?.taskId) return yield* Effect.fail(`its upstream task ${task.upstream.task} is not known at the service`);
      const view = yield* viewOne(adapters[up.task.kind], up.taskId, false);
      if (!view || view.status !== "succeeded") {
        return yield* Effect.fail(`its upstream task ${task.upstream.task} has no results at the service any more`);
      }
      // The upstream result itself must still be there: a stale link is never sent.
      if (!view.outputs.some((o) => o.index === task.upstream!.output && o.variant === "main" && o.url !== undefined)) {
        return yield* Effect.fail(`its upstream result (${task.upstream.task}, output ${task.upstream.output + 1}) is no longer at the service`);
      }
      links.set(up.task.id, view.outputs, yield* Clock.currentTimeMillis);
      const again = manifest.expandDownstream(task.job, deps.planning.upstreamItems(up)).find((t) => t.id === task.id);
      if (!again) return yield* Effect.fail(`its upstream outputs changed since it was planned`);
      return again.attempt === task.attempt ? again : manifest.withAttempt(again, task.attempt);
    });

  /** Looks one task up by external id. */
  const lookupOne = (task: PlannedTask): Effect.Effect<TaskView | undefined, ApiError> =>
    Effect.map(adapters[task.kind].byExternalId([task.id], () => watermarkOf(table.entries.get(task.id)?.task)), (m) => m.get(task.id));

  /** The create worker for one Create effect. */
  const create = (order: Extract<EngineEffect, { _tag: "Create" }>): Effect.Effect<CreateOutcome> => {
    const id = order.entry.task.id;
    let intentRecorded = false;
    // When a create left whose outcome is still unknown: from then on this worker never
    // sends again, and any failure ends in Unknown (the table looks it up until settled).
    let unknownSince: number | undefined;
    // The service said the id is in use (1201): it exists, whatever the lookup after it does.
    let unknownExists = false;
    return Effect.gen(function* () {
      let task = order.entry.task;
      if (order.lookupFirst) {
        const found = yield* lookupOne(task);
        if (found) return { _tag: "Adopted", id, view: found, intentRecorded } as const;
      }
      const fresh = yield* Effect.either(freshRequest(task));
      if (fresh._tag === "Left") {
        const why = typeof fresh.left === "string" ? fresh.left : fresh.left.message;
        return { _tag: "Rejected", id, message: `not sent: ${why}`, intentRecorded } as const;
      }
      task = fresh.right;
      // The intent is durable before the request leaves: a kill after this point is
      // resolved by a lookup, never by a second create. Written ahead (and flushed) while
      // the task waited: only the run lock is confirmed here (a run thawed after a
      // takeover must not send); otherwise written and flushed now (the flush confirms it).
      if (order.intentReady && recorder.get(id)?.state === "submitting") {
        intentRecorded = true;
        recorder.announce(id);
        yield* store.confirmLock;
      } else {
        const now = yield* Clock.currentTimeMillis;
        yield* recorder.record(task, { state: "submitting", submitted_at: now }, now);
        intentRecorded = true;
        yield* store.flush;
      }
      let linkRefreshes = 0;
      for (let sends = 0; sends < policy.sendsPerCreate; sends++) {
        if (sends > 0 || linkRefreshes > 0) {
          // Time has passed (retries, lookups) or a link was refused: refresh when stale.
          const again = yield* Effect.either(freshRequest(task));
          if (again._tag === "Right") task = again.right;
          // Each send, not only the first, leaves only while the run lock is ours: a run
          // frozen since its last check and thawed after a takeover sends nothing more.
          yield* store.confirmLock;
        }
        const sentAt = yield* Clock.currentTimeMillis;
        // A send the client repeats itself (an answer proving nothing was created: 1302, a
        // refused connection) confirms the lock first too. And every send confirms it once
        // more, synchronously, right before its bytes are written to a connected socket: the
        // steps from the check above to there (the effect's, a socket handed over on a later
        // tick, a new connection's connect and handshake) are a gap a run can be frozen in.
        const result = yield* Effect.flatMap(
          Effect.either(adapters[task.kind].create(task, deps.callbackUrl, store.confirmLock, store.confirmLockNow)),
          lockFailureStops,
        );
        if (result._tag === "Right") {
          const { taskId, createdAt, externalId } = result.right;
          if (!echoesAnotherTask(id, externalId)) return { _tag: "Created", id, taskId, createdAt, sentAt } as const;
          // The answer names another task (its external id): its task id, results and
          // charge are not ours. Something was created (the answer says so), so never sent
          // again: its outcome is unknown, and the table looks it up by its own external id.
          const message = `the create's answer names another task (external id ${externalId}, task ${taskId}); not taken as this task's`;
          return { _tag: "Unknown", id, message, sentAt, exists: true, namedAnother: true, intentRecorded } as const;
        }
        const error = result.left;
        const code = errorCode(error);
        let next: CreateErrorStep = afterCreateError(
          { errorClass: classify(error), code, message: error.message },
          { id, sends, linkRefreshes, sendFailures: order.sendFailures, downstream: task.upstream !== undefined },
          policy,
        );
        if (next._tag === "Unknown") {
          unknownSince = sentAt;
          unknownExists = next.exists;
          // Visible already? Then adopt it now; else the table keeps looking (never sent again here).
          const found = yield* lookupOne(task);
          if (found) return { _tag: "Adopted", id, view: found, intentRecorded } as const;
          return { _tag: "Unknown", id, message: error.message, sentAt, exists: next.exists, intentRecorded } as const;
        }
        if (next._tag === "Lookup") {
          const found = yield* lookupOne(task);
          if (found) return { _tag: "Adopted", id, view: found, intentRecorded } as const;
          next = next.then;
        }
        switch (next._tag) {
          case "NoSlot": {
            const asked = retryAfterOf(error);
            return asked > 0 ? ({ _tag: "NoSlot", id, retryAfterMs: asked } as const) : ({ _tag: "NoSlot", id } as const);
          }
          case "Refused":
            return { _tag: "Refused", id, code, message: refusalLine(error, { address: deps.address, model: modelOf(task) }), keepSubmitting: next.keepSubmitting, intentRecorded } as const;
          case "RefreshLinks":
            linkRefreshes++;
            links.forget(task.upstream!.task);
            sends--; // not a send whose outcome was in doubt
            continue;
          case "SendFailed":
            return { _tag: "SendFailed", id, message: error.message, lookupFirst: next.lookupFirst, intentRecorded } as const;
          case "Rejected":
            return { _tag: "Rejected", id, code, message: error.message, intentRecorded } as const;
          case "Lookup":
          case "Unknown":
            continue; // handled above
        }
      }
      return { _tag: "SendFailed", id, message: "the service did not confirm the create after several tries", lookupFirst: outOfSends.lookupFirst, intentRecorded } as const;
    }).pipe(
      Effect.catchAll((error: ApiError | LockfileWriteError): Effect.Effect<CreateOutcome> => {
        if (error._tag === "LockfileWriteError") {
          // The intent could not be made durable, or the lock was lost before a send
          // again (every earlier send was answered: nothing created), so nothing was
          // sent that is in doubt; try later, and after repeated failures leave it for
          // the next run (exit 3).
          return Effect.succeed({ _tag: "SendFailed", id, message: error.message, lookupFirst: true, intentRecorded });
        }
        if (unknownSince !== undefined) {
          // The lookup after an unknown-outcome create failed: still unknown.
          return Effect.succeed({ _tag: "Unknown", id, message: error.message, sentAt: unknownSince, exists: unknownExists, intentRecorded });
        }
        if (classify(error) === "refused") {
          // Refused during a lookup: whether the task exists is still unknown.
          return Effect.succeed({ _tag: "Refused", id, code: errorCode(error), message: refusalLine(error, { address: deps.address }), keepSubmitting: true, intentRecorded });
        }
        return Effect.succeed({ _tag: "SendFailed", id, message: error.message, lookupFirst: true, intentRecorded });
      }),
    );
  };

  return { create };
};

/** The lock lost before a resend stops the create as the check before the first send does; a service's error is the worker's to read. */
const lockFailureStops = <A>(
  result: Either.Either<A, ApiError | LockfileWriteError>,
): Effect.Effect<Either.Either<A, ApiError>, LockfileWriteError> =>
  result._tag === "Left" && result.left._tag === "LockfileWriteError" ? Effect.fail(result.left) : Effect.succeed(result as Either.Either<A, ApiError>);
