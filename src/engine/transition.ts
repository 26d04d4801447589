// The task state machine: one function from the table and an event (a create's answer,
// a poll, a callback, a download, a tick of the loop, a stop) to the table's next state
// and the effects to perform (send a create, poll, download, record, emit). No I/O and
// no clock: time comes in with the event. The table is updated in place and returned
// (copying 20,000 entries per event would make a run quadratic); the same table and
// events always give the same effects. Answers from the service: followAnswers.ts;
// the loop's tick: tick.ts; shared small rules: taskRules.ts.

import { Duration } from "effect";
import type { EngineEffect, EngineEvent, KnownRecord, Transition } from "./EngineEvent.js";
import { applyView, onCallback, onLookedUp, onPolled, settleLoan } from "./followAnswers.js";
import { lookupBeforeCreate } from "./createRules.js";
import { expectedResults, withMissingResults } from "./resultCount.js";
import { enterUnknown, notice, record, type Out } from "./taskRules.js";
import { tick } from "./tick.js";
import type { Entry, TaskTable } from "./TaskTable.js";

export const transition = (table: TaskTable, event: EngineEvent): Transition<TaskTable> => {
  const effects: EngineEffect[] = [];
  const out: Out = { table, now: event.now, effects };
  step(out, event);
  return { state: table, effects };
};

