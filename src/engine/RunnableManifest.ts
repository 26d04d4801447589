// What the engine needs of a loaded manifest (src/manifest's LoadedManifest has all of
// it): the planned tasks, the jobs' graph, and the two ways to make more tasks
// (downstream items, retry attempts). Data flows one way: the engine reads this only.

import type { PlannedTask, UpstreamItem } from "../manifest/PlannedTask.js";

export interface RunnableJob {
  readonly id: string;
  readonly kind: "video" | "image";
  readonly upstream?: { readonly job: string; readonly mode: "outputs" | "tasks" };
  readonly retryFailed: number;
  /** Outputs reach downstream jobs only once approved (the run's `reviews`). */
  readonly review?: true;
}

export interface RunnableManifest {
  readonly file: string;
  readonly name: string;
  readonly outputsDir: string;
  readonly lockfilePath: string;
  readonly concurrency: number;
  readonly budget?: { readonly max: string; readonly currency: string };
  /** Only the currency is used here: the account's, for image charges that do not name it. */
  readonly prices?: { readonly currency: string };
  /** Jobs in topological order. */
  readonly jobs: readonly RunnableJob[];
  /** Tasks of the jobs without for_each. */
  readonly tasks: readonly PlannedTask[];
  expandDownstream(job: string, items: readonly UpstreamItem[]): PlannedTask[];
  withAttempt(task: PlannedTask, attempt: number): PlannedTask;
  /** Tasks a for_each job makes per upstream item (or task); for what waits on review. Default 1. */
  downstreamPerItem?(job: string): number;
}
