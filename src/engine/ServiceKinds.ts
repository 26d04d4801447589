// The service seen per product kind: one adapter for videos and one for images over the
// client, so the engine says "create it", "find these", "follow these" once and never
// asks which kind it holds. Finding is batched: video ids go 20 to a GET /tasks (inside
// the client); image tasks are read one by one when few, else from list pages, newest
// first. Answers come back as TaskViews (protocol/TaskView.ts).

import { Effect } from "effect";
import type { ApiError } from "../api/ApiError.js";
import type { TaskAnomaly } from "../api/interpretAnswer.js";
import type { CheckedTasks, LastCheck, OmniClientService } from "../api/OmniClient.js";
import { withRetry } from "../api/retry.js";
import { isTaskNotFound } from "../api/classify.js";
import type { ImageCreateRequest, ImageTask, VideoCreateRequest, VideoTask } from "../protocol/wire.js";
import type { PlannedTask } from "../manifest/PlannedTask.js";
import type { Policy, ProductKind } from "../policy/Policy.js";
import { fromImage, fromVideo, type TaskView } from "../protocol/TaskView.js";
import type { Asked, OddTask } from "./EngineEvent.js";

/** A poll's answer: the readable tasks, and the unreadable ones with what was wrong. */
export interface Followed {
  readonly views: TaskView[];
  readonly odd: OddTask[];
}

const oddOf = (anomalies: readonly TaskAnomaly[]): OddTask[] =>
  anomalies.map((a) => ({
    ...(a.taskId !== undefined ? { taskId: a.taskId } : {}),
    ...(a.externalId !== undefined ? { externalId: a.externalId } : {}),
    problems: a.problems,
    ...(a.charge !== undefined ? { charge: a.charge, requestId: a.requestId } : {}),
  }));

export interface KindAdapter {
  /**
   * Sends the create (retried while resending is safe), with the callback address when
   * set; `beforeResend` runs before each send after the first (the run lock confirmed
   * again) and, failing, stops the create with its error; `lastCheck` (the same check,
   * synchronous) runs right before each send's bytes are written, and withholds it with
   * its error (OmniClient.ts `LastCheck`).
   */
  readonly create: <G = never>(
    task: PlannedTask,
    callbackUrl: string | undefined,
    beforeResend?: Effect.Effect<void, G>,
    lastCheck?: LastCheck<G>,
  ) => Effect.Effect<{ readonly taskId: string; readonly createdAt: number; readonly externalId: string | undefined }, ApiError | G>;
  /** Tasks with these external ids, keyed by external id; absent ones are not (yet) visible. */
  readonly byExternalId: (ids: readonly string[], watermarkOf: (id: string) => boolean) => Effect.Effect<Map<string, TaskView>, ApiError>;
  /**
   * Tasks in flight by system id (a poll); absent ones are not visible. Each task of an
   * answer is read on its own: unreadable ones come back as `odd` (the others proceed),
   * and tasks the answer holds that were not asked for come back too, for the machine
   * to ignore with a notice.
   */
  readonly byId: (tasks: readonly Asked[]) => Effect.Effect<Followed, ApiError>;
}

/** The two adapters; `currency` names the account's currency once known (image charges come without one). */
export const makeKindAdapters = (
  client: OmniClientService,
  policy: Policy,
  currency: () => string | undefined,
): Record<ProductKind, KindAdapter> => ({
  video: {
    create: (task, url, beforeResend, lastCheck) => {
      const request = task.request as VideoCreateRequest;
      // The body actually sent: the callback address is not part of the request (nor its hash or id).
      const body = url === undefined ? request : { ...request, options: { ...request.options, callback_url: url } };
      // The job's model, or the service's default (`<service>-o1`) when it names none.
      const model = task.kind === "video" ? task.model : undefined;
      return Effect.map(withRetry(client.createVideo(body, lastCheck, model), policy.requestRetry, beforeResend, policy.retryAfterCap), (d) => ({ taskId: d.id, createdAt: d.create_time, externalId: d.external_id }));
    },
    byExternalId: (ids, watermarkOf) =>
      Effect.map(findVideosByExternalId(client, policy, ids), (m) => {
        const out = new Map<string, TaskView>();
        for (const [id, t] of m) out.set(id, fromVideo(t, watermarkOf(id)));
        return out;
      }),
    byId: (tasks) => {
      const byTaskId = new Map(tasks.map((a) => [a.taskId, a] as const));
      return Effect.map(findVideosById(client, policy, [...byTaskId.keys()]), (c) => ({
        views: c.tasks.map((t) => fromVideo(t, byTaskId.get(t.id)?.watermark ?? false)),
        odd: oddOf(c.anomalies),
      }));
    },
  },
  image: {
    create: (task, url, beforeResend, lastCheck) => {
      const request = task.request as ImageCreateRequest;
      const body = url === undefined ? request : { ...request, callback_url: url };
      return Effect.map(withRetry(client.createImage(body, lastCheck), policy.requestRetry, beforeResend, policy.retryAfterCap), (d) => ({ taskId: d.task_id, createdAt: d.created_at, externalId: d.task_info?.external_task_id }));
    },
    byExternalId: (ids, watermarkOf) =>
      Effect.map(findImagesByExternalId(client, policy, ids), (m) => {
        const out = new Map<string, TaskView>();
        for (const [id, t] of m) out.set(id, fromImage(t, watermarkOf(id), currency()));
        return out;
      }),
    byId: (tasks) => {
      const byTaskId = new Map(tasks.map((a) => [a.taskId, a] as const));
      return Effect.map(
        findImagesById(
          client,
          policy,
          tasks.map((a) => ({ taskId: a.taskId, createdAt: a.createdAt })),
        ),
        (c) => ({ views: c.tasks.map((t) => fromImage(t, byTaskId.get(t.task_id)?.watermark ?? false, currency())), odd: oddOf(c.anomalies) }),
      );
    },
  },
});