const step = (out: Out, event: EngineEvent): void => {
  const { table } = out;
  switch (event._tag) {
    case "Tick":
      return tick(out, event.charged, (stop) => step(out, stop));
    case "Stop":
      if (!table.stop) {
        table.stop = event.reason;
        notice(
          out,
          "warn",
          event.reason === "time"
            ? "time limit reached: stopping, tasks in flight continue at the service"
            : event.reason === "lock"
              ? "the run lock was lost (another run took it over): stopping at once, tasks in flight continue at the service"
              : "interrupted: stopping",
        );
      } else if (table.stop === "refused") {
        // Stopped while the creates in flight of a refused run report (tick.ts): no more waiting.
        table.refusedAt = undefined;
      }
      return;
    case "Admit":
      return admit(out, event);
    case "AdmitRetry": {
      const entry = table.add(event.task, event.firstAttempt, true, out.now);
      entry.lookupFirst = lookupBeforeCreate(table.config, event.known !== undefined, event.parentCreatedHere === true);
      if (event.known) knownAs(entry, event.known);
      else record(out, entry, { state: "planned", planned_at: out.now });
      return;
    }
    case "LookedUp":
      return onLookedUp(out, event.ids, event.found);
    case "LookupFailed":
      notice(out, "warn", `looking up ${event.kind} tasks: ${event.message}; each is looked up again before its create`);
      if (event.refused) refuse(out, event.message, false);
      return;
    case "Polled":
      return onPolled(out, event.asked, event.views, event.lookedUp, event.odd);
    case "PollFailed":
      if (event.refused && !table.stop) {
        refuse(out, event.message, true);
      } else {
        notice(out, "warn", `following ${event.kind} tasks: ${event.message}; asking again later`);
      }
      return;
    case "Callback":
      return onCallback(out, event.observation);
    case "IntentsWritten":
      for (const id of event.ids) {
        const e = table.entries.get(id);
        if (e?.intent !== "writing") continue; // its create started meanwhile (and wrote its own)
        if (event.ok) e.intent = "ready";
        else {
          // Not durable: its create writes and flushes its own intent, as without writing ahead.
          e.intent = undefined;
          table.intentCount--;
        }
      }
      return;
  }
  const entry = table.entries.get(event.id);
  if (!entry) return;
  const task = entry.task;
  const now = out.now;
  const { counters } = table;
  if ("intentRecorded" in event && event.intentRecorded) entry.recorded = "submitting";
  switch (event._tag) {
    case "Created": {
      settleLoan(out, entry, "kept");
      counters.creating--;
      counters.created++;
      table.limiters[task.kind].onCreated();
      table.setPhase(entry, "inflight");
      entry.taskId = event.taskId;
      entry.createdAt = event.createdAt;
      entry.sentAt = Math.min(now, event.sentAt ?? now);
      entry.lookupFirst = false;
      entry.createdHere = true;
      entry.unknownSince = undefined;
      entry.existsAtService = undefined;
      record(out, entry, { state: "submitted", task_id: event.taskId, created_at: event.createdAt });
      const early = table.watch?.takeEarly(task.id);
      if (early) onCallback(out, early);
      return;
    }
    case "Adopted":
      settleLoan(out, entry, "kept");
      counters.creating--;
      counters.adopted++;
      entry.lookupFirst = false;
      entry.unknownSince = undefined;
      entry.existsAtService = undefined;
      entry.sentAt = now;
      notice(out, "info", `${task.id}: found at the service (${event.view.taskId}), not created again`);
      return applyView(out, entry, event.view);
    case "NoSlot": {
      counters.creating--;
      counters.noSlotAnswers++;
      const limiter = table.limiters[task.kind];
      const before = limiter.limit;
      table.release(entry);
      if (settleLoan(out, entry, "refused")) {
        // On a slot a cue lent: the cue was wrong or early, which says nothing of the
        // quota. The policy's wait, or the service's Retry-After when longer (up to the cap).
        const policy = table.config.policy;
        const asked = Math.min(event.retryAfterMs ?? 0, Duration.toMillis(policy.retryAfterCap));
        entry.notBefore = now + Math.max(Duration.toMillis(policy.noSlotWait), asked);
      } else {
        // The run's share of the pool is smaller than it asked for: the slot-share rule
        // lowers the limit and quiets the kind (src/policy/slotShare.ts).
        entry.notBefore = limiter.onNoSlot(task.slots, now, event.retryAfterMs);
      }
      table.setPhase(entry, "waiting");
      entry.lookupFirst = false; // 1303: nothing was created
      record(out, entry, { state: "planned" });
      if (limiter.limit < before) {
        notice(out, "info", `${task.kind} slots: the service is full at ${limiter.used + task.slots}; using ${limiter.limit}`);
      }
      return;
    }
    case "Rejected":
      settleLoan(out, entry, "returned");
      counters.creating--;
      table.release(entry);
      table.setPhase(entry, "rejected");
      record(out, entry, { state: "rejected", error: { ...(event.code !== undefined ? { code: event.code } : {}), message: event.message, at: now } });
      return;
    case "Refused":
      settleLoan(out, entry, "returned");
      counters.creating--;
      table.release(entry);
      table.setPhase(entry, "waiting");
      // This answer created nothing (a 1xxx code); unless an earlier send or a lookup
      // left the outcome in doubt, the next run sends it again without a lookup.
      if (event.keepSubmitting) entry.lookupFirst = true;
      else if (entry.recorded === "submitting") record(out, entry, { state: "planned" });
      if (!table.stop) refuse(out, event.message, true);
      return;
    case "SendFailed": {
      settleLoan(out, entry, "returned");
      const policy = table.config.policy;
      counters.creating--;
      entry.sendFailures++;
      table.release(entry);
      table.setPhase(entry, entry.sendFailures >= policy.sendFailuresBeforeStuck ? "stuck" : "waiting");
      entry.lookupFirst = event.lookupFirst;
      entry.notBefore = now + Duration.toMillis(policy.sendFailedWait);
      notice(out, "warn", `${task.id}: create not confirmed (${event.message}); will try again`);
      return;
    }
    case "Unknown":
      settleLoan(out, entry, "kept"); // it may have landed on that slot
      counters.creating--;
      enterUnknown(out, entry, event.sentAt, event.exists);
      notice(
        out,
        "warn",
        event.namedAnother
          ? `${task.id}: ${event.message}; looking it up by its own external id, never created again`
          : event.exists
          ? `${task.id}: the service says this id is in use (${event.message}); looking it up until it shows, never created again`
          : `${task.id}: create sent, outcome unknown (${event.message}); looking it up, not sent again while it may exist`,
      );
      return;
    case "Fetched": {
      // Files here now: a record kept for a result the service deleted is no download.
      counters.downloaded += event.outputs.filter((o) => o.path && o.deleted_at === undefined).length;
      out.effects.push({ _tag: "Links", id: task.id, outputs: event.urls, at: now });
      // Every result the task must have is recorded: one the service never listed (or
      // listed without a link) is recorded lost, with why, never left out unnoticed.
      const { outputs, missing } = withMissingResults(task.kind, expectedResults(task), event.outputs, now);
      const why = entry.shortWhy ?? "the service listed fewer results than the task must have";
      entry.shortWhy = undefined;
      if (missing > 0) notice(out, "warn", `${task.id}: ${missing} paid result(s) lost: ${why}`);
      record(out, entry, { state: "downloaded", outputs, ...(missing > 0 ? { error: { message: `${missing} result(s) lost: ${why}`, at: now } } : {}) });
      table.setPhase(entry, "done");
      out.effects.push({ _tag: "Expand", entry });
      return;
    }
    case "FetchFailed":
      entry.fetchRounds++;
      notice(out, "warn", `${task.id}: download failed: ${event.message}`);
      // Otherwise the next poll brings fresh links and tries again.
      table.setPhase(entry, entry.fetchRounds >= table.config.policy.downloadRounds ? "stuck" : "inflight");
      return;
  }
};

