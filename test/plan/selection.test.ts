// The selection rule of runs of a chosen part (src/plan/selection.ts): parsing the
// flags, matching matrix values (dotted paths into data rows, through a downstream
// task's upstream vars), checking against the manifest, and cutting a plan down; plus
// seeded property tests: a plan cut down keeps exactly the entries the rule selects,
// its counts add up, and selections compose as AND.

import { test } from "uvu";
import * as assert from "uvu/assert";
import type { PlanEntry, PlanMark, PlanResult } from "../../src/plan/diffPlan.js";
import {
  checkSelection,
  countEntries,
  describeSelection,
  fieldOf,
  isWholeRun,
  keysOf,
  parseOnly,
  parseWhere,
  relevantJobs,
  selectPlan,
  selectsTask,
  whereMatches,
  type Selection,
  type SelectionJob,
  type WhereClause,
} from "../../src/plan/selection.js";
import { seeded } from "../engine/machine.js";

const w = (text: string): WhereClause => {
  const r = parseWhere(text);
  if (typeof r === "string") throw new Error(r);
  return r;
};

const jobs: SelectionJob[] = [
  { id: "stills", axes: ["product", "style"] },
  { id: "reels", upstream: { job: "stills" }, axes: ["mood"] },
  { id: "posters", axes: ["size"] },
];

const still = (sku: string, style: string) => ({ product: { sku, name: `n-${sku}` }, style });
const reel = (sku: string, style: string, mood: string) => ({ mood, item: { job: "stills", task: "x", index: 0, vars: still(sku, style) } });

test("parseWhere: key=value with a dotted key; the value may hold '='; no key or an empty segment is refused with an example", () => {
  assert.equal(parseWhere("product.sku=A-1"), { key: "product.sku", path: ["product", "sku"], value: "A-1" });
  assert.equal(parseWhere("note=a=b"), { key: "note", path: ["note"], value: "a=b" });
  assert.equal(parseWhere("style="), { key: "style", path: ["style"], value: "" });
  assert.match(parseWhere("style") as string, "must be key=value, e.g. --where style=studio");
  assert.match(parseWhere("=x") as string, "must be key=value");
  assert.match(parseWhere("product..sku=1") as string, "is not a key");
});

test("parseOnly: commas and repeats are joined, in order, without duplicates; nothing given is undefined", () => {
  assert.equal(parseOnly(["stills,reels", "stills", " posters "]), ["stills", "reels", "posters"]);
  assert.is(parseOnly(undefined), undefined);
  assert.is(parseOnly([]), undefined);
  assert.equal(parseOnly([","]), []);
});

test("fieldOf: own vars first, then the upstream task's vars under item.vars (any depth); a missing path is not found", () => {
  assert.equal(fieldOf(still("A-1", "studio"), ["product", "sku"]), { found: true, value: "A-1" });
  assert.equal(fieldOf(reel("A-1", "street", "calm"), ["product", "sku"]), { found: true, value: "A-1" });
  assert.equal(fieldOf(reel("A-1", "street", "calm"), ["mood"]), { found: true, value: "calm" });
  assert.equal(fieldOf(reel("A-1", "street", "calm"), ["item", "vars", "style"]), { found: true, value: "street" });
  const twoUp = { take: 1, item: { vars: reel("B-2", "studio", "dark") } };
  assert.equal(fieldOf(twoUp, ["product", "sku"]), { found: true, value: "B-2" });
  assert.equal(fieldOf(still("A-1", "studio"), ["product", "price"]), { found: false });
  assert.equal(fieldOf({}, ["style"]), { found: false });
});

test("whereMatches: every clause must hold (AND); numbers and booleans compare by their text; objects never equal a value", () => {
  const v = { ...still("A-1", "studio"), n: 2, on: true };
  assert.ok(whereMatches(v, [w("product.sku=A-1"), w("style=studio")]));
  assert.not.ok(whereMatches(v, [w("product.sku=A-1"), w("style=street")]));
  assert.ok(whereMatches(v, [w("n=2"), w("on=true")]));
  assert.not.ok(whereMatches(v, [w("product=A-1")]));
  assert.not.ok(whereMatches(v, [w("missing=1")]));
  assert.ok(whereMatches(v, []));
});

test("selectsTask: the job must be among --only (when given) and the matrix values must match", () => {
  const s: Selection = { only: ["reels"], where: [w("product.sku=A-1")], failed: false };
  assert.ok(selectsTask(s, { job: "reels", vars: reel("A-1", "studio", "calm") }));
  assert.not.ok(selectsTask(s, { job: "reels", vars: reel("B-2", "studio", "calm") }));
  assert.not.ok(selectsTask(s, { job: "stills", vars: still("A-1", "studio") }));
  assert.ok(selectsTask({ where: [w("style=street")], failed: false }, { job: "reels", vars: reel("C-3", "street", "x") }));
});

