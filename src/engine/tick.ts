// The loop's tick, as part of the state machine: at the deadline, stop; otherwise start
// every waiting task that fits (slots, create concurrency, budget) in line order, poll
// each kind whose rhythm is due (and the tasks callbacks cued), and say when to look again (table.loop). Pure.

import { BigDecimal, Duration } from "effect";
import type { PlannedTask } from "../manifest/PlannedTask.js";
import type { ProductKind } from "../policy/Policy.js";
import { formatMoney, isExhausted, spending, wouldExceed } from "./Budget.js";
import { durationKey } from "./DurationEvidence.js";
import type { EngineEffect, EngineEvent } from "./EngineEvent.js";
import { intentsToWrite } from "./createRules.js";
import { cueQueryAt, type CueQueue } from "./cueRules.js";
import { findLender, lend } from "./followAnswers.js";
import { evidenceDue, withRhythm } from "./pollTiming.js";
import { notice, watermarkOf, type Out } from "./taskRules.js";
import type { Entry, TaskTable } from "./TaskTable.js";

const KINDS: readonly ProductKind[] = ["video", "image"];

/** Starts every task that fits now, polls what is due, and says when to look again. */
export const tick = (out: Out, charged: BigDecimal.BigDecimal | undefined, stopAtDeadline: (event: EngineEvent) => void): void => {
  const { table, now } = out;
  const deadline = table.config.deadline;
  if (deadline !== undefined && now >= deadline && !table.stop) stopAtDeadline({ _tag: "Stop", reason: "time", now });
  if (table.stop) {
    // Refused: the creates already in flight report first (bounded), so each answer is
    // recorded; one cut off would stay "outcome unknown" and be looked up, not sent, next time.
    const drainUntil = table.refusedAt === undefined ? undefined : table.refusedAt + Duration.toMillis(table.config.policy.refusedDrainWait);
    if (table.stop === "refused" && table.counters.creating > 0 && drainUntil !== undefined && now < drainUntil) {
      table.loop = { _tag: "Wait", until: drainUntil };
      return;
    }
    table.loop = { _tag: "Stop" };
    return;
  }
  if (charged !== undefined) table.charged = charged;
  const wakeForWaiting = submit(out);
  writeAhead(out);
  if (!table.busy() && (!table.anyWaiting() || table.budgetStopped)) {
    table.loop = { _tag: "Quiet" };
    return;
  }
  let next = wakeForWaiting ?? Infinity;
  const spacing = Duration.toMillis(table.config.policy.cueQuerySpacing);
  const cueTiming = {
    lastCueQuery: table.lastCueQuery.video,
    spacingMs: spacing,
    holdMs: Duration.toMillis(table.config.policy.cueHold),
    batch: table.config.policy.cueBatch,
  };
  for (const kind of KINDS) {
    const rhythm = pollDueAt(table, kind, now);
    if (rhythm === undefined) continue;
    const inflight = table.inflightOf[kind];
    // Tasks a callback said may have finished are asked about soon, and the service's
    // answer (not the callback) decides. Video queries take up to 50 ids in one request,
    // so a cue brings the kind's regular poll forward (every task in flight, one query,
    // which also stands for the rhythm's next poll); image tasks are read one by one when
    // few, so there only the cued ones are asked. Either way at most once per spacing.
    // (Scanned, not copied: a poll's rhythm is asked on every tick, with up to `concurrency` tasks in flight.)
    const cued: Entry[] = [];
    for (const e of inflight) if (e.cued && e.taskId !== undefined) cued.push(e);
    const fold = kind === "video";
    // Videos: a cued task that lent its slot is only to be recorded, so its query may wait
    // for others (cueRules.ts `cueQueryAt`); one still holding its slot is asked soon.
    const cueAt = fold ? cueQueryAt(cueQueue(table, cued, now), cueTiming) : cued.length > 0 ? table.lastCueQuery[kind] + spacing : Infinity;
    const due = fold ? Math.min(rhythm, cueAt) : rhythm;
    if (due <= now) {
      if (fold && cueAt <= now) table.lastCueQuery[kind] = now;
      const flying: Entry[] = [];
      // "Outcome unknown": no task id yet, looked up by external id with every poll.
      const lookups: { readonly id: string; readonly watermark: boolean }[] = [];
      for (const e of inflight) {
        if (e.taskId !== undefined) flying.push(e);
        else if (e.unknownSince !== undefined) lookups.push({ id: e.task.id, watermark: watermarkOf(e.task) });
      }
      table.lastPoll[kind] = now;
      for (const e of flying) e.cued = false;
      if (flying.length > 0 || lookups.length > 0) out.effects.push(pollOf(kind, flying, now, lookups));
      next = Math.min(next, now);
      continue;
    }
    next = Math.min(next, due);
    if (fold || cued.length === 0) continue;
    if (cueAt <= now) {
      table.lastCueQuery[kind] = now;
      for (const e of cued) e.cued = false;
      out.effects.push(pollOf(kind, cued, now));
    } else next = Math.min(next, cueAt);
  }
  if (deadline !== undefined) next = Math.min(next, deadline);
  table.loop = { _tag: "Wait", until: next };
};

