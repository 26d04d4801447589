// The summary: what the run did, from the task table and the recorded tasks, once the
// loop has stopped. The outcome names why it ended; its exit code comes from the one
// table in exit/ExitCode.ts.

import { exitCodeByOutcome } from "../exit/ExitCode.js";
import type { LockTask } from "../state/LockFile.js";
import type { LostResult } from "../outputs/scanResults.js";
import type { Recorder } from "./Recorder.js";
import type { JobCounts, RunOutcome, RunSummary } from "./RunEvent.js";
import type { RunnableManifest } from "./RunnableManifest.js";
import type { TaskTable } from "./TaskTable.js";
import type { ReviewHold } from "./Planning.js";

/** Lockfile states of a task that may be (or is) paid for and whose result is not on disk. */
const UNFINISHED = new Set(["submitting", "submitted", "processing", "succeeded"]);

/**
 * Tasks the lockfile records as created (or maybe created) that this run never took up,
 * because the manifest no longer lists them (an edited manifest): their results are not
 * fetched, so the run names them rather than dropping them silently.
 */
export const leftBehind = (
  table: TaskTable,
  recorder: Recorder,
  chosen: (rec: LockTask) => boolean = () => true,
): ReadonlyArray<{ readonly id: string; readonly state: string }> =>
  [...recorder.records]
    .filter(([id, rec]) => UNFINISHED.has(rec.state) && !table.has(id) && chosen(rec))
    .map(([id, rec]) => ({ id, state: rec.state }));

/** What the run did, before reports are written (RunSummary minus reports). */
export type RunnerResult = Omit<RunSummary, "reports">;

export const summarize = (
  table: TaskTable,
  recorder: Recorder,
  manifest: RunnableManifest,
  elapsedMs: number,
  hold?: ReviewHold,
  lost: readonly LostResult[] = [],
  held: number = 0,
  unexpanded: readonly string[] = [],
): RunnerResult => {
  const counts: Record<string, { total: number; done: number; inFlight: number; queued: number; failed: number; rejected: number }> = {};
  const zero = () => ({ total: 0, done: 0, inFlight: 0, queued: 0, failed: 0, rejected: 0 });
  for (const j of manifest.jobs) counts[j.id] = zero();
  const failures: RunSummary["failures"][number][] = [];
  let pending = 0;
  for (const [job, n] of table.doneAtStartByJob) {
    const c = (counts[job] ??= zero());
    c.total += n;
    c.done += n;
  }
  for (const e of table.entries.values()) {
    const c = (counts[e.task.job] ??= zero());
    c.total++;
    switch (e.phase) {
      case "done":
        c.done++;
        break;
      case "failed":
      case "rejected": {
        // Only here: a done task's record may be held as its line (decoded on each get).
        const rec = recorder.get(e.task.id);
        if (e.phase === "failed") c.failed++;
        else c.rejected++;
        failures.push({
          id: e.task.id,
          job: e.task.job,
          state: e.phase,
          ...(rec?.error?.code !== undefined ? { code: rec.error.code } : {}),
          message: rec?.error?.message ?? "",
          vars: e.task.vars,
        });
        break;
      }
      case "waiting":
        c.queued++;
        pending++;
        break;
      default:
        c.inFlight++;
        pending++;
    }
  }

  // Outputs awaiting a person, and what downstream jobs wait on because of them.
  const awaitingByJob = hold?.awaitingByJob() ?? new Map<string, number>();
  const heldByJob = hold?.heldByJob() ?? new Map<string, number>();
  let awaiting = 0;
  for (const n of awaitingByJob.values()) awaiting += n;

  let outcome: RunOutcome;
  let reason: string | undefined;
  const stop = table.stop;
  if (table.refusedCharges.length > 0) {
    outcome = "charge";
    reason = `a charge that cannot be true was refused: ${table.refusal}`;
  } else if (stop === "refused") {
    outcome = "refused";
    // A line naming the address, what it refused and what to check (api/refusal.ts).
    reason = table.refusal;
  } else if (table.budgetStopped && pending > 0) {
    outcome = "budget";
    reason = `budget ${manifest.budget?.max} ${manifest.budget?.currency} reached`;
  } else if (pending > 0) {
    outcome = "pending";
    reason = stop === "time" ? "time limit reached" : stop === "signal" ? "interrupted" : "some results could not be downloaded yet";
  } else if (awaiting > 0) {
    outcome = "review";
    reason = `${awaiting} output${awaiting === 1 ? "" : "s"} await${awaiting === 1 ? "s" : ""} review`;
  } else if (failures.length > 0) {
    outcome = "failed";
  } else {
    outcome = "done";
  }
  // Lost results outrank "done" and "awaiting review": a result nobody can fetch again is the louder news.
  if ((outcome === "done" || outcome === "review") && (lost.length > 0 || held > 0)) {
    outcome = "lost";
    reason = `${lost.length} result(s) lost: deleted at the service and not in the outputs folder${held > 0 ? `; ${held} downstream task(s) wait on them` : ""}`;
  }
  // Downstream tasks that could not be made (an upstream result not a valid input) were never created: not "all done".
  if (outcome === "done" && unexpanded.length > 0) {
    outcome = "failed";
    reason = `downstream tasks could not be made (${unexpanded.length}: ${unexpanded.slice(0, 3).join(", ")}${unexpanded.length > 3 ? ", ..." : ""}; see the warnings above)`;
  }
  const jobs: Record<string, JobCounts> = {};
  for (const [id, c] of Object.entries(counts)) {
    const a = awaitingByJob.get(id);
    const h = heldByJob.get(id);
    jobs[id] = { ...c, ...(a ? { awaitingReview: a } : {}), ...(h ? { waitingOnReview: h } : {}) };
  }
  return {
    exitCode: exitCodeByOutcome[outcome],
    outcome,
    ...(reason ? { reason } : {}),
    manifest: manifest.file,
    lockfile: manifest.lockfilePath,
    outputs: manifest.outputsDir,
    jobs,
    spend: recorder.spend(table.currency),
    spendThisRun: recorder.spendThisRun(table.currency),
    created: table.counters.created,
    adopted: table.counters.adopted,
    downloaded: table.counters.downloaded,
    failures,
    elapsedMs,
    noSlotAnswers: table.counters.noSlotAnswers,
    lost,
    held,
    ...(table.refusedCharges.length > 0 ? { refusedCharges: [...table.refusedCharges] } : {}),
  };
};

/** `stills: 12 awaiting review; reels: 12 waiting on review`, or nothing without a review gate holding anything. */
export const reviewText = (jobs: RunSummary["jobs"]): string =>
  Object.entries(jobs)
    .flatMap(([job, c]) => [
      ...(c.awaitingReview ? [`${job}: ${c.awaitingReview} awaiting review`] : []),
      ...(c.waitingOnReview ? [`${job}: ${c.waitingOnReview} waiting on review`] : []),
    ])
    .join("; ");

