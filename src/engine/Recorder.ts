// The lockfile recorder: the one place the engine writes task records, through one
// builder (`record`: the current record, or a fresh one, with a patch and the time), and
// the one place that announces a task's change of state. It reads the records through
// the LockStore's own view (no copy: the store holds a downloaded record as its lockfile
// line, and a second map of the objects would keep them alive) and keeps the running sum
// of cash charged.

import { join } from "node:path";
import { BigDecimal, Effect } from "effect";
import type { PlannedTask } from "../manifest/PlannedTask.js";
import type { LockTask, TaskState } from "../state/LockFile.js";
import type { LockStoreService } from "../state/LockStore.js";
import { sortKeys } from "../state/stableJson.js";
import type { BillingEntry } from "../protocol/wire.js";
import { cashByCurrency, newCharges } from "../money/charges.js";
import { chargedIn } from "./Budget.js";
import type { RunEvent } from "./RunEvent.js";

/** The fields a new record takes from its task. */
type Identity = Pick<LockTask, "job" | "kind" | "vars" | "dir" | "request_hash" | "take" | "attempt" | "upstream">;

// Matrix values and the upstream link with their keys sorted, as the lockfile's line keeps
// them: a record reads the same (and the reports made from it list the same) whether it was
// made in this run or read back from the lockfile.
const identityOf = (task: PlannedTask): Identity => ({
  job: task.job,
  kind: task.kind,
  vars: sortKeys(task.vars) as LockTask["vars"],
  dir: task.dir,
  request_hash: task.requestHash,
  take: task.take,
  attempt: task.attempt,
  ...(task.upstream ? { upstream: sortKeys(task.upstream) as LockTask["upstream"] } : {}),
});

// One empty list for every record with no outputs or no billing yet (200,000 planned
// tasks held two empty arrays each); frozen, as records are never changed in place.
const NONE: readonly never[] = Object.freeze([]);

/** A record with nothing done yet: `state` at `now`, no outputs, no billing. */
export const freshRecord = (identity: Identity, state: TaskState, now: number): LockTask => ({
  job: identity.job,
  kind: identity.kind,
  vars: identity.vars,
  dir: identity.dir,
  request_hash: identity.request_hash,
  take: identity.take,
  attempt: identity.attempt,
  state,
  planned_at: now,
  updated_at: now,
  outputs: NONE,
  billing: NONE,
  ...(identity.upstream ? { upstream: identity.upstream } : {}),
});

/** The task event for a record that just changed state: what made it (job, matrix values, folder), once downloaded its files, and the charges it brings (`charged`). */
const taskEvent = (id: string, next: LockTask, outputsDir: string | undefined, charged: readonly BillingEntry[] = NONE): RunEvent => ({
  type: "task",
  id,
  job: next.job,
  state: next.state,
  vars: next.vars,
  dir: next.dir,
  ...(next.task_id ? { task_id: next.task_id } : {}),
  ...(next.error ? { error: { ...(next.error.code !== undefined ? { code: next.error.code } : {}), message: next.error.message } } : {}),
  ...(next.state === "downloaded" ? { files: next.outputs.filter((o) => o.path && o.deleted_at === undefined).length } : {}),
  ...(next.state === "downloaded" && outputsDir !== undefined
    ? { paths: next.outputs.flatMap((o) => (o.path ? [join(outputsDir, ...o.path.split("/"))] : [])) }
    : {}),
  ...(charged.length > 0 ? { billing: charged } : {}),
});

export class Recorder {
  // Cash charged in the budget's currency over every record, kept as a running sum once
  // first asked for (summing all records per submitted task was quadratic).
  private readonly chargedById = new Map<string, BigDecimal.BigDecimal>();
  private chargedSum: BigDecimal.BigDecimal | undefined;

