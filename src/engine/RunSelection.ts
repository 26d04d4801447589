// What the engine needs of a run of a chosen part (--only, --where, --failed, a saved
// plan): which tasks it takes, which jobs it expands into, and which ids it may create.
// Tasks it does not take are neither created nor followed; the lockfile keeps them as
// they are. Upstream tasks that are done enter as context, so their downstream work can
// be made. The rule itself is pure (src/plan/selection.ts); this is its shape here.

import type { PlanEntry } from "../plan/diffPlan.js";
import type { PlannedTask } from "../manifest/PlannedTask.js";

export interface RunSelection {
  /** Job and matrix values: does the selection take this task? */
  readonly selects: (task: Pick<PlannedTask, "job" | "vars">) => boolean;
  /** Jobs the run expands into: the selected ones and the jobs upstream of them. */
  readonly relevantJobs: ReadonlySet<string>;
  /** --failed: only tasks whose latest attempt failed, each given one new attempt now. */
  readonly failed: boolean;
  /**
   * Does the selection take this entry of the whole plan (made with --failed's renewals)?
   * The start's totals count only what the run will do (selection.ts keepsEntry).
   */
  readonly keeps: (entry: PlanEntry) => boolean;
  /** A saved plan: only these external ids may be created (undefined: any selected task). */
  readonly mayCreate?: (id: string) => boolean;
}
