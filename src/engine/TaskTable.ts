// The run's state of every task, as one table: each task's phase, its place in the submit
// line, what the run last recorded for it, and the phase indexes and counters the loop
// asks about. Plain bookkeeping, no I/O and no clock: only `transition` (transition.ts)
// changes it, and the effectful parts read it.

import type { BigDecimal } from "effect";
import type { PlannedTask } from "../manifest/PlannedTask.js";
import { slotShareRule, type Policy, type ProductKind } from "../policy/Policy.js";
import type { TaskState } from "../state/LockFile.js";
import type { BudgetLimit } from "./Budget.js";
import type { StopReason } from "./EngineEvent.js";
import { CallbackWatch } from "./CallbackWatch.js";
import { DurationEvidence } from "./DurationEvidence.js";
import type { EvidenceDue } from "./pollTiming.js";
import { SlotLimiter } from "./SlotLimiter.js";

export type Phase = "waiting" | "creating" | "inflight" | "fetching" | "done" | "failed" | "rejected" | "stuck";

export interface Entry {
  task: PlannedTask;
  /** The attempt the chain started from: retries used = task.attempt - firstAttempt. */
  readonly firstAttempt: number;
  /** Place in line for submitting (see `TaskTable.inLine`); fixed for the entry's life. */
  readonly seq: number;
  /** Change only through TaskTable.setPhase, which keeps the phase indexes right. */
  phase: Phase;
  taskId?: string;
  /** When it was sent (or adopted): its age drives the polling rhythm. */
  sentAt: number;
  createdAt?: number;
  /** Must be looked up by external_task_id before any create: an earlier create's outcome is unknown. */
  lookupFirst: boolean;
  /** This run's create made it (answered with its task id): nothing before this run held it. */
  createdHere?: boolean;
  /**
   * A create of this task left without an answer that settles it (5xx after the body
   * was sent, a reset, a 1201 naming the id): the time of that send. While set, the
   * entry is `inflight` without a task id, holds its slots, is looked up by external id
   * with each poll, and is never created again (see createRules.ts `settlesUnknown`).
   */
  unknownSince?: number;
  /** The service said the external id is in use (1201): the task exists; only adopting it settles it. */
  existsAtService?: boolean;
  /** Not to be sent before this time (after a 1303 or a failed send). */
  notBefore: number;
  /** Slots held at the service, by our count. */
  holding: number;
  /** Failed download rounds. */
  fetchRounds: number;
  /** Creates that ended without an answer to act on. */
  sendFailures: number;
  /** Polls in a row whose answer did not include the task. */
  missingPolls: number;
  /** Not shown by its task id for long, it was looked up by its external id once (then left stuck if not found). */
  missingLookedUp?: boolean;
  /** `succeeded` answers in a row that listed too few results (resultCount.ts), and when the first came. */
  shortAnswers: number;
  shortSince?: number;
  /** Why the results it is fetching are fewer than it must have (given up asking), for the record. */
  shortWhy?: string;
  /** A callback said it may have finished: query it soon (never believed as such). */
  cued?: boolean;
  /** When it was cued (the first cue since its last query). */
  cuedAt?: number;
  /**
   * Its intent (`submitting`) was written ahead while it waited: being flushed (`writing`)
   * or durable (`ready`: its create needs only the run lock confirmed before it leaves).
   * Cleared when its create starts; one still set at the end of a run was never sent.
   */
  intent?: "writing" | "ready";
  /**
   * A cue lent its slot to a waiting create (cueRules.ts): it holds none by our count
   * until a query answers (ended: nothing to give back; still running: it takes it back).
   */
  lent?: boolean;
  /** When it lent its slot. */
  lentAt?: number;
  /** It lent its slot once: never again. */
  lentOnce?: boolean;
  /** This create took the slot a cue lent (the lender's id), until the create is answered. */
  borrowedFrom?: string;
  /** The lockfile state and task id this run last recorded (or found) for the task. */
  recorded?: TaskState;
  recordedTaskId?: string;
}

/** What the table is told once, at the start of a run. */
export interface TableConfig {
  readonly concurrency: number;
  readonly policy: Policy;
  /** Callbacks are on: observations are kept and polling is stretched while they flow. */
  readonly callbacks: boolean;
  /** New entries must be looked up before their create (the lockfile was lost). */
  readonly lookupFirst: boolean;
  /** The lockfile may lack creates an earlier run sent (LockStore.mayLackCreatesUntil is set). */
  readonly mayLackCreates?: boolean;
  /** The service is new (an in-process emulator) and knows none of the lockfile's tasks. */
  readonly freshService: boolean;
  /** Stop submitting and waiting at this time (ms). */
  readonly deadline?: number;
  readonly budget?: BudgetLimit;
  /** The next attempt of a task (pure, from the manifest). */
  readonly withAttempt: (task: PlannedTask, attempt: number) => PlannedTask;
  /** The job's retry_failed, when the job is known. */
  readonly retryFailedOf: (job: string) => number | undefined;
}

