// Ids per `GET /tasks` call: the lists are cut into batches of at most the service's
// limit, sent a few at a time, and their answers joined. The live service takes at most
// 20 ids per call (the default batch). A batch answered 1201 (a deployment with a
// smaller limit) is split in halves; if the halves pass, later calls use the smaller
// size. Some deployments answer 1203 for a batch holding an unknown id instead of
// leaving it out: the batch is then split until the unknown ids are isolated (not visible).

import { Effect } from "effect";
import type { ApiError } from "./ApiError.js";
import type { CheckedTasks } from "./clientTypes.js";

export type IdParam = "task_ids" | "external_task_ids";

const chunk = <T>(items: readonly T[], size: number): T[][] => {
  const batches: T[][] = [];
  for (let i = 0; i < items.length; i += size) batches.push(items.slice(i, i + size));
  return batches;
};

const merge = <T>(parts: readonly CheckedTasks<T>[]): CheckedTasks<T> => ({
  tasks: parts.flatMap((p) => p.tasks),
  anomalies: parts.flatMap((p) => p.anomalies),
});

/** A single call for one batch of ids of one kind. */
export type OneBatch<T> = (param: IdParam, ids: readonly string[]) => Effect.Effect<CheckedTasks<T>, ApiError>;

/**
 * Batched queries, each over its own `one`, sharing the batch limit learnt from 1201
 * answers for the client's life.
 */
export const makeIdBatches = (batchSize: number, concurrency: number) => {
  let batchLimit = batchSize;

  const queryIds = <T>(one: OneBatch<T>, param: IdParam, ids: readonly string[]): Effect.Effect<CheckedTasks<T>, ApiError> =>
    one(param, ids).pipe(
      Effect.catchIf(
        (error) => error._tag === "ServiceError" && (error.code === 1201 || error.code === 1203) && ids.length > 1,
        (error) => {
          const half = Math.ceil(ids.length / 2);
          // A limit learnt meanwhile (by an earlier half) applies to the later halves at once.
          const queryPart = (part: readonly string[]) =>
            Effect.suspend(() =>
              part.length > batchLimit ? Effect.map(Effect.forEach(chunk(part, batchLimit), (p) => queryIds(one, param, p)), merge) : queryIds(one, param, part),
            );
          return Effect.map(Effect.forEach(chunk(ids, half), queryPart), (parts) => {
            // Halves that worked after a 1201 mean the batch was too large for the service.
            if (error._tag === "ServiceError" && error.code === 1201) batchLimit = Math.min(batchLimit, half);
            return merge(parts);
          });
        },
      ),
      Effect.catchIf(
        (error) => error._tag === "ServiceError" && error.code === 1203 && ids.length === 1,
        () => Effect.succeed<CheckedTasks<T>>({ tasks: [], anomalies: [] }),
      ),
    );

  /** Tasks of both id kinds, which never share a call; duplicates asked once. */
  return <T>(one: OneBatch<T>, taskIds: readonly string[], externalTaskIds: readonly string[]): Effect.Effect<CheckedTasks<T>, ApiError> =>
    Effect.suspend(() => {
      const batches = [
        ...chunk([...new Set(taskIds)], batchLimit).map((ids) => ["task_ids", ids] as const),
        ...chunk([...new Set(externalTaskIds)], batchLimit).map((ids) => ["external_task_ids", ids] as const),
      ];
      return Effect.map(Effect.forEach(batches, ([param, ids]) => queryIds(one, param, ids), { concurrency }), merge);
    });
};
