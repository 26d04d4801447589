// What loading a manifest gives the engine and plan: settings, jobs in DAG order, the
// tasks of the jobs that need no upstream results, and the means to expand the
// downstream jobs once those results exist.

import type { Diagnostic } from "./Diagnostic.js";
import type { PlannedTask, SourcePos, UpstreamItem } from "./PlannedTask.js";

export interface JobInfo {
  readonly id: string;
  readonly kind: "video" | "image";
  /** For `for_each`: the upstream job, and whether one task per output or per task. */
  readonly upstream?: { readonly job: string; readonly mode: "outputs" | "tasks" };
  readonly retryFailed: number;
  /** `retry_content_risk`: content-risk failures are tried again too (retryRule.ts). Absent: false. */
  readonly retryContentRisk?: boolean;
  /** The job's own matrix axes (and `include` keys), for `--where` checks. */
  readonly axes?: readonly string[];
  /** `review`: outputs are used downstream only once approved (src/review/); rejected ones never. */
  readonly review?: true;
  /** `review: { retake_rejected: N }`: a task with a rejected output gets a new take, at most N per matrix combination (src/review/retake.ts). */
  readonly retakeRejected?: number;
  readonly source: SourcePos;
}

export interface LoadedManifest {
  /** Absolute path of the manifest. */
  readonly file: string;
  /** Absolute folder of the manifest. */
  readonly dir: string;
  readonly name: string;
  /** Absolute results folder. */
  readonly outputsDir: string;
  /** Absolute `<manifest without .yaml/.yml>.lock.json` beside the manifest. */
  readonly lockfilePath: string;
  readonly concurrency: number;
  readonly budget?: { readonly max: string; readonly currency: string };
  readonly prices?: {
    readonly currency: string;
    readonly video?: Readonly<Record<string, number>>;
    readonly image?: Readonly<Record<string, number>>;
  };
  /** Upstream jobs first. */
  readonly jobs: readonly JobInfo[];
  /** Every task of the jobs without for_each. */
  readonly tasks: readonly PlannedTask[];
  readonly warnings: readonly Diagnostic[];
  /**
   * The tasks of a for_each job for these upstream results. `outputs` mode: one task per
   * item (times the job's matrix and takes). `tasks` mode: items are grouped by
   * `item.task`, one task per upstream task. Identity uses each item's sha256, never its
   * URL, so fresh URLs give the same ids; `{{ item.url }}` is sent as the URL, while a
   * local image named by `{{ item.file }}` is sent as base64 (content-hashed like any
   * local file). Items with identical content give one task. Each task's `upstream` is
   * `{job, task, output: item.index}`, or `output: -1` in `tasks` mode (all outputs).
   * Folders follow the upstream task's folder (`<upstream folder>-<index+1>`).
   * Throws ManifestInvalid (with positions) when a task breaks a rule.
   */
  readonly expandDownstream: (job: string, items: readonly UpstreamItem[]) => PlannedTask[];
  /** The same task as attempt `attempt` (>= 1): new id, hash and external_task_id. */
  readonly withAttempt: (task: PlannedTask, attempt: number) => PlannedTask;
  /**
   * The same request as take `take` (attempt 1), for a new take after a rejection
   * (`retake_rejected`): its own id, and a folder beside the job's other takes
   * (`<folder>-take-N`, or `<folder>/take-N` when the job has several takes).
   */
  readonly withTake: (task: PlannedTask, take: number) => PlannedTask;
  /**
   * How many tasks a for_each job is expected to have. `upstreamOutputCounts` maps
   * upstream task ids to their known number of outputs; unknown ones count as the
   * number their request asks for (n, series_amount, 1 per video).
   */
  /** The estimated cost of one task of a for_each job (from an example upstream item), when prices allow. */
  readonly downstreamEstimate: (job: string) => { readonly currency: string; readonly amount: string } | undefined;
  /** Tasks a for_each job makes per upstream item (`outputs`) or task (`tasks`): its matrix times its takes. */
  readonly downstreamPerItem: (job: string) => number;
  readonly expectedDownstreamCount: (
    job: string,
    upstreamOutputCounts?: ReadonlyMap<string, number> | Readonly<Record<string, number>>,
  ) => number;
}
