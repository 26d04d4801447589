// The failures a run's summary carries (RunSummary.failureGroups) and the reports show:
// the lockfile's failed and rejected tasks grouped by reason. The shape only; the grouping
// is report/failureGroups.ts. Here, at the engine's layer, so the run's summary names it
// without reaching up to the reports (src/README.md).

export interface FailureGroup {
  readonly reason: string;
  readonly code?: number;
  readonly tasks: readonly {
    readonly id: string;
    readonly job: string;
    readonly what: string;
    readonly state: "failed" | "rejected";
    /** The next run tries again: a retry left (`retry_failed`), or a rejected create (nothing was made). */
    readonly again: boolean;
  }[];
}

export interface Failures {
  readonly groups: readonly FailureGroup[];
  /** Per downstream job, tasks that will not be made because their upstream task failed. */
  readonly notMade: Readonly<Record<string, number>>;
}
