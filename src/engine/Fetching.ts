// Fetching: the download queue. Downloads of finished tasks start `policy.tasksDownloading`
// at a time, in the order the tasks finished; each reports a FetchOutcome. A waiting
// worker fiber per finished task (thousands when many tasks end at once) cost memory and
// scheduling, so the rest wait here as plain data.

import { Effect } from "effect";
import type { DownloaderService } from "../outputs/Downloader.js";
import type { Policy, ProductKind } from "../policy/Policy.js";
import type { TaskView } from "../protocol/TaskView.js";
import type { FetchOutcome } from "./EngineEvent.js";
import type { Recorder } from "./Recorder.js";
import { viewOne, type KindAdapter } from "./ServiceKinds.js";
import type { Entry, TaskTable } from "./TaskTable.js";
import { watermarkOf } from "./taskRules.js";

export interface FetchingDeps {
  readonly downloader: DownloaderService;
  readonly adapters: Record<ProductKind, KindAdapter>;
  readonly recorder: Recorder;
  readonly policy: Policy;
  readonly table: TaskTable;
  /** Runs a worker in the background; its outcome goes to the state machine. */
  readonly fork: (worker: Effect.Effect<FetchOutcome>) => Effect.Effect<void>;
}

export const makeFetching = (deps: FetchingDeps) => {
  const { downloader, adapters, recorder, table } = deps;
  const width = Math.max(1, deps.policy.tasksDownloading);
  let running = 0;
  const queue: ({ readonly entry: Entry; readonly view: TaskView } | undefined)[] = [];
  let head = 0;

  const worker = (entry: Entry, view: TaskView): Effect.Effect<FetchOutcome> => {
    // Only a succeeded task's list says which results the service still has; any other
    // answer (not shown, not succeeded) proves nothing about deletion.
    const refresh = Effect.map(viewOne(adapters[entry.task.kind], view.taskId, watermarkOf(entry.task)), (v) =>
      v?.status === "succeeded" ? v.outputs : undefined,
    );
    const record = recorder.get(entry.task.id);
    const previous = record?.outputs ?? [];
    // When it ended, by the service; never before this run (or an earlier one) sent it:
    // a service's odd time cannot make a result just made look past its 30 days.
    const endedAt = Math.max(view.updatedAt, record?.submitted_at ?? Number.NEGATIVE_INFINITY);
    return downloader.fetchAll({ dir: entry.task.dir, ...(entry.task.name !== undefined ? { name: entry.task.name } : {}), outputs: view.outputs, previous, refresh, endedAt }).pipe(
      Effect.map((r): FetchOutcome => ({ _tag: "Fetched", id: entry.task.id, outputs: r.outputs, urls: r.urls })),
      Effect.catchAll((e) => Effect.succeed<FetchOutcome>({ _tag: "FetchFailed", id: entry.task.id, message: e.message })),
    );
  };

  const start = Effect.suspend(() => {
    const starts: Effect.Effect<void>[] = [];
    while (running < width && head < queue.length) {
      const next = queue[head]!;
      queue[head++] = undefined;
      // Left the fetching phase meanwhile (or replaced by a retry): nothing to download.
      if (next.entry.phase !== "fetching" || table.entries.get(next.entry.task.id) !== next.entry) continue;
      running++;
      starts.push(deps.fork(worker(next.entry, next.view)));
    }
    if (head > 1024 && head * 2 > queue.length) {
      queue.splice(0, head);
      head = 0;
    }
    return Effect.all(starts, { discard: true });
  });

  return {
    /** Queues the download of a task's results (a Download effect). */
    enqueue: (entry: Entry, view: TaskView) =>
      Effect.suspend(() => {
        queue.push({ entry, view });
        return start;
      }),
    /** One download ended: the next queued one may start. */
    finished: Effect.suspend(() => {
      running--;
      return start;
    }),
  };
};
