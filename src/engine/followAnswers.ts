// The state machine's half that takes in what the service says about tasks already
// sent: a poll answer, a callback, a start-up lookup, an adopted create. Each becomes
// `applyView` on one entry. Pure like transition.ts, whose effects list it appends to.

import { Duration } from "effect";
import type { CallbackObservation } from "../callbacks/CallbackListener.js";
import type { BillingEntry } from "../protocol/wire.js";
import { fromImage, fromVideo, type TaskView } from "../protocol/TaskView.js";
import { echoesAnotherTask, settleUnknown } from "./createRules.js";
import { cuedTask, lendPauseMs, mayLend, mayLendLater, type Lender } from "./cueRules.js";
import { durationKey } from "./DurationEvidence.js";
import { afterSucceeded, expectedResults, listedResults } from "./resultCount.js";
import type { Asked, LookedUpUnknown, OddTask } from "./EngineEvent.js";
import type { Entry, TaskTable } from "./TaskTable.js";
import { enterUnknown, notice, record, retryAllowed, watermarkOf, type Out } from "./taskRules.js";

/** One task as the service shows it now: follow it, fetch its results, or record why it failed. */
export const applyView = (out: Out, entry: Entry, view: TaskView): void => {
  const { table, now } = out;
  const task = entry.task;
  if (echoesAnotherTask(task.id, view.externalId)) {
    // The answer is about another task (its external id): never its id, state, results or
    // charge for ours. Ours was created (or may have been): its outcome is unknown, looked
    // up by its own external id with each poll, never created again (exists).
    notice(
      out,
      "warn",
      `${task.id}: the service's answer for task ${view.taskId} names another task (external id ${view.externalId}); not taken as this task's: looking it up by its own external id`,
    );
    // A slot it lent comes back to it: it is held again while its outcome is unknown.
    entry.lent = false;
    entry.cued = false;
    enterUnknown(out, entry, entry.unknownSince ?? entry.sentAt, true);
    return;
  }
  entry.taskId = view.taskId;
  entry.createdAt = view.createdAt;
  const base = { task_id: view.taskId, created_at: view.createdAt };
  if (view.status === "submitted" || view.status === "processing") {
    if (entry.phase !== "inflight") {
      table.setPhase(entry, "inflight");
      table.hold(entry);
    }
    if (entry.lent) {
      // The cue that lent its slot was wrong (forged, or about another state): it takes
      // its slot back (the count may pass the limit until a task ends) and lending pauses.
      entry.lent = false;
      table.hold(entry);
      strikeLending(out);
    }
    if (entry.recorded !== view.status || entry.recordedTaskId !== view.taskId) record(out, entry, { state: view.status, ...base });
    return;
  }
  if (entry.holding > 0 || entry.lent) {
    table.limiters[task.kind].onFinished();
    // Its first end seen (a refetch after a failed download is not a second sample).
    table.evidence.note(durationKey(task), view.updatedAt - view.createdAt);
  }
  table.release(entry);
  entry.cued = false;
  entry.lent = false;
  table.watch?.noteFinished(task.kind, view.createdAt, view.updatedAt);
  table.currency ??= view.billing.find((b) => b.currency !== undefined)?.currency;
  if (view.status === "succeeded") {
    if (entry.recorded !== "succeeded") {
      record(out, entry, { state: "succeeded", ...base, finished_at: view.updatedAt, billing: view.billing as BillingEntry[] });
    }
    // Too few results listed is not final (shown a moment later, or deleted): ask again,
    // bounded; then fetch what is listed and record the rest lost (resultCount.ts).
    const policy = table.config.policy;
    const step = afterSucceeded(
      expectedResults(task),
      listedResults(task.kind, view.outputs),
      { count: entry.shortAnswers, since: entry.shortSince },
      now,
      // Never before this run sent it: a service's odd time cannot make it look 30 days old.
      entry.createdHere ? Math.max(view.updatedAt, entry.sentAt) : view.updatedAt,
      { answers: policy.shortAnswers, waitMs: Duration.toMillis(policy.shortAnswerWait) },
    );
    if (step._tag === "AskAgain") {
      if (entry.shortAnswers === 0) notice(out, "warn", `${task.id}: ${describeShort(task, view)}; asking again`);
      entry.shortAnswers++;
      entry.shortSince ??= now;
      if (entry.phase !== "inflight") table.setPhase(entry, "inflight");
      return;
    }
    entry.shortAnswers = 0;
    entry.shortSince = undefined;
    entry.shortWhy = step._tag === "GiveUp" ? step.why : undefined;
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
    out.effects.push({ _tag: "Retry", task: next, firstAttempt: entry.firstAttempt, parentCreatedHere: entry.createdHere === true });
  }
};