/** What the loop does after a Tick: stop, end (nothing left to do) or wait until `until`. */
export type LoopStep = { readonly _tag: "Stop" } | { readonly _tag: "Quiet" } | { readonly _tag: "Wait"; readonly until: number };

/** A task's charge the run refused: the task, its id at the service, what the answer said (path, value, why) and the answer's request id. */
export interface RefusedCharge {
  readonly id: string;
  readonly job: string;
  readonly taskId?: string;
  readonly charge: string;
  readonly requestId?: string;
}

export class TaskTable {
  readonly entries = new Map<string, Entry>();
  /**
   * Tasks the plan has done whose files are here, at start-up, that nothing downstream
   * reads: counted by job, never entries (no state to follow, no event to tell; a rerun of
   * 100,000 finished tasks admits none). Planning.ts `admitAtStart`.
   */
  readonly doneAtStart = new Set<string>();
  readonly doneAtStartByJob = new Map<string, number>();
  // The line tasks are submitted in: downstream and retried tasks first (the newest
  // of them first), then the manifest's tasks in order. A place is kept for the
  // entry's life (one that goes back to waiting keeps it); seq < 0 indexes
  // `lineFront` (-1 is its first element), seq >= 0 indexes `lineBack`. Both only grow.
  private readonly lineFront: Entry[] = [];
  private readonly lineBack: Entry[] = [];
  // Indexes over the phases, kept by setPhase, so the loop's questions (anything busy?
  // anything waiting? who is in flight?) cost nothing per task: with 20,000 tasks,
  // scanning every entry on every message made a run quadratic.
  /** No waiting entry sits before this place in line. */
  firstWaiting = 0;
  readonly waitingCount: Record<ProductKind, number> = { video: 0, image: 0 };
  /** Entries creating, in flight or fetching. */
  activeCount = 0;
  readonly inflightOf: Record<ProductKind, Set<Entry>> = { video: new Set(), image: new Set() };
  readonly creatingNow = new Set<Entry>();
  /** Entries with an intent written ahead (`Entry.intent` set). */
  intentCount = 0;
  /** Cued video tasks that may lend their slot (checked again when used: cueRules.ts `mayLend`). */
  readonly lenders = new Set<Entry>();
  /** Lending pauses until then after cues the service proved wrong; `lendStrikes` counts those. */
  lendPausedUntil = 0;
  lendStrikes = 0;

  readonly limiters: Record<ProductKind, SlotLimiter>;
  readonly watch: CallbackWatch | undefined;
  /** How long finished tasks took, per kind and settings (adaptive polling). */
  readonly evidence: DurationEvidence;
  /** Bumped whenever a kind's set of tasks in flight changes (keys `pollCache`). */
  readonly inflightVersion: Record<ProductKind, number> = { video: 0, image: 0 };
  /** The last adaptive polling answer per kind, valid while its keys are unchanged (tick.ts). */
  readonly pollCache: Record<ProductKind, { lastPoll: number; version: number; evidence: number; value: EvidenceDue } | undefined> = { video: undefined, image: undefined };
  readonly counters = { creating: 0, created: 0, adopted: 0, downloaded: 0, noSlotAnswers: 0, lent: 0, lentRefused: 0 };
  readonly lastPoll: Record<ProductKind, number> = { video: 0, image: 0 };
  /** When cued tasks of a kind were last queried (cue queries are spaced, see Policy.cueQuerySpacing). */
  readonly lastCueQuery: Record<ProductKind, number> = { video: Number.NEGATIVE_INFINITY, image: Number.NEGATIVE_INFINITY };
  stop: StopReason | "refused" | undefined;
  refusal: string | undefined;
  /** Charges that cannot be true the service answered (money/chargeCheck.ts): refused, in no sum; the run stops on the first. */
  readonly refusedCharges: RefusedCharge[] = [];
  /** When an answer refused the run (creates in flight then get `policy.refusedDrainWait` to report). */
  refusedAt: number | undefined;
  budgetStopped = false;
  /** The account's currency (image charges come without one), once known. */
  currency: string | undefined;
  /** Set by each Tick. */
  loop: LoopStep = { _tag: "Wait", until: 0 };
  /** Cash charged in the budget's currency, as last told by a Tick. */
  charged: BigDecimal.BigDecimal | undefined;