/**
 * The cued videos, as `cueQueryAt` counts them. A cued task that will lend its slot as
 * soon as a create may start (tasks wait, lending is not paused, it never lent) counts as
 * lent since its cue: only the create concurrency holds it back, and its query would free nothing.
 */
const cueQueue = (table: TaskTable, cued: readonly Entry[], now: number): CueQueue => {
  const canLend = table.config.policy.lendOnCue && table.waitingCount.video > 0 && !table.stop && !table.budgetStopped && now >= table.lendPausedUntil;
  let holding = 0;
  let lent = 0;
  let oldestLentAt = Number.POSITIVE_INFINITY;
  for (const e of cued) {
    if (e.lent || (canLend && !e.lentOnce && e.holding > 0)) {
      lent++;
      oldestLentAt = Math.min(oldestLentAt, e.lent ? (e.lentAt ?? now) : (e.cuedAt ?? now));
    } else holding++;
  }
  return { holding, lent, oldestLentAt };
};

const pollOf = (
  kind: ProductKind,
  entries: readonly Entry[],
  at: number,
  lookups: readonly { readonly id: string; readonly watermark: boolean }[] = [],
): EngineEffect => ({
  _tag: "Poll",
  kind,
  tasks: entries.map((e) => ({ id: e.task.id, taskId: e.taskId!, createdAt: e.createdAt, watermark: watermarkOf(e.task) })),
  lookups,
  at,
});

// A task's duration key, worked out once per task (asked for every task in flight whenever the set changes).
const keys = new WeakMap<PlannedTask, string>();
const keyOf = (task: PlannedTask): string => {
  let key = keys.get(task);
  if (key === undefined) keys.set(task, (key = durationKey(task)));
  return key;
};

/** Above this many tasks of a kind in flight, the fixed rhythm applies (a poll is many requests then, and weighing each task would cost more than it saves). */
const ADAPTIVE_MAX = 64;

const pollDueAt = (table: TaskTable, kind: ProductKind, now: number): number | undefined => {
  const inflight = table.inflightOf[kind];
  if (inflight.size === 0) return undefined;
  const policy = table.config.policy;
  let newest = Number.NEGATIVE_INFINITY;
  for (const e of inflight) newest = Math.max(newest, e.sentAt);
  const normal = policy.pollInterval(kind, now - newest);
  const last = table.lastPoll[kind];
  const watch = table.watch;
  if (watch) {
    // While callbacks flow, they say when tasks end: polling only guards against lost ones.
    const stretched = watch.pollInterval(kind, normal, [...inflight].map((e) => ({ taskId: e.taskId, ageMs: now - e.sentAt })));
    if (Duration.greaterThan(stretched, normal)) return last + Duration.toMillis(stretched);
  }
  if (inflight.size > ADAPTIVE_MAX) return last + Duration.toMillis(normal);
  // Adaptive: when the durations seen say tasks are likely to have ended (pollTiming.ts).
  const bounds = {
    lastPoll: last,
    rhythmMs: Duration.toMillis(normal),
    floorMs: Duration.toMillis(policy.pollFloor(kind)),
    ceilingMs: Duration.toMillis(policy.pollCeiling(kind)),
  };
  const cached = table.pollCache[kind];
  const version = table.inflightVersion[kind];
  const evidence = table.evidence.version;
  if (cached && cached.lastPoll === last && cached.version === version && cached.evidence === evidence) return withRhythm(cached.value, bounds);
  const value = evidenceDue({
    ...bounds,
    idleBudgetMs: Duration.toMillis(policy.pollIdleBudget(kind)),
    // Tasks without a task id ("outcome unknown", looked up with every poll) have no evidence.
    tasks: [...inflight].map((e) => ({ startedAt: e.sentAt, durations: e.taskId === undefined ? undefined : table.evidence.points(keyOf(e.task)) })),
  });
  table.pollCache[kind] = { lastPoll: last, version, evidence, value };
  return withRhythm(value, bounds);
};

