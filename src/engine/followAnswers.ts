// The state machine's half that takes in what the service says about tasks already
// sent: a poll answer, a callback, a start-up lookup, an adopted create. Each becomes
// `applyView` on one entry. Pure like transition.ts, whose effects list it appends to.

import { Duration } from "effect";
import type { CallbackObservation } from "../callbacks/CallbackListener.js";
import type { BillingEntry } from "../api/wire.js";
import type { TaskView } from "../protocol/TaskView.js";
import type { Asked } from "./EngineEvent.js";
import type { Entry, TaskTable } from "./TaskTable.js";
import { record, retryAllowed, type Out } from "./taskRules.js";

/** One task as the service shows it now: follow it, fetch its results, or record why it failed. */
export const applyView = (out: Out, entry: Entry, view: TaskView): void => {
  const { table, now } = out;
  const task = entry.task;
  entry.taskId = view.taskId;
  entry.createdAt = view.createdAt;
  const base = { task_id: view.taskId, created_at: view.createdAt };
  if (view.status === "submitted" || view.status === "processing") {
    if (entry.phase !== "inflight") {
      table.setPhase(entry, "inflight");
      table.hold(entry);
    }
    if (entry.recorded !== view.status || entry.recordedTaskId !== view.taskId) record(out, entry, { state: view.status, ...base });
    return;
  }
  if (entry.holding > 0) table.limiters[task.kind].onFinished();
  table.release(entry);
  entry.cued = false;
  table.watch?.noteFinished(task.kind, view.createdAt, view.updatedAt);
  table.currency ??= view.billing.find((b) => b.currency !== undefined)?.currency;
  if (view.status === "succeeded") {
    if (entry.recorded !== "succeeded") {
      record(out, entry, { state: "succeeded", ...base, finished_at: view.updatedAt, billing: view.billing as BillingEntry[] });
    }
    out.effects.push({ _tag: "Links", id: task.id, outputs: view.outputs, at: now });
    table.setPhase(entry, "fetching");
    out.effects.push({ _tag: "Download", entry, view });
    return;
  }
  // failed: keep the service's reason; maybe try again as a new attempt
  const code = /\b(1[0-9]{3}|5[0-9]{3})\b/.exec(view.message)?.[1];
  const error = { ...(code ? { code: Number(code) } : {}), message: view.message || "failed (no reason given)", at: now };
  record(out, entry, { state: "failed", ...base, finished_at: view.updatedAt, billing: view.billing as BillingEntry[], error });
  table.setPhase(entry, "failed");
  if (retryAllowed(table, task, entry.firstAttempt, error.code, error.message)) {
    const next = table.config.withAttempt(task, task.attempt + 1);
    table.entries.delete(task.id); // failed: in no phase index, and its place in line is passed over
    out.effects.push({ _tag: "Emit", event: { type: "notice", level: "info", message: `${task.id} failed (${error.message}); trying again as ${next.id}` } });
    out.effects.push({ _tag: "Retry", task: next, firstAttempt: entry.firstAttempt });
  }
};

/** The start-up lookup by external id: found tasks are adopted, absent ones may be sent. */
export const onLookedUp = (out: Out, ids: readonly string[], found: ReadonlyMap<string, TaskView>): void => {
  for (const id of ids) {
    const e = out.table.entries.get(id);
    if (!e) continue;
    const view = found.get(id);
    e.lookupFirst = false;
    if (view) {
      out.table.counters.adopted++;
      e.sentAt = out.now;
      applyView(out, e, view);
    } else if (e.recorded === "submitting") {
      record(out, e, { state: "planned" });
    }
  }
};

/** A poll answer. Missing means "not visible yet"; missing for very long means the service does not know the task. */
export const onPolled = (out: Out, asked: readonly Asked[], views: readonly TaskView[]): void => {
  const { table, now } = out;
  const policy = table.config.policy;
  const byTaskId = new Map<string, Entry>();
  const flying: Entry[] = [];
  for (const a of asked) {
    const e = table.entries.get(a.id);
    if (e === undefined || e.taskId !== a.taskId) continue;
    byTaskId.set(a.taskId, e);
    flying.push(e);
  }
  const seen = new Set<string>();
  for (const view of views) {
    const entry = byTaskId.get(view.taskId);
    seen.add(view.taskId);
    if (entry && entry.phase === "inflight") {
      entry.missingPolls = 0;
      applyView(out, entry, view);
    }
  }
  // Deleted, another account, a restarted emulator: leave it for a later run rather
  // than wait forever; never create it again.
  for (const entry of flying) {
    if (seen.has(entry.taskId!)) continue;
    entry.missingPolls++;
    if (entry.missingPolls >= policy.missingPolls && now - entry.sentAt > Duration.toMillis(policy.missingAfter)) {
      table.release(entry);
      table.setPhase(entry, "stuck");
      out.effects.push({
        _tag: "Emit",
        event: {
          type: "notice",
          level: "warn",
          message: `${entry.task.id}: task ${entry.taskId} is not visible at the service; left as it is for a later run (not created again)`,
        },
      });
    }
  }
};

/**
 * A callback is only a cue: the task it names (by its external id, with the task id we
 * know) is queried soon, and the service's answer decides (onPolled). Nothing in the
 * callback is recorded, downloaded or acted on, so a forged one costs at most a query.
 * A cue may come before the create's answer: kept until then. Foreign ones are dropped.
 */
export const onCallback = (out: Out, observation: CallbackObservation): void => {
  const { table } = out;
  const watch = table.watch;
  const entry = table.entries.get(observation.externalId);
  if (!entry || !watch || entry.task.kind !== observation.kind) return;
  if (entry.phase === "creating") return watch.stash(entry.task.id, observation);
  if (entry.phase !== "inflight" || entry.taskId !== observation.taskId) return;
  watch.noteHeard(observation.kind, observation.taskId);
  // "submitted"/"processing" change nothing worth a query: the rhythm's polls see them.
  if (observation.status === "succeeded" || observation.status === "failed") entry.cued = true;
};