test("relevantJobs: the selected jobs and every job upstream of them; no --only: all jobs", () => {
  assert.equal([...relevantJobs({ only: ["reels"], where: [], failed: false }, jobs)].sort(), ["reels", "stills"]);
  assert.equal([...relevantJobs({ only: ["stills"], where: [], failed: false }, jobs)].sort(), ["stills"]);
  assert.equal([...relevantJobs({ where: [], failed: true }, jobs)].sort(), ["posters", "reels", "stills"]);
});

test("keysOf: dotted leaf keys of vars, item left out", () => {
  assert.equal([...keysOf({ ...still("A-1", "studio"), item: { vars: { x: 1 } } })].sort(), ["product.name", "product.sku", "style"]);
});

test("checkSelection: an unknown job names the jobs; an unknown key names the keys; a data row asks for one of its fields; a for_each job's own axis is accepted", () => {
  const keys = new Set(["product.sku", "product.name", "style", "size"]);
  assert.equal(checkSelection({ only: ["reel"], where: [], failed: false }, jobs, keys), [
    "--only: no job 'reel' in the manifest (jobs: stills, reels, posters)",
  ]);
  assert.equal(checkSelection({ where: [w("sku=A-1")], failed: false }, jobs, keys), [
    "--where: no task has the key 'sku' (keys: mood, product.name, product.sku, size, style)",
  ]);
  assert.equal(checkSelection({ where: [w("product=A-1")], failed: false }, jobs, keys), [
    "--where: 'product' is a data row, not a value: use one of its fields (product.name, product.sku)",
  ]);
  assert.equal(checkSelection({ only: ["reels"], where: [w("mood=calm"), w("product.sku=A-1"), w("item.vars.style=x")], failed: false }, jobs, keys), []);
});

test("describeSelection and isWholeRun", () => {
  assert.is(describeSelection({ only: ["a", "b"], where: [w("x=1"), w("y.z=2")], failed: true }), "--only a,b --where x=1 --where y.z=2 --failed");
  assert.ok(isWholeRun(undefined));
  assert.ok(isWholeRun({ where: [], failed: false }));
  assert.not.ok(isWholeRun({ where: [], failed: true }));
});

// ------------------------------------------------------------ plans cut down

const entry = (mark: PlanMark, job: string, vars: Record<string, unknown>, extra: Partial<PlanEntry> = {}): PlanEntry => ({
  mark,
  id: `${job}-${Math.random().toString(36).slice(2, 10)}`,
  job,
  vars,
  ...extra,
});

const planOf = (entries: PlanEntry[]): PlanResult => ({
  manifest: "m.yaml",
  lockfile: "m.lock.json",
  lockfileFound: true,
  entries,
  ...countEntries(entries, jobs.map((j) => j.id)),
});

test("selectPlan --only reels with stills not done: no reels to make, a note says how many stills are done and what to do", () => {
  const plan = planOf([
    entry("=", "stills", still("A-1", "studio"), { state: "downloaded" }),
    entry("+", "stills", still("B-2", "studio")),
    entry("=", "stills", still("C-3", "studio"), { state: "submitted", inFlight: true }),
    entry("…", "reels", {}, { count: 2, note: "waiting on stills" }),
    entry("+", "reels", reel("A-1", "studio", "calm"), { estimate: { currency: "USD", amount: "0.5" } }),
  ]);
  const s = selectPlan(plan, { only: ["reels"], where: [], failed: false }, jobs);
  assert.equal(s.entries.map((e) => e.mark), ["+"]);
  assert.is(s.total["+"], 1);
  assert.is(s.total["…"], 0);
  assert.equal(s.estimate, { USD: "0.5" });
  assert.is(s.notSelected, 5 - 1 - 1 + 2);
  assert.equal(s.notes, [
    "reels needs stills: 1 of 3 stills task(s) are done; reels is made only from those; run stills first (--only stills) or drop --only",
  ]);
  // With the upstream job selected too, its waiting work stays and no note is needed.
  const both = selectPlan(plan, { only: ["stills", "reels"], where: [], failed: false }, jobs);
  assert.is(both.total["…"], 2);
  assert.equal(both.notes, []);
});

test("selectPlan --failed keeps only new attempts of failed tasks; '-' and waiting work are left out", () => {
  const plan = planOf([
    entry("+", "stills", still("A-1", "studio"), { state: "failed", note: "new attempt 2 (--failed)", estimate: { currency: "USD", amount: "0.02" } }),
    entry("=", "stills", still("B-2", "studio"), { state: "failed", note: "failed" }),
    entry("+", "stills", still("C-3", "studio")),
    entry("-", "stills", still("D-4", "studio"), { state: "downloaded" }),
    entry("…", "reels", {}, { count: 3 }),
  ]);
  const s = selectPlan(plan, { where: [], failed: true }, jobs);
  assert.equal(s.entries.map((e) => e.vars["product"]), [{ sku: "A-1", name: "n-A-1" }]);
  assert.equal(s.estimate, { USD: "0.02" });
  assert.is(s.notSelected, 3 + 1 + 3 - 1);
});

