// A2 (`GET /tasks` by ids, in batches: idBatches.ts) and A3 (`POST /tasks`, a cursor
// page), each strict (any unreadable task fails the answer) or checked (unreadable
// tasks come as anomalies beside the good ones).

import { Effect } from "effect";
import type { ApiError } from "./ApiError.js";
import { strict, type ApiTransport } from "./ApiTransport.js";
import type { CheckedTasks, VideoQuery } from "./clientTypes.js";
import { fillVideoTask } from "./fillDefaults.js";
import { makeIdBatches, type OneBatch } from "./idBatches.js";
import type { TaskAnomaly } from "./interpretAnswer.js";
import { paths, type CursorPage, type CursorQueryRequest, type VideoTask } from "../protocol/wire.js";

export const videoQueries = (t: ApiTransport, batchSize: number, concurrency: number) => {
  const batches = makeIdBatches(batchSize, concurrency);
  const queryBatch =
    (strictly: boolean): OneBatch<VideoTask> =>
    (param, ids) =>
      t.idempotent(
        Effect.map(
          Effect.flatMap(t.callTasks("queryVideos", "GET", `${paths.tasks}?${param}=${ids.map(encodeURIComponent).join(",")}`), (c) =>
            strictly ? strict(c) : Effect.succeed(c),
          ),
          (c): CheckedTasks<VideoTask> => ({ tasks: (c.tasks as VideoTask[]).map(fillVideoTask), anomalies: c.anomalies }),
        ),
      );

  const cursorVideosWith = (req: CursorQueryRequest, strictly: boolean) => {
    // The service takes the time bounds as strings of Unix milliseconds.
    const body: CursorQueryRequest = {
      ...req,
      ...(req.start_time !== undefined ? { start_time: String(req.start_time) } : {}),
      ...(req.end_time !== undefined ? { end_time: String(req.end_time) } : {}),
    };
    return t.idempotent(
      Effect.map(
        Effect.flatMap(t.callTasks("cursorVideos", "POST", paths.tasks, body), (c) => (strictly ? strict(c) : Effect.succeed(c))),
        (c): CursorPage & { readonly anomalies: TaskAnomaly[] } => {
          const page = (c.page ?? {}) as Partial<CursorPage>;
          const result = (c.tasks as VideoTask[]).map(fillVideoTask);
          return {
            ...page,
            result,
            has_more: page.has_more === true,
            count: page.count ?? result.length,
            next_cursor: page.next_cursor ?? "",
            anomalies: c.anomalies,
          };
        },
      ),
    );
  };

  return {
    queryVideos: (q: VideoQuery) => Effect.map(batches(queryBatch(true), q.taskIds ?? [], q.externalTaskIds ?? []), (c) => c.tasks),
    queryVideosChecked: (q: VideoQuery) => batches(queryBatch(false), q.taskIds ?? [], q.externalTaskIds ?? []),
    cursorVideos: (req: CursorQueryRequest): Effect.Effect<CursorPage, ApiError> =>
      Effect.map(cursorVideosWith(req, true), ({ anomalies: _anomalies, ...page }) => page),
    cursorVideosChecked: (req: CursorQueryRequest) => cursorVideosWith(req, false),
  };
};