/** The current view of one task by its system id (fresh links), if the service shows it. */
export const viewOne = (adapter: KindAdapter, taskId: string, watermark: boolean): Effect.Effect<TaskView | undefined, ApiError> =>
  Effect.map(adapter.byId([{ id: "", taskId, createdAt: undefined, watermark }]), (c) => c.views.find((v) => v.taskId === taskId));

/** Video tasks with these external ids, keyed by external id; absent ones are not (yet) visible. */
const findVideosByExternalId = (
  client: OmniClientService,
  policy: Policy,
  ids: readonly string[],
): Effect.Effect<Map<string, VideoTask>, ApiError> =>
  ids.length === 0
    ? Effect.succeed(new Map())
    : withRetry(client.queryVideos({ externalTaskIds: [...ids] }), policy.requestRetry, undefined, policy.retryAfterCap).pipe(
        Effect.map((tasks) => {
          const wanted = new Set(ids);
          const found = new Map<string, VideoTask>();
          for (const t of tasks) if (t.external_id !== undefined && wanted.has(t.external_id)) found.set(t.external_id, t);
          return found;
        }),
      );

/** Video tasks by system id, each read on its own (unreadable ones as anomalies). */
const findVideosById = (
  client: OmniClientService,
  policy: Policy,
  taskIds: readonly string[],
): Effect.Effect<CheckedTasks<VideoTask>, ApiError> =>
  taskIds.length === 0
    ? Effect.succeed({ tasks: [], anomalies: [] })
    : withRetry(client.queryVideosChecked({ taskIds: [...taskIds] }), policy.requestRetry, undefined, policy.retryAfterCap);

/**
 * Reads image list pages (newest first) until `done` says every wanted task was seen,
 * or a page is short (the last), or a page ends older than `olderThan` (nothing wanted
 * can follow), or the page bound is reached.
 */
const scanImagePages = (
  client: OmniClientService,
  policy: Policy,
  pageSize: number,
  keep: (task: ImageTask) => void,
  done: () => boolean,
  olderThan: number | undefined,
  odd: (anomaly: TaskAnomaly) => void,
): Effect.Effect<void, ApiError> =>
  Effect.gen(function* () {
    for (let pageNum = 1; pageNum <= policy.imageMaxPages; pageNum++) {
      const checked = yield* withRetry(client.listImagesChecked({ pageNum, pageSize }), policy.requestRetry, undefined, policy.retryAfterCap);
      const page = checked.tasks;
      for (const t of page) keep(t);
      for (const a of checked.anomalies) odd(a);
      if (done() || page.length + checked.anomalies.length < pageSize) return;
      const last = page[page.length - 1];
      if (olderThan !== undefined && last !== undefined && last.created_at < olderThan) return;
    }
  });

/**
 * Image tasks with these external ids, keyed by external id: the client tries B2 for a
 * few and pages B3 once for all the others. `createdAfterMs` bounds the paging.
 */
const findImagesByExternalId = (
  client: OmniClientService,
  policy: Policy,
  ids: readonly string[],
  createdAfterMs?: number,
): Effect.Effect<Map<string, ImageTask>, ApiError> =>
  ids.length === 0
    ? Effect.succeed(new Map())
    : withRetry(
        client.findImagesByExternalIds(ids, {
          pageSize: 500,
          maxPages: policy.imageMaxPages,
          ...(createdAfterMs !== undefined ? { createdAfterMs } : {}),
        }),
        policy.requestRetry,
        undefined,
        policy.retryAfterCap,
      );

/** Image tasks in flight by system id, keyed by id; `oldestCreatedAt` bounds the listing. */
const findImagesById = (
  client: OmniClientService,
  policy: Policy,
  tasks: ReadonlyArray<{ readonly taskId: string; readonly createdAt: number | undefined }>,
): Effect.Effect<CheckedTasks<ImageTask>, ApiError> =>
  Effect.gen(function* () {
    const found = new Map<string, ImageTask>();
    const anomalies: TaskAnomaly[] = [];
    const result = () => ({ tasks: [...found.values()], anomalies });
    if (tasks.length === 0) return result();
    if (tasks.length <= policy.imageSingleQueryMax) {
      yield* Effect.forEach(
        tasks,
        ({ taskId }) =>
          withRetry(client.getImageChecked(taskId), policy.requestRetry, undefined, policy.retryAfterCap).pipe(
            Effect.tap((c) =>
              Effect.sync(() => {
                // An answer about another task than the one asked is not this task's answer.
                for (const t of c.tasks) found.set(t.task_id, t);
                for (const a of c.anomalies) anomalies.push(a.taskId === undefined ? { ...a, taskId } : a);
              }),
            ),
            // Not visible yet (or gone): the next poll asks again.
            Effect.catchIf(
              (e) => isTaskNotFound(e),
              () => Effect.void,
            ),
          ),
        { concurrency: 4, discard: true },
      );
      return result();
    }
    const wanted = new Set(tasks.map((t) => t.taskId));
    const oldest = Math.min(...tasks.map((t) => t.createdAt ?? 0));
    const pageSize = Math.min(500, Math.max(policy.imagePageSize, tasks.length * 2));
    yield* scanImagePages(
      client,
      policy,
      pageSize,
      (t) => {
        if (wanted.has(t.task_id)) found.set(t.task_id, t);
      },
      () => found.size === wanted.size,
      oldest > 0 ? oldest : undefined,
      (a) => {
        if (a.taskId === undefined || wanted.has(a.taskId)) anomalies.push(a);
      },
    );
    return result();
  });
