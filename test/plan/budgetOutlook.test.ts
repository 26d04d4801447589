// The plan against the budget (src/plan/budgetOutlook.ts): spend counts every cash
// charge of the lockfile and never goes down; tasks that would not run are counted in
// creation order with exact decimals; unpriced tasks are named, not guessed.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { budgetOutlook, describeOutlook } from "../../src/plan/budgetOutlook.js";
import type { PlanEntry, PlanResult } from "../../src/plan/diffPlan.js";
import type { LockFile, LockTask } from "../../src/state/LockFile.js";

const entry = (mark: PlanEntry["mark"], job: string, amount?: string, count?: number): PlanEntry => ({
  mark,
  id: `${job}-${Math.random().toString(36).slice(2)}`,
  job,
  vars: {},
  ...(amount !== undefined ? { estimate: { currency: "USD", amount } } : {}),
  ...(count !== undefined ? { count } : {}),
});

const plan = (entries: PlanEntry[]): PlanResult => ({
  manifest: "m.yaml",
  lockfile: "m.lock.json",
  lockfileFound: true,
  entries,
  jobs: {},
  total: { "+": 0, "=": 0, "~": 0, "-": 0, "…": 0, inFlight: 0 },
  estimate: {},
  waitingEstimate: {},
});

const lockWith = (...amounts: string[]): LockFile => ({
  lockfile_version: 1,
  name: "m",
  tasks: Object.fromEntries(
    amounts.map((amount, i) => [
      `m-a-${i}`,
      { job: "a", kind: "image", vars: {}, dir: `a/${i}`, request_hash: "x", take: 1, attempt: 1, state: "downloaded", updated_at: 1, outputs: [], billing: [{ charge_type: "cash", amount, currency: "USD" }] } as unknown as LockTask,
    ]),
  ),
});

test("spent sums the lockfile's cash charges exactly (0.1 + 0.2 = 0.3); a negative charge never lowers it", () => {
  const o = budgetOutlook(plan([]), lockWith("0.1", "0.2", "-5"), { max: "1", currency: "USD" });
  assert.is(o.spent, "0.3");
  assert.is(describeOutlook(o), "budget 1 USD: 0.3 spent (every charge in the lockfile counts); nothing left to create");
});

test("tasks that would not run are counted per job in creation order, waiting downstream tasks by their share", () => {
  const o = budgetOutlook(
    plan([entry("+", "stills", "0.02"), entry("+", "stills", "0.02"), entry("…", "reels", "3.5", 10), entry("=", "stills", "9")]),
    lockWith("7.5"),
    { max: "8.5", currency: "USD" },
  );
  // 1 left; stills take 0.04; 0.96 left buys 2 reels at 0.35; 8 would not be made.
  assert.equal(o.wouldNotRun, { reels: 8 });
  assert.is(o.estimated, "3.54");
  assert.is(o.tasks, 12);
  assert.is(describeOutlook(o), "budget 8.5 USD: 7.5 spent (every charge in the lockfile counts), 3.54 estimated for 12 task(s) left: about 8 reels task(s) would not be made");
});

test("unpriced tasks (or priced in another currency) are named apart and never assumed free of cost", () => {
  const other: PlanEntry = { ...entry("+", "b"), estimate: { currency: "CNY", amount: "1" } };
  const o = budgetOutlook(plan([entry("+", "a"), entry("…", "c", undefined, 4), other]), undefined, { max: "1", currency: "USD" });
  assert.equal(o.unpriced, { a: 1, c: 4, b: 1 });
  assert.equal(o.wouldNotRun, {});
});

test("property: the tasks cut match a per-task greedy reference in integer cents (seeded random plans)", () => {
  let seed = 7;
  const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
  for (let round = 0; round < 300; round++) {
    const entries: PlanEntry[] = [];
    let priced = 0;
    const cents: number[] = [];
    for (let i = 0, n = Math.floor(rnd() * 8); i < n; i++) {
      const c = Math.floor(rnd() * 50);
      const count = rnd() < 0.3 ? 1 + Math.floor(rnd() * 5) : undefined;
      entries.push(entry(count ? "…" : "+", `j${i % 3}`, (c * (count ?? 1) / 100).toFixed(2), count));
      priced += count ?? 1;
      for (let k = 0; k < (count ?? 1); k++) cents.push(c);
    }
    const max = Math.floor(rnd() * 200);
    const o = budgetOutlook(plan(entries), undefined, { max: (max / 100).toFixed(2), currency: "USD" });
    const cut = Object.values(o.wouldNotRun).reduce((a, b) => a + b, 0);
    assert.ok(cut <= priced);
    // Greedy in order, by cents: the same count a reference computes with integers.
    let left = max;
    let expectedCut = 0;
    for (const c of cents) {
      if (c <= left) left -= c;
      else expectedCut++;
    }
    // A waiting group's tasks cost the same, so fitting as many as the money allows is the
    // same as the per-task greedy reference.
    assert.is(cut, expectedCut, `round ${round}: ${JSON.stringify({ cents, max })}`);
  }
});

test.run();
