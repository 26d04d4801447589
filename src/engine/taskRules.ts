// Small rules the state machine and the parts around it share: whether a failed attempt
// may be tried again, whether a request asks for a watermark, and how a transition
// appends its effects. Pure.

import type { PlannedTask } from "../manifest/PlannedTask.js";
import { mayRetry } from "../plan/retryRule.js";
import type { EngineEffect } from "./EngineEvent.js";
import type { Entry, TaskTable } from "./TaskTable.js";

/** The transition under way: the table, the event's time, the effects so far. */
export interface Out {
  readonly table: TaskTable;
  readonly now: number;
  readonly effects: EngineEffect[];
}

/** May a failed attempt of `task` be followed by another? The plan's rule (retryRule.ts). */
export const retryAllowed = (table: TaskTable, task: PlannedTask, firstAttempt: number, code: number | undefined, message: string): boolean =>
  mayRetry(
    { retryFailed: table.config.retryFailedOf(task.job) ?? task.retryFailed, retryContentRisk: task.retryContentRisk },
    task.attempt - firstAttempt,
    { code, message },
  );

// A downloaded attempt's next step is the attempt walk's (src/plan/attempts.ts).
export { nextAfterDownloaded } from "../plan/attempts.js";

export const watermarkOf = (task: PlannedTask | undefined): boolean =>
  task?.kind === "video" ? task.request.options?.watermark_info?.enabled === true : task?.request?.watermark_info?.enabled === true;

export const notice = (out: Out, level: "info" | "warn", message: string) => out.effects.push({ _tag: "Emit", event: { type: "notice", level, message } });

/** Records a patch for the entry's task, and remembers what the lockfile now says. */
export const record = (out: Out, entry: Entry, patch: Extract<EngineEffect, { _tag: "Record" }>["patch"], task: PlannedTask = entry.task) => {
  entry.recorded = patch.state;
  if (patch.task_id !== undefined) entry.recordedTaskId = patch.task_id;
  out.effects.push({ _tag: "Record", task, patch, at: out.now });
};

/**
 * The task may exist at the service (a create with no answer that settles it): it holds
 * its slots, stays busy (the run waits for it) and is looked up by external id with
 * each poll; only `settleUnknown` (createRules.ts) lets it be sent again.
 */
export const enterUnknown = (out: Out, entry: Entry, sentAt: number, exists: boolean): void => {
  const { table } = out;
  table.setPhase(entry, "inflight");
  table.hold(entry);
  entry.taskId = undefined;
  // The window runs from when the create could last have landed, not from its send: a
  // slow request may be carried out just before the client gives up (or the run is
  // killed), so the answer's time (the restart, for a record a killed run left) counts.
  entry.unknownSince = Math.max(entry.unknownSince ?? sentAt, sentAt, out.now);
  entry.existsAtService = entry.existsAtService === true || exists;
  entry.lookupFirst = true;
  entry.sentAt = out.now;
  entry.missingPolls = 0;
};