/** Starts every waiting task that fits; returns the earliest time a waiting task may become sendable. */
const submit = (out: Out): number | undefined => {
  const { table, now } = out;
  if (table.stop || table.budgetStopped) return undefined;
  const policy = table.config.policy;
  // A kind can start something only with a task waiting and a slot free; when neither
  // can, nothing is scanned: the event that frees a slot brings the loop back here.
  const open = (kind: ProductKind) =>
    table.waitingCount[kind] > 0 && (table.limiters[kind].fits(1, now) || (kind === "video" && table.lenders.size > 0 && now >= table.lendPausedUntil));
  // A kind quiet after a 1303 (src/policy/slotShare.ts) is looked at again when its wait
  // ends; one held back by the other runs sharing its pool (runManifests.ts), after the
  // no-slot wait (their ends do not wake this loop).
  let wakeAt: number | undefined;
  const lookAgain = now + Duration.toMillis(policy.noSlotWait);
  for (const kind of KINDS) {
    if (table.waitingCount[kind] === 0) continue;
    const limiter = table.limiters[kind];
    if (limiter.quietUntil > now) wakeAt = Math.min(wakeAt ?? Infinity, limiter.quietUntil);
    else if (limiter.heldByOthers(1, now)) wakeAt = Math.min(wakeAt ?? Infinity, lookAgain);
  }
  if (!open("video") && !open("image")) return wakeAt;
  const waiting = table.waitingCount.video + table.waitingCount.image;
  let seen = 0;
  let leading = true;
  for (let seq = table.firstWaiting; seq < table.lineEnd && seen < waiting; seq++) {
    if (table.counters.creating >= policy.createConcurrency) break;
    const entry = table.inLine(seq);
    if (!entry || entry.phase !== "waiting") {
      // Nothing waits before this place now; an entry back to waiting moves it back.
      if (leading) table.firstWaiting = seq + 1;
      continue;
    }
    leading = false;
    seen++;
    if (entry.notBefore > now) {
      wakeAt = Math.min(wakeAt ?? Infinity, entry.notBefore);
      continue;
    }
    const limiter = table.limiters[entry.task.kind];
    // Every slot taken by our count: a cued task may lend its own (cueRules.ts).
    const fits = limiter.fits(entry.task.slots, now);
    const lender = fits ? undefined : findLender(table, entry, now);
    if (!fits && lender === undefined) {
      if (limiter.heldByOthers(entry.task.slots, now)) wakeAt = Math.min(wakeAt ?? Infinity, lookAgain);
      continue;
    }
    const budget = table.config.budget;
    if (budget && !entry.lookupFirst) {
      const s = { charged: table.charged ?? BigDecimal.fromBigInt(0n), inFlight: inFlightSpend(table, budget.currency) };
      const over = entry.task.estimate ? wouldExceed(budget, s, entry.task.estimate) : isExhausted(budget, s);
      if (over) {
        table.budgetStopped = true;
        notice(
          out,
          "warn",
          `budget: ${formatMoney(s.charged)} ${budget.currency} charged and ${formatMoney(s.inFlight)} in flight; the next task would pass ${budget.max}. Nothing more is submitted.`,
        );
        return undefined;
      }
    }
    if (lender) lend(table, lender, entry, now);
    limiter.take(entry.task.slots);
    entry.holding = entry.task.slots;
    table.setPhase(entry, "creating");
    table.counters.creating++;
    const intentReady = entry.intent === "ready";
    if (entry.intent !== undefined) table.intentCount--;
    entry.intent = undefined;
    out.effects.push({ _tag: "Create", entry, lookupFirst: entry.lookupFirst, sendFailures: entry.sendFailures, intentReady });
  }
  return wakeAt;
};

/** How many places in line the write-ahead scan looks at, at most: it runs on every tick, so it must cost little per task. */
const AHEAD_SCAN = 64;

/**
 * Writes the intents of the next waiting tasks ahead (createRules.ts `intentsToWrite`):
 * recorded quietly now, made durable by one flush (FlushIntents), after which their
 * creates skip that write. Not once the run stops submitting.
 */
const writeAhead = (out: Out): void => {
  const { table, now } = out;
  const ahead = table.config.policy.intentsAhead;
  if (table.intentCount >= ahead || table.stop || table.budgetStopped || !table.anyWaiting()) return;
  const line: Entry[] = [];
  const waiting = table.waitingCount.video + table.waitingCount.image;
  const end = Math.min(table.lineEnd, table.firstWaiting + AHEAD_SCAN);
  for (let seq = table.firstWaiting; seq < end && line.length < waiting; seq++) {
    const entry = table.inLine(seq);
    if (entry?.phase === "waiting") line.push(entry);
  }
  const chosen = intentsToWrite(line, ahead)
    .slice(0, ahead - table.intentCount)
    .map((i) => line[i]!);
  if (chosen.length === 0) return;
  for (const entry of chosen) {
    entry.intent = "writing";
    table.intentCount++;
    entry.recorded = "submitting";
    out.effects.push({ _tag: "Record", task: entry.task, patch: { state: "submitting", submitted_at: now }, at: now, quiet: true });
  }
  out.effects.push({ _tag: "FlushIntents", ids: chosen.map((e) => e.task.id) });
};

/** Estimates of the tasks holding slots: creating, or in flight as far as we know. */
const inFlightSpend = (table: TaskTable, currency: string) => {
  const estimates: PlannedTask["estimate"][] = [];
  // A task that lent its slot on a cue is still unpaid by our records until its query answers.
  for (const e of table.inflightOf.video) if (e.holding > 0 || e.lent) estimates.push(e.task.estimate);
  for (const e of table.inflightOf.image) if (e.holding > 0) estimates.push(e.task.estimate);
  for (const e of table.creatingNow) estimates.push(e.task.estimate);
  return spending([], estimates, currency).inFlight;
};