test("selectPlan --where narrows waiting downstream work to the share of matching upstream tasks not done yet", () => {
  const plan = planOf([
    entry("+", "stills", still("A-1", "studio")),
    entry("+", "stills", still("A-1", "street")),
    entry("+", "stills", still("B-2", "studio")),
    entry("+", "stills", still("B-2", "street")),
    entry("…", "reels", {}, { count: 8, note: "waiting on stills", estimate: { currency: "USD", amount: "4" } }),
  ]);
  const s = selectPlan(plan, { where: [w("product.sku=A-1")], failed: false }, jobs);
  const waiting = s.entries.find((e) => e.mark === "…")!;
  assert.is(waiting.count, 4);
  assert.equal(waiting.estimate, { currency: "USD", amount: "2" });
  assert.match(waiting.note!, "about 4 of 8 match the --where values");
  assert.is(s.total["+"], 2);
});

// ------------------------------------------------------------ properties

const SKUS = ["A-1", "B-2", "C-3"];
const STYLES = ["studio", "street"];
const MOODS = ["calm", "dark"];
const MARKS: PlanMark[] = ["+", "=", "~", "-"];

const randomPlan = (r: ReturnType<typeof seeded>): PlanResult => {
  const entries: PlanEntry[] = [];
  const n = 1 + r.int(30);
  for (let i = 0; i < n; i++) {
    const job = r.pick(["stills", "reels", "posters"]);
    const vars =
      job === "stills" ? still(r.pick(SKUS), r.pick(STYLES)) : job === "reels" ? reel(r.pick(SKUS), r.pick(STYLES), r.pick(MOODS)) : { size: r.pick(["s", "m"]) };
    const mark = r.pick(MARKS);
    const failed = mark === "+" && r.int(3) === 0;
    entries.push({
      mark,
      id: `${job}-${i}`,
      job,
      vars,
      ...(failed ? { state: "failed" as const } : mark === "=" ? { state: r.pick(["downloaded", "submitted"] as const) } : {}),
      ...(r.int(2) ? { estimate: { currency: "USD", amount: `0.${1 + r.int(9)}` } } : {}),
    });
  }
  return planOf(entries);
};

const randomSelection = (r: ReturnType<typeof seeded>): Selection => {
  const only = r.int(2) ? [r.pick(["stills", "reels", "posters"]), ...(r.int(2) ? [r.pick(["stills", "reels"])] : [])] : undefined;
  const where: WhereClause[] = [];
  if (r.int(2)) where.push(w(`product.sku=${r.pick(SKUS)}`));
  if (r.int(3) === 0) where.push(w(`style=${r.pick(STYLES)}`));
  if (r.int(4) === 0) where.push(w(`mood=${r.pick(MOODS)}`));
  return { ...(only ? { only: [...new Set(only)] } : {}), where, failed: r.int(4) === 0 };
};

test("property: a cut-down plan keeps exactly the entries the rule selects, in order; kept + not selected = all; counts and estimates are those of the kept entries", () => {
  for (let seed = 1; seed <= 400; seed++) {
    const r = seeded(seed);
    const plan = randomPlan(r);
    const s = randomSelection(r);
    const cut = selectPlan(plan, s, jobs);
    const expected = plan.entries.filter((e) => e.mark !== "-" && selectsTask(s, e) && (!s.failed || (e.mark === "+" && e.state === "failed")));
    assert.equal(cut.entries.map((e) => e.id), expected.map((e) => e.id), `seed ${seed}`);
    assert.is(cut.entries.length + cut.notSelected, plan.entries.length, `seed ${seed}`);
    const recount = countEntries(cut.entries, Object.keys(plan.jobs));
    assert.equal(cut.total, recount.total, `seed ${seed}`);
    assert.equal(cut.estimate, recount.estimate, `seed ${seed}`);
    for (const e of cut.entries) {
      if (s.only) assert.ok(s.only.includes(e.job), `seed ${seed}: ${e.id} outside --only`);
      for (const c of s.where) assert.ok(whereMatches(e.vars, [c]), `seed ${seed}: ${e.id} fails ${c.key}`);
    }
  }
});

test("property: selections compose as AND: cutting by A then by B keeps what cutting by A and B at once keeps", () => {
  for (let seed = 1; seed <= 300; seed++) {
    const r = seeded(1000 + seed);
    const plan = randomPlan(r);
    const a = randomSelection(r);
    const b: Selection = { where: randomSelection(r).where, failed: false };
    const both: Selection = { ...a, where: [...a.where, ...b.where] };
    const twice = selectPlan(selectPlan(plan, a, jobs), b, jobs);
    const once = selectPlan(plan, both, jobs);
    assert.equal(twice.entries.map((e) => e.id), once.entries.map((e) => e.id), `seed ${1000 + seed}`);
  }
});

test("property: the whole run (no flags) keeps every entry but '-' ones", () => {
  for (let seed = 1; seed <= 100; seed++) {
    const plan = randomPlan(seeded(5000 + seed));
    const cut = selectPlan(plan, { where: [], failed: false }, jobs);
    assert.equal(cut.entries.map((e) => e.id), plan.entries.filter((e) => e.mark !== "-").map((e) => e.id));
  }
});

test.run();