  constructor(
    private readonly store: LockStoreService,
    private readonly emit: (event: RunEvent) => void,
    private readonly budgetCurrency: string,
    /** The store's view of its records (`LockStoreService.view`): each put shows in it. */
    readonly records: ReadonlyMap<string, LockTask>,
    /** The outputs folder: task events name downloaded files by absolute path. */
    private readonly outputsDir?: string,
  ) {}

  get(id: string): LockTask | undefined {
    return this.records.get(id);
  }

  // Which (job, attempt) pairs any record has, made on first use and kept up to date by put.
  private attempts: Set<string> | undefined;

  /**
   * Whether any record is attempt `attempt` of a task of `job`: false proves no later
   * attempt of a task was recorded, so a rerun over 100,000 downloaded first attempts
   * does not work out each one's next attempt (a hash per task) only to find no record.
   */
  hasAttempt(job: string, attempt: number): boolean {
    if (this.attempts === undefined) {
      this.attempts = new Set();
      for (const t of this.records.values()) this.attempts.add(`${t.job}\u0000${t.attempt}`);
    }
    return this.attempts.has(`${job}\u0000${attempt}`);
  }

  /** Replaces a record as it is (start-up resets). */
  put(id: string, task: LockTask): Effect.Effect<void> {
    return Effect.suspend(() => {
      if (this.chargedSum !== undefined && this.records.get(id)?.billing !== task.billing) {
        const now = chargedIn(task.billing, this.budgetCurrency);
        this.chargedSum = BigDecimal.sum(BigDecimal.subtract(this.chargedSum, this.chargedById.get(id) ?? BigDecimal.fromBigInt(0n)), now);
        this.chargedById.set(id, now);
      }
      this.attempts?.add(`${task.job}\u0000${task.attempt}`);
      return this.store.put(id, task);
    });
  }

  /**
   * The one record builder: the task's record (or a fresh one) with `patch`, updated at
   * `now`; announces a change of state unless `quiet` (an intent written ahead is
   * announced by `announce` when its create starts).
   */
  record(task: PlannedTask, patch: Partial<LockTask> & { readonly state: TaskState }, now: number, quiet = false): Effect.Effect<void> {
    return Effect.suspend(() => {
      const current = this.records.get(task.id) ?? freshRecord(identityOf(task), "planned", now);
      const next: LockTask = { ...current, ...patch, updated_at: now };
      const put = this.put(task.id, next);
      if (current.state === next.state || quiet) return put;
      const charged = newCharges(current.state, next);
      if (charged.length > 0) this.chargedHere.push(charged);
      return Effect.zipRight(
        put,
        Effect.sync(() => this.emit(taskEvent(task.id, next, this.outputsDir, charged))),
      );
    });
  }

  /** Announces a task's current record (its task event), as a change of state would. */
  announce(id: string): void {
    const current = this.records.get(id);
    if (current) this.emit(taskEvent(id, current, this.outputsDir));
  }

  /** Cash charged so far in the budget's currency. */
  charged(): BigDecimal.BigDecimal {
    if (this.chargedSum === undefined) {
      let sum = BigDecimal.fromBigInt(0n);
      for (const [id, t] of this.records) {
        const c = chargedIn(t.billing, this.budgetCurrency);
        this.chargedById.set(id, c);
        sum = BigDecimal.sum(sum, c);
      }
      this.chargedSum = sum;
    }
    return this.chargedSum;
  }

  /** Cash charged per currency over every record (and `currency`, at 0 when nothing was charged in it). */
  spend(currency: string | undefined): Record<string, string> {
    // One pass over the records (a record held as its line is decoded on each pass).
    const all: (readonly BillingEntry[])[] = [];
    for (const t of this.records.values()) all.push(t.billing);
    return cashByCurrency(all, currency);
  }

  // The charges this run's records brought (newCharges), as the live view counts them.
  private readonly chargedHere: (readonly BillingEntry[])[] = [];

  /** Cash charged by this run per currency (`currency` at 0 when nothing was). */
  spendThisRun(currency: string | undefined): Record<string, string> {
    return cashByCurrency(this.chargedHere, currency);
  }
}
