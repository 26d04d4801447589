// Finding tasks at the service: by external_task_id (before a create whose earlier
// attempt may have landed, and after a lost lockfile) and by task id (following tasks
// in flight). Batched: video ids go 50 to a GET /tasks (inside the client); image tasks
// are read one by one when few, else from list pages, newest first.

import { Effect } from "effect";
import type { ApiError } from "../api/ApiError.js";
import type { OmniClientService } from "../api/OmniClient.js";
import { withRetry } from "../api/retry.js";
import type { ImageTask, VideoTask } from "../api/wire.js";
import type { Policy } from "../policy/Policy.js";

/** Video tasks with these external ids, keyed by external id; absent ones are not (yet) visible. */
export const findVideosByExternalId = (
  client: OmniClientService,
  policy: Policy,
  ids: readonly string[],
): Effect.Effect<Map<string, VideoTask>, ApiError> =>
  ids.length === 0
    ? Effect.succeed(new Map())
    : withRetry(client.queryVideos({ externalTaskIds: [...ids] }), policy.requestRetry).pipe(
        Effect.map((tasks) => {
          const wanted = new Set(ids);
          const found = new Map<string, VideoTask>();
          for (const t of tasks) if (t.external_id !== undefined && wanted.has(t.external_id)) found.set(t.external_id, t);
          return found;
        }),
      );

/** Video tasks by system id, keyed by id. */
export const findVideosById = (
  client: OmniClientService,
  policy: Policy,
  taskIds: readonly string[],
): Effect.Effect<Map<string, VideoTask>, ApiError> =>
  taskIds.length === 0
    ? Effect.succeed(new Map())
    : withRetry(client.queryVideos({ taskIds: [...taskIds] }), policy.requestRetry).pipe(
        Effect.map((tasks) => new Map(tasks.map((t) => [t.id, t] as const))),
      );

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
): Effect.Effect<void, ApiError> =>
  Effect.gen(function* () {
    for (let pageNum = 1; pageNum <= policy.imageMaxPages; pageNum++) {
      const page = yield* withRetry(client.listImages({ pageNum, pageSize }), policy.requestRetry);
      for (const t of page) keep(t);
      if (done() || page.length < pageSize) return;
      const last = page[page.length - 1];
      if (olderThan !== undefined && last !== undefined && last.created_at < olderThan) return;
    }
  });

/**
 * Image tasks with these external ids, keyed by external id: the client tries B2 for a
 * few and pages B3 once for all the others. `createdAfterMs` bounds the paging.
 */
export const findImagesByExternalId = (
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
      );

/** Image tasks in flight by system id, keyed by id; `oldestCreatedAt` bounds the listing. */
export const findImagesById = (
  client: OmniClientService,
  policy: Policy,
  tasks: ReadonlyArray<{ readonly taskId: string; readonly createdAt: number | undefined }>,
): Effect.Effect<Map<string, ImageTask>, ApiError> =>
  Effect.gen(function* () {
    const found = new Map<string, ImageTask>();
    if (tasks.length === 0) return found;
    if (tasks.length <= policy.imageSingleQueryMax) {
      yield* Effect.forEach(
        tasks,
        ({ taskId }) =>
          withRetry(client.getImage(taskId), policy.requestRetry).pipe(
            Effect.tap((t) => Effect.sync(() => t && found.set(taskId, t))),
            // Not visible yet (or gone): the next poll asks again.
            Effect.catchIf(
              (e) => e._tag === "ServiceError" && (e.code === 1203 || e.httpStatus === 404),
              () => Effect.void,
            ),
          ),
        { concurrency: 4, discard: true },
      );
      return found;
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
    );
    return found;
  });