  constructor(
    readonly config: TableConfig,
    currency: string | undefined,
  ) {
    const { concurrency, policy } = config;
    this.limiters = {
      video: new SlotLimiter(concurrency, slotShareRule(policy), policy.slotPools?.pool("video", slotShareRule(policy))),
      image: new SlotLimiter(concurrency, slotShareRule(policy), policy.slotPools?.pool("image", slotShareRule(policy))),
    };
    this.watch = config.callbacks ? new CallbackWatch(policy) : undefined;
    this.evidence = new DurationEvidence(policy.durationSamples);
    this.currency = currency;
  }

  /** Whether the task is in this run: an entry, or counted done at the start. */
  has(id: string): boolean {
    return this.entries.has(id) || this.doneAtStart.has(id);
  }

  /** A task the plan has done, its files here: counted, not followed. */
  countDone(task: PlannedTask): void {
    if (this.has(task.id)) return;
    this.doneAtStart.add(task.id);
    this.doneAtStartByJob.set(task.job, (this.doneAtStartByJob.get(task.job) ?? 0) + 1);
  }

  get lineEnd(): number {
    return this.lineBack.length;
  }

  inLine(seq: number): Entry | undefined {
    return seq < 0 ? this.lineFront[-seq - 1] : this.lineBack[seq];
  }

  /** A new entry, waiting, at the front of the line (downstream, retries) or its back. */
  add(task: PlannedTask, firstAttempt: number, front: boolean, now: number): Entry {
    const entry: Entry = {
      task,
      firstAttempt,
      seq: front ? -(this.lineFront.length + 1) : this.lineBack.length,
      phase: "waiting",
      sentAt: now,
      lookupFirst: this.config.lookupFirst,
      notBefore: 0,
      holding: 0,
      fetchRounds: 0,
      sendFailures: 0,
      missingPolls: 0,
      missingLookedUp: undefined,
      shortAnswers: 0,
      shortSince: undefined,
      shortWhy: undefined,
      // Every field from the start, and cleared by setting undefined, never `delete`: an
      // entry keeps one shape for its life (deleting a field made most entries
      // dictionary-mode objects, larger and slower to read, 200,000 of them at scale).
      taskId: undefined,
      createdAt: undefined,
      createdHere: undefined,
      unknownSince: undefined,
      existsAtService: undefined,
      cued: undefined,
      cuedAt: undefined,
      intent: undefined,
      lent: undefined,
      lentAt: undefined,
      lentOnce: undefined,
      borrowedFrom: undefined,
      recorded: undefined,
      recordedTaskId: undefined,
    };
    this.entries.set(task.id, entry);
    if (entry.seq < 0) this.lineFront[-entry.seq - 1] = entry;
    else this.lineBack[entry.seq] = entry;
    this.enterPhase(entry);
    return entry;
  }

  setPhase(entry: Entry, phase: Phase): void {
    if (entry.phase === phase) return;
    this.leavePhase(entry);
    entry.phase = phase;
    this.enterPhase(entry);
  }

  /** Takes the task's slots at the service (by our count), unless it holds them already. */
  hold(entry: Entry): void {
    if (entry.holding > 0) return;
    entry.holding = entry.task.slots;
    this.limiters[entry.task.kind].take(entry.task.slots);
  }

  release(entry: Entry): void {
    if (entry.holding > 0) this.limiters[entry.task.kind].release(entry.holding);
    entry.holding = 0;
  }

  busy(): boolean {
    return this.activeCount > 0;
  }

  anyWaiting(): boolean {
    return this.waitingCount.video + this.waitingCount.image > 0;
  }

  /** Waiting tasks whose intent was written ahead: none of them was sent (their creates never started). */
  intentsUnsent(): Entry[] {
    const out: Entry[] = [];
    for (const e of this.entries.values()) if (e.intent !== undefined && e.phase === "waiting") out.push(e);
    return out;
  }

  private enterPhase(entry: Entry): void {
    const kind = entry.task.kind;
    switch (entry.phase) {
      case "waiting":
        this.waitingCount[kind]++;
        if (entry.seq < this.firstWaiting) this.firstWaiting = entry.seq;
        return;
      case "inflight":
        this.inflightOf[kind].add(entry);
        this.inflightVersion[kind]++;
        this.activeCount++;
        return;
      case "creating":
        this.creatingNow.add(entry);
        this.activeCount++;
        return;
      case "fetching":
        this.activeCount++;
        return;
    }
  }

  private leavePhase(entry: Entry): void {
    const kind = entry.task.kind;
    switch (entry.phase) {
      case "waiting":
        this.waitingCount[kind]--;
        return;
      case "inflight":
        this.inflightOf[kind].delete(entry);
        this.inflightVersion[kind]++;
        this.activeCount--;
        return;
      case "creating":
        this.creatingNow.delete(entry);
        this.activeCount--;
        return;
      case "fetching":
        this.activeCount--;
        return;
    }
  }
}
