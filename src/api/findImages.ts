// Image tasks found by external_task_id: B2 asked directly when there are few, else B3
// paged once for all of them, newest first. What a create whose answer proved nothing
// is looked up with before anything is sent again.

import { Effect } from "effect";
import { DecodeError } from "./ApiError.js";
import { classify } from "./classify.js";
import type { FindImageOptions } from "./clientTypes.js";
import type { ImageQueries } from "./imageQueries.js";
import type { ImageTask } from "../protocol/wire.js";

/** With this many ids or fewer, asking B2 per id is cheaper than paging B3. */
const directLookupLimit = 3;

export const findImages = (images: ImageQueries) => {
  // Whether B2 accepts an external_task_id is uncertain (service-behaviour.md); once it
  // has missed a task that B3 then found, it is not asked again.
  let directLookupWorks: boolean | undefined;

  /** B2 with an external id: the task if B2 answers one carrying that id, else undefined. */
  const tryDirect = (externalId: string) =>
    images.getImage(externalId).pipe(
      Effect.map((task) => (task.task_info.external_task_id === externalId ? task : undefined)),
      Effect.catchIf(
        (error) => classify(error) === "task-rejected",
        () => Effect.succeed(undefined),
      ),
    );

  const findImagesByExternalIds = (externalIds: readonly string[], opts: FindImageOptions = {}) =>
    Effect.gen(function* () {
      const wanted = new Set(externalIds);
      const found = new Map<string, ImageTask>();
      if (wanted.size === 0) return found;
      if (directLookupWorks !== false && wanted.size <= directLookupLimit) {
        for (const id of wanted) {
          const task = yield* tryDirect(id);
          if (task !== undefined) found.set(id, task);
        }
        if (found.size > 0) directLookupWorks = true;
        if (found.size === wanted.size) return found;
      }
      const missedDirectly = directLookupWorks !== false && wanted.size <= directLookupLimit;
      const pageSize = Math.min(500, Math.max(1, opts.pageSize ?? 100));
      const maxPages = Math.min(1000, Math.max(1, opts.maxPages ?? 50));
      for (let pageNum = 1; pageNum <= maxPages; pageNum++) {
        const checked = yield* images.listImagesChecked({ pageNum, pageSize });
        // An unreadable task that may be one we look for must not read as "not found"
        // (that would send its create again): the lookup fails instead. Others are skipped.
        const doubtful = checked.anomalies.filter((a) => a.externalId === undefined || wanted.has(a.externalId));
        if (doubtful.length > 0) {
          return yield* Effect.fail(
            new DecodeError({ operation: "listImages", httpStatus: 200, requestId: doubtful[0]!.requestId, problems: doubtful.map((d) => d.problems).join("; ") }),
          );
        }
        const page = checked.tasks;
        for (const task of page) {
          const id = task.task_info.external_task_id;
          if (id !== undefined && wanted.has(id) && !found.has(id)) {
            found.set(id, task);
            if (missedDirectly && directLookupWorks === undefined) directLookupWorks = false;
          }
        }
        if (found.size === wanted.size || page.length + checked.anomalies.length < pageSize) break;
        if (opts.createdAfterMs !== undefined && page.every((task) => task.created_at < opts.createdAfterMs!)) break;
      }
      return found;
    });

  return {
    findImagesByExternalIds,
    findImageByExternalId: (externalId: string, opts?: FindImageOptions) =>
      Effect.map(findImagesByExternalIds([externalId], opts), (found) => found.get(externalId)),
  };
};
