// A run's last stage, after the engine: the supersessions the plan says (and those of
// tasks abandoned at another service, once their next attempt here was created), the
// failure groups, the reports and the summary. What the start worked out of the plan is
// reused when the run changed no record (a rerun with nothing to do plans once).

import { Clock, Effect } from "effect";
import type { JobCounts, JobOutlook, RunSummary } from "../engine/RunEvent.js";
import type { RunnerResult } from "../engine/Runner.js";
import { reviewText } from "../engine/Summary.js";
import type { RunnableManifest } from "../engine/RunnableManifest.js";
import { Downloader } from "../outputs/Downloader.js";
import { diffPlan, supersessions } from "../plan/diffPlan.js";
import { formatRunStepSummary } from "../report/runStepSummary.js";
import { groupFailures } from "../report/failureGroups.js";
import { shapeOf } from "../report/manifestLocations.js";
import { plannable, standings, type Standings } from "../report/standing.js";
import { writeReports } from "../report/writeReports.js";
import type { DecisionIndex } from "../review/reviewDecision.js";
import type { LockFile } from "../state/LockFile.js";
import { LockStore } from "../state/LockStore.js";
import type { StoreSink } from "../outputs/StoreSink.js";
import { writeReportsToStore } from "../report/storeReports.js";
import { isLoaded, type Prepared } from "./prepareRun.js";
import { abandonedSuccessors } from "./serviceCheck.js";

/** The run's counts per job with the tasks expected but not made yet (downstream of unfinished work) as queued. */
export const withExpected = (
  jobs: RunSummary["jobs"],
  totals: Readonly<Record<string, JobOutlook>> | undefined,
  notMade: Readonly<Record<string, number>> | undefined,
): RunSummary["jobs"] => {
  if (!totals) return jobs;
  const out: Record<string, JobCounts> = {};
  for (const [job, c] of Object.entries(jobs)) {
    const expected = (totals[job]?.total ?? 0) - (notMade?.[job] ?? 0);
    out[job] = expected > c.total ? { ...c, total: expected, queued: c.queued + expected - c.total } : c;
  }
  return out;
};

const notMadeSince = (after: Readonly<Record<string, number>>, before: Readonly<Record<string, number>>): Record<string, number> =>
  Object.fromEntries(Object.entries(after).map(([job, n]) => [job, Math.max(0, n - (before[job] ?? 0))]));

/** The step summary's line about outputs awaiting review, when any. */
const reviewNote = (jobs: RunSummary["jobs"]): { stepSummaryNote?: string } => {
  const text = reviewText(jobs);
  return text ? { stepSummaryNote: `Review needed: ${text} (omnibatch review, then run again)` } : {};
};

export interface FinishInput {
  readonly manifest: RunnableManifest;
  readonly prepared: Prepared;
  readonly result: RunnerResult;
  readonly reviews: DecisionIndex | undefined;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly emulated: boolean;
  readonly outputStore: StoreSink | undefined;
  readonly reports: boolean;
  readonly onEvent: ((event: import("../engine/RunEvent.js").RunEvent) => void) | undefined;
}

/**
 * Tasks replaced (`~`) by a task this or an earlier run created say so in the lockfile;
 * so do tasks abandoned at another service, once their next attempt here was created.
 * The records as the run left them are read one at a time from here (frozenSnapshot):
 * each pass below (plan diff, failure groups, reports) holds none of them, where a
 * snapshot decoded every held line at once (the highest RSS of a 200,000-task run).
 */
const recordSupersessions = (input: FinishInput) =>
  Effect.gen(function* () {
    const { manifest, prepared, reviews } = input;
    const store = yield* LockStore;
    const unchanged = (yield* store.changes) === prepared.changesAtStart;
    const before: LockFile = unchanged ? prepared.before : yield* store.frozenSnapshot;
    const plan = isLoaded(manifest) && !(unchanged && prepared.replacedAtStart) ? diffPlan(manifest, before, reviews ? { reviews } : {}) : undefined;
    const replacedHere = plan ? supersessions(plan, before) : isLoaded(manifest) && prepared.replacedAtStart ? prepared.replacedAtStart : [];
    const replaced = [...replacedHere, ...abandonedSuccessors(before.tasks)];
    const now = yield* Clock.currentTimeMillis;
    for (const [old, by] of replaced) yield* store.put(old, { ...before.tasks[old]!, superseded_by: by, updated_at: now });
    if (replaced.length) {
      yield* store.flush;
      return { after: yield* store.frozenSnapshot, standingsAtEnd: undefined };
    }
    // Nothing replaced: the snapshot just made is still the lockfile (no second copy of
    // every record), and the plan just made its plan: the reports' standings come from
    // it, as writeReports would work them out (standingsFor), without a second plan.
    const standingsAtEnd: Standings | undefined = plan && plannable(manifest) ? standings(before, plan) : undefined;
    return { after: before, standingsAtEnd };
  });

export const finishRun = (input: FinishInput) =>
  Effect.gen(function* () {
    const { manifest, prepared, result, reviews, env, emulated, outputStore } = input;
    const downloader = yield* Downloader;
    const { after, standingsAtEnd } = yield* recordSupersessions(input);
    const groupsAtStart = prepared.groupsAtStart;
    const failureGroups = isLoaded(manifest) ? (after === prepared.before && groupsAtStart ? groupsAtStart : groupFailures(after, shapeOf(manifest))) : undefined;
    const told = {
      ...result,
      // Downstream tasks that do not exist yet are still work to do: counted as queued.
      // (Only when the run stopped early: a finished run made every downstream task its upstream results allow.)
      jobs:
        result.outcome === "done" || result.outcome === "failed"
          ? result.jobs
          : withExpected(result.jobs, prepared.outlook.totals, failureGroups && notMadeSince(failureGroups.notMade, groupsAtStart?.notMade ?? {})),
      ...(manifest.budget ? { budget: manifest.budget } : {}),
      ...(failureGroups ? { failureGroups } : {}),
      ...(emulated ? { emulated: true as const } : {}),
    };
    let reports: string[] = [];
    let reportsWritten = false;
    if (input.reports) {
      // The CI step summary starts with the outcome; the billing tables follow.
      const stepHead = formatRunStepSummary({ ...told, name: manifest.name });
      // The lockfile is the one the run started with: so are the standings.
      const standingsNow = after === prepared.before && prepared.standingsAtStart ? prepared.standingsAtStart : standingsAtEnd;
      const written = yield* Effect.either(
        Effect.tryPromise(() =>
          outputStore
            ? writeReportsToStore({ lock: after, manifestName: manifest.name, env: { ...env }, emulated, manifest, stepHead, ...reviewNote(result.jobs), ...(reviews ? { reviews } : {}) }, outputStore)
            : writeReports({
                lock: after,
                outputsDir: manifest.outputsDir,
                manifestName: manifest.name,
                env: { ...env },
                emulated,
                manifest,
                stepHead,
                // What the run learnt about the files (its start check, its downloads) spares the reports a second stat of each.
                seen: downloader.seen,
                ...(result.refusedCharges ? { refusedCharges: result.refusedCharges } : {}),
                ...reviewNote(result.jobs),
                ...(reviews ? { reviews } : {}),
                ...(standingsNow ? { standings: standingsNow } : {}),
              }),
        ),
      );
      if (written._tag === "Right") {
        reports = written.right.files;
        reportsWritten = true;
      } else {
        input.onEvent?.({ type: "notice", level: "warn", message: `could not write the reports: ${String(written.left.error)}` });
      }
    }
    const summary = { ...told, reports } satisfies RunSummary;
    return { summary, after, failureGroups, reportsWritten };
  });