/** An answer refused the run (api/refusal.ts `line`): nothing more is submitted. */
const refuse = (out: Out, line: string, tell: boolean): void => {
  const { table } = out;
  table.stop = "refused";
  table.refusal = line;
  table.refusedAt = out.now;
  if (tell) notice(out, "warn", `${line}; nothing more is submitted`);
};

/** What the lockfile says about an entry's task. */
const knownAs = (entry: Entry, known: KnownRecord): void => {
  entry.recorded = known.state;
  if (known.task_id !== undefined) entry.recordedTaskId = known.task_id;
};

/** A task enters in the phase its lockfile record says. */
const admit = (out: Out, event: Extract<EngineEvent, { _tag: "Admit" }>): void => {
  const { table, now } = out;
  if (table.has(event.task.id)) return;
  const entry = table.add(event.task, event.firstAttempt, event.front, now);
  const known = event.known;
  entry.lookupFirst = lookupBeforeCreate(table.config, known !== undefined, event.parentCreatedHere === true);
  if (known?.task_id) entry.taskId = known.task_id;
  if (known?.created_at !== undefined) entry.createdAt = known.created_at;
  if (known) knownAs(entry, known);
  const fresh = table.config.freshService;
  switch (known?.state) {
    case undefined:
      return record(out, entry, { state: "planned", planned_at: now });
    case "planned":
      return;
    case "submitting":
      // An earlier run sent it (or was about to) and never heard back: outcome unknown.
      if (!fresh) enterUnknown(out, entry, known.submitted_at ?? now, false);
      else entry.lookupFirst = true;
      return;
    case "submitted":
    case "processing":
      if (entry.taskId === undefined) entry.lookupFirst = true;
      else {
        table.setPhase(entry, "inflight");
        table.hold(entry);
      }
      return;
    case "succeeded":
      // Finished but not (all) downloaded: a query gives fresh links.
      table.setPhase(entry, entry.taskId === undefined ? "waiting" : "inflight");
      if (entry.taskId === undefined) entry.lookupFirst = true;
      return;
    case "downloaded":
      if (event.filesOk) {
        table.setPhase(entry, "done");
        out.effects.push({ _tag: "Expand", entry });
      } else if (entry.taskId !== undefined && !fresh) {
        table.setPhase(entry, "inflight"); // files missing or changed: fetch again
        notice(out, "warn", `${entry.task.id}: files missing or changed on disk, downloading again`);
      } else if (fresh) {
        // A fresh service no longer has the task: make it again.
        table.setPhase(entry, "waiting");
        entry.taskId = undefined;
        entry.createdAt = undefined;
        notice(out, "warn", `${entry.task.id}: files missing or changed on disk, creating it again on the emulator`);
      } else {
        table.setPhase(entry, "waiting");
        entry.lookupFirst = true;
      }
      return;
    case "failed":
      return table.setPhase(entry, "failed");
    case "rejected":
      // The service refused the create: nothing was made. Sent again, as the plan says
      // (`+`), after a lookup (a refused create proves nothing about an earlier one).
      entry.lookupFirst = true;
      return;
  }
};
