// What a lockfile cost, as plain data: totals per currency and cash type (charged, list
// price, saving), units per package type, the same per job, counts per state, and the
// failed tasks with what they were charged (normally nothing). Pure and exact.

import type { BillingEntry } from "../protocol/wire.js";
import type { LockFile, LockTask, TaskState } from "../state/LockFile.js";
import { Decimal } from "./Decimal.js";
import { accountCurrency } from "../money/charges.js";

export const TASK_STATES: readonly TaskState[] = [
  "planned",
  "submitting",
  "submitted",
  "processing",
  "succeeded",
  "downloaded",
  "failed",
  "rejected",
];

export interface CashTotal {
  readonly currency: string;
  /** balance (real money) or test_balance (test quota): never added together. */
  readonly cash_type: string;
  /** Exact sum of the amounts deducted (discounted). */
  readonly charged: string;
  /** Exact sum of the list prices (an entry without one counts at its amount). */
  readonly list_price: string;
  /** list_price - charged. */
  readonly saving: string;
  /** Tasks with at least one such entry. */
  readonly tasks: number;
}

export interface UnitTotal {
  readonly package_type: string;
  readonly units: string;
  readonly tasks: number;
}

export interface Charges {
  readonly cash: readonly CashTotal[];
  readonly units: readonly UnitTotal[];
}

export interface JobSummary extends Charges {
  readonly job: string;
  readonly tasks: number;
  readonly states: Readonly<Record<TaskState, number>>;
}

export interface FailedTaskSummary extends Charges {
  readonly id: string;
  readonly job: string;
  readonly state: "failed" | "rejected";
  readonly task_id?: string;
  readonly code?: number;
  readonly reason: string;
}

export interface BillingSummary extends Charges {
  readonly name: string;
  readonly tasks: number;
  readonly states: Readonly<Record<TaskState, number>>;
  readonly jobs: readonly JobSummary[];
  readonly failed: readonly FailedTaskSummary[];
  /**
   * Tasks whose results were reused from a task paid elsewhere (issue 31): no charge of
   * their own (never counted above); what their source cost when it was paid, for the
   * reader. Absent when none.
   */
  readonly reused?: {
    readonly tasks: number;
    /** Currency -> what the sources cost when paid (decimal string), where their records say. */
    readonly paidBefore: Readonly<Record<string, string>>;
    readonly list: readonly { readonly id: string; readonly job: string; readonly from: string; readonly paid_at?: number; readonly cost?: { readonly amount: string; readonly currency: string } }[];
  };
}

const noStates = (): Record<TaskState, number> =>
  Object.fromEntries(TASK_STATES.map((s) => [s, 0])) as Record<TaskState, number>;

/** Accumulates billing entries of many tasks into exact totals. */
class ChargeTotals {
  /** `currency`: the account's, for cash entries that name none (image charges); "?" when unknown. */
  constructor(private readonly currency = "?") {}
  private readonly cash = new Map<string, { charged: Decimal; list: Decimal; tasks: Set<string> }>();
  private readonly units = new Map<string, { units: Decimal; tasks: Set<string> }>();

  add(id: string, entries: readonly BillingEntry[]): void {
    for (const entry of entries) {
      const amount = Decimal.of(entry.amount);
      if (entry.charge_type === "cash") {
        const key = `${entry.currency ?? this.currency}\u0000${entry.cash_type ?? "balance"}`;
        const total = this.cash.get(key) ?? { charged: Decimal.zero, list: Decimal.zero, tasks: new Set<string>() };
        total.charged = total.charged.plus(amount);
        total.list = total.list.plus(entry.list_price === undefined ? amount : Decimal.of(entry.list_price));
        total.tasks.add(id);
        this.cash.set(key, total);
      } else {
        const key = entry.package_type ?? "?";
        const total = this.units.get(key) ?? { units: Decimal.zero, tasks: new Set<string>() };
        total.units = total.units.plus(amount);
        total.tasks.add(id);
        this.units.set(key, total);
      }
    }
  }

  result(): Charges {
    const cash = [...this.cash.entries()]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([key, t]) => {
        const [currency, cash_type] = key.split("\u0000") as [string, string];
        return {
          currency,
          cash_type,
          charged: t.charged.toString(),
          list_price: t.list.toString(),
          saving: t.list.minus(t.charged).toString(),
          tasks: t.tasks.size,
        };
      });
    const units = [...this.units.entries()]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([package_type, t]) => ({ package_type, units: t.units.toString(), tasks: t.tasks.size }));
    return { cash, units };
  }
}


/** The billing summary of a lockfile (exact decimal sums of the service's amounts). */
export const summarizeBilling = (lock: LockFile): BillingSummary => {
  // By id; each record read as it is summed (a run's end decodes held records as they are
  // read), so the account's currency is found by a pass that keeps nothing either.
  const ids = Object.keys(lock.tasks).sort();
  const currency = accountCurrency(
    (function* () {
      for (const id of ids) yield lock.tasks[id]!.billing;
    })(),
  );
  const all = new ChargeTotals(currency);
  const states = noStates();
  const jobs = new Map<string, { totals: ChargeTotals; tasks: number; states: Record<TaskState, number> }>();
  const failed: FailedTaskSummary[] = [];
  const reused: NonNullable<BillingSummary["reused"]>["list"][number][] = [];
  const paidBefore = new Map<string, Decimal>();
  for (const id of ids) {
    const task = lock.tasks[id]!;
    if (task.reused_from !== undefined) {
      const r = task.reused_from;
      reused.push({ id, job: task.job, from: `${r.lockfile} ${r.id}`, ...(r.paid_at !== undefined ? { paid_at: r.paid_at } : {}), ...(r.cost ? { cost: r.cost } : {}) });
      if (r.cost) paidBefore.set(r.cost.currency, (paidBefore.get(r.cost.currency) ?? Decimal.zero).plus(Decimal.of(r.cost.amount)));
    }
    all.add(id, task.billing);
    states[task.state] += 1;
    const job = jobs.get(task.job) ?? { totals: new ChargeTotals(currency), tasks: 0, states: noStates() };
    job.totals.add(id, task.billing);
    job.tasks += 1;
    job.states[task.state] += 1;
    jobs.set(task.job, job);
    if (task.state === "failed" || task.state === "rejected") {
      const own = new ChargeTotals(currency);
      own.add(id, task.billing);
      failed.push({
        id,
        job: task.job,
        state: task.state,
        ...(task.task_id !== undefined ? { task_id: task.task_id } : {}),
        ...(task.error?.code !== undefined ? { code: task.error.code } : {}),
        reason: task.error?.message ?? "(no reason recorded)",
        ...own.result(),
      });
    }
  }
  return {
    name: lock.name,
    tasks: ids.length,
    states,
    ...all.result(),
    jobs: [...jobs.entries()]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([job, j]) => ({ job, tasks: j.tasks, states: j.states, ...j.totals.result() })),
    failed,
    ...(reused.length > 0
      ? { reused: { tasks: reused.length, paidBefore: Object.fromEntries([...paidBefore].map(([c, d]) => [c, d.toString()])), list: reused } }
      : {}),
  };
};