const describeShort = (task: Entry["task"], view: TaskView): string =>
  `the service answered "succeeded" listing ${listedResults(task.kind, view.outputs)} of the task's ${expectedResults(task)} result(s)`;

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
export const onPolled = (
  out: Out,
  asked: readonly Asked[],
  views: readonly TaskView[],
  lookedUp?: LookedUpUnknown,
  odd: readonly OddTask[] = [],
): void => {
  const { table, now } = out;
  if (lookedUp) onUnknownLookedUp(out, lookedUp);
  const policy = table.config.policy;
  // Several entries may hold one task id (a create answer that named another task): each
  // is given the answer, and the external id it echoes tells whose it is (applyView).
  const byTaskId = new Map<string, Entry | Entry[]>();
  const flying: Entry[] = [];
  for (const a of asked) {
    const e = table.entries.get(a.id);
    if (e === undefined || e.taskId !== a.taskId) continue;
    const had = byTaskId.get(a.taskId);
    byTaskId.set(a.taskId, had === undefined ? e : Array.isArray(had) ? [...had, e] : [had, e]);
    flying.push(e);
  }
  const seen = new Set<string>();
  const unasked: string[] = [];
  for (const view of views) {
    const entries = byTaskId.get(view.taskId);
    seen.add(view.taskId);
    if (entries === undefined) unasked.push(view.taskId);
    else {
      for (const entry of Array.isArray(entries) ? entries : [entries]) {
        if (entry.phase !== "inflight" || entry.taskId !== view.taskId) continue;
        entry.missingPolls = 0;
        applyView(out, entry, view);
      }
    }
  }
  if (unasked.length > 0) {
    notice(out, "warn", `the service answered about ${unasked.length} task(s) not asked for (${unasked.slice(0, 3).join(", ")}${unasked.length > 3 ? ", ..." : ""}); ignored`);
  }
  // Unreadable tasks of the answer: reported with what was wrong, asked again next poll
  // (not "missing": the service did show them).
  for (const o of odd) {
    const held = o.taskId !== undefined ? byTaskId.get(o.taskId) : undefined;
    const entry = (Array.isArray(held) ? held[0] : held) ?? (o.externalId !== undefined ? flying.find((e) => e.task.id === o.externalId) : undefined);
    if (entry?.taskId !== undefined) seen.add(entry.taskId);
    if (o.charge !== undefined && entry !== undefined) {
      refuseCharge(out, entry, o.charge, o.requestId);
      continue;
    }
    notice(out, "warn", `${entry ? entry.task.id : (o.taskId ?? o.externalId ?? "a task")}: the service's answer could not be read (${o.problems}); asking again later`);
  }
  // Deleted, another account, a restarted emulator: leave it for a later run rather
  // than wait forever; never create it again.
  for (const entry of flying) {
    // No task id any more: its answer named another task, it is looked up by external id now.
    if (entry.taskId === undefined || seen.has(entry.taskId)) continue;
    entry.missingPolls++;
    if (entry.missingPolls >= policy.missingPolls && now - entry.sentAt > Duration.toMillis(policy.missingAfter) && !entry.missingLookedUp) {
      // Its task id may not be its own (a create answer naming a task that does not
      // exist): before leaving it, look it up by its external id, as an "outcome unknown"
      // task that exists (never created again); found, it is adopted with its own id.
      entry.missingLookedUp = true;
      entry.lent = false;
      entry.cued = false;
      notice(out, "warn", `${entry.task.id}: task ${entry.taskId} is not visible at the service; looking it up by its external id (not created again)`);
      enterUnknown(out, entry, now, true);
      continue;
    }
    if (entry.missingPolls >= policy.missingPolls && now - entry.sentAt > Duration.toMillis(policy.missingAfter)) {
      table.release(entry);
      // A slot it lent is not its own any more: a create refused on it gives it back to
      // the pool, not to a task left for a later run (which would hold it for the run).
      entry.lent = false;
      entry.cued = false;
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
 * A charge that cannot be true (negative, no number, absurdly large): never recorded nor
 * summed (the task's record stays as it was, in flight, and the task is followed no more
 * in this run), and nothing more is submitted: an answer that lies about money once cannot
 * be trusted with the budget. The other tasks are still followed and their paid results
 * downloaded; the run then ends with outcome `charge` (exit 5), naming the task and the answer.
 */
const refuseCharge = (out: Out, entry: Entry, charge: string, requestId: string | undefined): void => {
  const { table } = out;
  if (table.refusedCharges.some((r) => r.id === entry.task.id)) return;
  table.refusedCharges.push({ id: entry.task.id, job: entry.task.job, ...(entry.taskId !== undefined ? { taskId: entry.taskId } : {}), charge, ...(requestId ? { requestId } : {}) });
  const message = `${entry.task.id}: the service's charge cannot be true (${charge}${requestId ? `; request_id ${requestId}` : ""}); refused: counted nowhere, nothing more is submitted`;
  notice(out, "warn", message);
  table.refusal ??= message;
  // Submission stops as at the budget; what is in flight is followed and downloaded.
  table.budgetStopped = true;
  entry.lent = false;
  entry.cued = false;
  table.setPhase(entry, "stuck");
};

/** The "outcome unknown" tasks a poll looked up by external id: adopt, keep looking, or send again. */
const onUnknownLookedUp = (out: Out, lookedUp: LookedUpUnknown): void => {
  const { table } = out;
  for (const id of lookedUp.ids) {
    const entry = table.entries.get(id);
    if (!entry || entry.phase !== "inflight" || entry.taskId !== undefined || entry.unknownSince === undefined) continue;
    const view = lookedUp.found.get(id);
    const next = settleUnknown(
      { unknownSince: entry.unknownSince, exists: entry.existsAtService === true },
      view !== undefined,
      lookedUp.startedAt,
      table.config.policy,
    );
    switch (next._tag) {
      case "Adopt":
        table.counters.adopted++;
        entry.unknownSince = undefined;
        entry.existsAtService = undefined;
        entry.lookupFirst = false;
        entry.missingPolls = 0;
        notice(out, "info", `${id}: found at the service (${view!.taskId}), not created again`);
        applyView(out, entry, view!);
        break;
      case "KeepLooking":
        break;
      case "SendAgain":
        // A definite "not there", after the visibility window: the create never landed.
        table.release(entry);
        table.setPhase(entry, "waiting");
        entry.unknownSince = undefined;
        entry.lookupFirst = false;
        entry.notBefore = out.now;
        record(out, entry, { state: "planned" });
        notice(out, "info", `${id}: not at the service well after its create; sending it again`);
        break;
      case "LeaveForLater":
        table.release(entry);
        table.setPhase(entry, "stuck");
        notice(out, "warn", `${id}: the service never showed this task (it said the id is in use, or answered its create); left for a later run (not created again)`);
        break;
    }
  }
};

/**
 * A callback is only a cue: the task it names (by its external id, with the task id we
 * know; without an external id, by a task id of ours in flight: cueRules.ts `cuedTask`)
 * is queried soon, and the service's answer decides (onPolled). Nothing in the callback
 * is recorded, downloaded or acted on, so a forged one costs at most a query. A cue may
 * come before the create's answer: kept until then. Foreign ones are dropped.
 */
export const onCallback = (out: Out, observation: CallbackObservation): void => {
  const { table } = out;
  const watch = table.watch;
  if (!watch) return;
  const entry = cuedTask(observation, (id) => table.entries.get(id), table.inflightOf[observation.kind], (e) => ({ kind: e.task.kind, taskId: e.taskId }));
  if (!entry) return;
  if (entry.phase === "creating") return watch.stash(entry.task.id, observation);
  if (entry.phase !== "inflight" || entry.taskId !== observation.taskId) return;
  watch.noteHeard(observation.kind, observation.taskId);
  // "submitted"/"processing" change nothing worth a query: the rhythm's polls see them.
  if (observation.status === "succeeded" || observation.status === "failed") {
    if (!entry.cued) entry.cuedAt = out.now;
    entry.cued = true;
    // Videos: the cue may lend the slot to the next waiting create (cueRules.ts).
    if (entry.task.kind === "video" && table.config.policy.lendOnCue && mayLendLater(lenderOf(entry))) table.lenders.add(entry);
  }
};

const lenderOf = (e: Entry): Lender => ({
  inflight: e.phase === "inflight" && e.taskId !== undefined,
  cued: e.cued === true,
  lent: e.lent === true,
  lentOnce: e.lentOnce === true,
  holding: e.holding,
});

/** A cued task that may lend its slot to `borrower` now (stale candidates are dropped), if any. */
export const findLender = (table: TaskTable, borrower: Entry, now: number): Entry | undefined => {
  if (borrower.task.kind !== "video" || table.lenders.size === 0) return undefined;
  for (const e of table.lenders) {
    const l = lenderOf(e);
    if (!mayLendLater(l)) table.lenders.delete(e);
    else if (mayLend(l, borrower.task.slots, table.lendPausedUntil, now)) return e;
  }
  return undefined;
};

/** `lender` lends its slot to `borrower`'s create: it holds none until a query answers. */
export const lend = (table: TaskTable, lender: Entry, borrower: Entry, now: number): void => {
  table.release(lender);
  lender.lent = true;
  lender.lentOnce = true;
  lender.lentAt = now;
  table.lenders.delete(lender);
  borrower.borrowedFrom = lender.task.id;
  table.counters.lent++;
};

/**
 * The create that took a lent slot was answered. Created (or found, or its outcome
 * unknown): the loan stands. Anything else gives the slot back to the lender, which stays
 * cued (queried soon, as any cue). `refused`: a 1303, the cue proved wrong: lending pauses.
 * Returns whether the loan was given back.
 */
export const settleLoan = (out: Out, borrower: Entry, outcome: "kept" | "returned" | "refused"): boolean => {
  const id = borrower.borrowedFrom;
  if (id === undefined) return false;
  borrower.borrowedFrom = undefined;
  if (outcome === "kept") return false;
  const lender = out.table.entries.get(id);
  if (!lender?.lent) return false; // answered meanwhile (or left stuck): the slot was free after all
  if (lender.phase !== "inflight") {
    lender.lent = false;
    return false;
  }
  lender.lent = false;
  out.table.hold(lender);
  if (outcome === "refused") {
    out.table.counters.lentRefused++;
    strikeLending(out);
  }
  return true;
};

/** A cue proved wrong: lending pauses, twice as long each time. */
const strikeLending = (out: Out): void => {
  const { table } = out;
  table.lendStrikes++;
  table.lendPausedUntil = Math.max(table.lendPausedUntil, out.now + lendPauseMs(table.lendStrikes, Duration.toMillis(table.config.policy.noSlotWait)));
};
