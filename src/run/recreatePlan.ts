// What `run --recreate-lost` would make again, from the lockfile and the outputs (a folder or a store's listing):
// each task with lost results (resultState.ts), named by job and matrix values, with the
// manifest's estimate where it prices the task. Read-only; the engine decides per task
// again when it admits it (Planning.ts), so this is the preview the user confirms.

import type { LoadedManifest } from "../manifest/LoadedManifest.js";
import { amountOf, formatAmount, plus, type Amount } from "../money/Money.js";
import { resultName, scanResults, type ResultsAt } from "../outputs/scanResults.js";
import type { LockFile } from "../state/LockFile.js";

/** What `run --recreate-lost` will make again: each task with lost results, and its estimate where the manifest prices it. */
export interface RecreatePlan {
  readonly tasks: readonly { readonly id: string; readonly name: string; readonly results: number; readonly estimate?: { readonly currency: string; readonly amount: string } }[];
  /** Per currency, over the tasks with an estimate. */
  readonly estimate: Readonly<Record<string, string>>;
  readonly unpriced: number;
  /** Lost downstream tasks whose upstream is made again too: they follow from the new results. */
  readonly downstream: number;
}

export const recreatePlan = (
  manifest: Pick<LoadedManifest, "tasks" | "outputsDir" | "downstreamEstimate">,
  lock: LockFile | undefined,
  now = Date.now(),
  /** Where the results are: default the outputs folder; for a store, its listing (outputs/resultsAt.ts). */
  at: ResultsAt = manifest.outputsDir,
): RecreatePlan => {
  if (!lock) return { tasks: [], estimate: {}, unpriced: 0, downstream: 0 };
  const planned = new Map(manifest.tasks.map((t) => [t.id, t] as const));
  const byTask = new Map<string, { name: string; results: number; job: string }>();
  for (const r of scanResults(lock.tasks, at, now)) {
    if (r.verdict.state !== "lost") continue;
    const seen = byTask.get(r.id);
    if (seen) seen.results++;
    else byTask.set(r.id, { name: resultName({ job: r.job, vars: r.vars, index: r.index }), results: 1, job: r.job });
  }
  // A lost task whose upstream is made again is not made itself: new tasks follow from the new results.
  let downstream = 0;
  for (const [id] of [...byTask]) {
    const up = lock.tasks[id]!.upstream?.task;
    if (up !== undefined && byTask.has(up)) {
      byTask.delete(id);
      downstream++;
    }
  }
  const sums = new Map<string, Amount>();
  let unpriced = 0;
  const tasks = [...byTask].map(([id, t]) => {
    const estimate = planned.get(id)?.estimate ?? manifest.downstreamEstimate(t.job);
    if (estimate) sums.set(estimate.currency, plus(sums.get(estimate.currency) ?? amountOf("0"), amountOf(estimate.amount)));
    else unpriced++;
    return { id, name: t.name.replace(/ \(output \d+\)$/, ""), results: t.results, ...(estimate ? { estimate } : {}) };
  });
  return { tasks, estimate: Object.fromEntries([...sums].map(([c, a]) => [c, formatAmount(a)])), unpriced, downstream };
};
