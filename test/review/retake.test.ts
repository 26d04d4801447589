// New takes after a rejection in review (`review: { retake_rejected: N }`, issue 31): the
// pure rule (src/review/retake.ts) on its own and as a property against a model, then the
// plan (diffPlan) of a loaded manifest against lockfiles and review decisions: the new
// take is `+` with its estimate and reason, `=` once recorded, its approved output makes
// its clip and the rejected take's makes none; a second rejection with N=1 brings no third
// take and the plan says why; the manifest's errors for a bad value.

import { test } from "uvu";
import * as assert from "uvu/assert";
import { newTakes, type RetakeQuestion } from "../../src/review/retake.js";
import { indexDecisions } from "../../src/review/reviewDecision.js";
import type { ReviewEntry } from "../../src/review/ReviewFile.js";
import { diffPlan, type PlanResult } from "../../src/plan/diffPlan.js";
import { formatPlan } from "../../src/plan/formatPlan.js";
import { loadManifest } from "../../src/manifest/loadManifest.js";
import { ManifestInvalid } from "../../src/manifest/Diagnostic.js";
import type { LoadedManifest } from "../../src/manifest/LoadedManifest.js";
import type { PlannedTask } from "../../src/manifest/PlannedTask.js";
import type { LockFile, LockTask } from "../../src/state/LockFile.js";
import { tempManifest } from "../manifest/tempManifest.js";
import { matchesFilter, parseFilter, type ReviewFilter } from "../../src/review/reviewItems.js";
import { seeded } from "../engine/machine.js";

const ask = (takes: number, allowed: number, rejected: readonly number[], recorded: readonly number[] = []): ReturnType<typeof newTakes> & { asked: number[] } => {
  const asked: number[] = [];
  const q: RetakeQuestion = {
    takes,
    allowed,
    rejected: (t) => {
      asked.push(t);
      return rejected.includes(t);
    },
    recorded: (t) => recorded.includes(t),
  };
  return { ...newTakes(q), asked };
};

test("rule: take 1 rejected with retake_rejected: 1 brings take 2; take 2 rejected too brings no third", () => {
  const first = ask(1, 1, [1]);
  assert.equal(first.takes, [{ take: 2, nth: 1, because: 1 }]);
  assert.equal(first.refused, []);
  const second = ask(1, 1, [1, 2]);
  assert.equal(second.takes, [{ take: 2, nth: 1, because: 1 }]);
  assert.equal(second.refused, [2], "the second rejection is told, with no take");
  assert.equal(second.asked, [1, 2], "a new take is asked about only once it is in the answer");
});

test("rule: nothing rejected, or retake_rejected: 0, brings nothing; N=2 goes on to take 3", () => {
  assert.equal(ask(1, 1, []).takes, []);
  assert.equal(ask(1, 0, [1]).takes, []);
  assert.equal(ask(1, 0, [1]).refused, [], "0: no new takes asked for, so none refused either");
  assert.equal(ask(1, 2, [1, 2]).takes, [{ take: 2, nth: 1, because: 1 }, { take: 3, nth: 2, because: 2 }]);
  assert.equal(ask(1, 2, [1, 2, 3]).refused, [3]);
});

test("rule: with take: 3 the new takes are numbered after the job's own, at most N per combination", () => {
  const a = ask(3, 1, [2]);
  assert.equal(a.takes, [{ take: 4, nth: 1, because: 2 }]);
  const b = ask(3, 1, [1, 3]);
  assert.equal(b.takes, [{ take: 4, nth: 1, because: 1 }]);
  assert.equal(b.refused, [3]);
});

test("rule: a new take recorded before stays when the decision that brought it changed", () => {
  const a = ask(1, 2, [], [2]);
  assert.equal(a.takes, [{ take: 2, nth: 1 }]);
  const b = ask(1, 2, [], [3]);
  assert.equal(b.takes, [{ take: 2, nth: 1 }, { take: 3, nth: 2 }], "every take up to the highest recorded");
  assert.equal(ask(1, 1, [], [3]).takes, [], "a take beyond what N allows is not kept by this rule");
});

test("property: the new takes are K+1..K+m in order, m = min(N, rejections among the takes looked at) or the kept ones; never more than N", () => {
  for (let seed = 1; seed <= 500; seed++) {
    const r = seeded(seed);
    const takes = 1 + r.int(3);
    const allowed = r.int(4);
    const rejected = Array.from({ length: takes + allowed }, (_, i) => i + 1).filter(() => r.int(2) === 0);
    const recorded = Array.from({ length: allowed }, (_, i) => takes + i + 1).filter(() => r.int(4) === 0);
    const a = ask(takes, allowed, rejected, recorded);
    assert.ok(a.takes.length <= allowed, `seed ${seed}: at most N`);
    a.takes.forEach((n, i) => {
      assert.is(n.take, takes + i + 1, `seed ${seed}: numbered in order`);
      assert.is(n.nth, i + 1);
      if (n.because !== undefined) assert.ok(rejected.includes(n.because) && n.because < n.take, `seed ${seed}: brought by an earlier rejected take`);
    });
    // The model: walk the takes in order; each rejection takes one of N.
    let m = 0;
    const refused: number[] = [];
    for (let t = 1; allowed > 0 && t <= takes + m; t++) {
      if (!rejected.includes(t)) continue;
      if (m < allowed) m++;
      else refused.push(t);
    }
    const kept = Math.max(0, ...recorded.map((t) => t - takes));
    assert.ok(a.takes.length >= Math.min(allowed, m), `seed ${seed}: every rejection with one left brings a take`);
    if (kept <= m) {
      assert.is(a.takes.length, m, `seed ${seed}`);
      assert.equal(a.refused, refused, `seed ${seed}: the rejections past N are told`);
    } else assert.ok(a.takes.length >= kept, `seed ${seed}: recorded takes are kept`);
    assert.ok(a.asked.every((t) => t <= takes + a.takes.length), `seed ${seed}: no take asked about before it is planned`);
  }
});

// ---------------------------------------------------------------- the plan

const manifest = (review = "{ retake_rejected: 1 }", take = "") => `version: 1
name: p
prices: { currency: USD, image: { "1k": 0.25 }, video: { "720p": 0.1 } }
jobs:
  pics:
    kind: image
    review: ${review}
${take}    matrix: { c: [red, green] }
    prompt: "a {{ c }} mug"
  clips:
    kind: video
    for_each: pics.outputs
    first_frame: "{{ item.url }}"
    prompt: "it turns"
`;

const load = async (yaml: string): Promise<LoadedManifest> => {
  const m = tempManifest(yaml);
  try {
    return await loadManifest(m.file);
  } finally {
    m.cleanup();
  }
};

const sha = (c: string) => c.repeat(64);

const recordOf = (t: PlannedTask, file: string | undefined): LockTask => ({
  job: t.job,
  kind: t.kind,
  vars: t.vars,
  dir: t.dir,
  request_hash: t.requestHash,
  take: t.take,
  attempt: t.attempt,
  state: file ? "downloaded" : "processing",
  updated_at: 1,
  outputs: file ? [{ type: "image", index: 0, variant: "main", path: `${t.dir}/image-1.png`, sha256: sha(file) }] : [],
  billing: [],
  ...(t.upstream ? { upstream: t.upstream } : {}),
});

const lockOf = (records: [PlannedTask, string | undefined][]): LockFile => ({
  lockfile_version: 1,
  name: "p",
  tasks: Object.fromEntries(records.map(([t, f]) => [t.id, recordOf(t, f)])),
});

const decide = (list: [PlannedTask, string, "approved" | "rejected"][]) =>
  indexDecisions({ version: 1, outputs: list.map(([t, f, decision]): ReviewEntry => ({ task: t.id, output: 0, sha256: sha(f), decision, at: "2026-12-07T00:00:00.000Z" })) });

const picsOf = (plan: PlanResult) => plan.entries.filter((e) => e.job === "pics");

test("plan: a rejected still gets its new take as + with the estimate and the reason; the rest as before", async () => {
  const m = await load(manifest());
  const [red, green] = m.tasks;
  const lock = lockOf([[red!, "a"], [green!, "b"]]);
  const plan = diffPlan(m, lock, { reviews: decide([[red!, "a", "rejected"], [green!, "b", "approved"]]) });
  const retake = m.withTake(red!, 2);
  const plus = picsOf(plan).filter((e) => e.mark === "+");
  assert.is(plus.length, 1);
  assert.is(plus[0]!.id, retake.id);
  assert.is(plus[0]!.task!.take, 2);
  assert.equal(plus[0]!.vars, red!.vars, "the same combination");
  assert.is(plus[0]!.dir, `${red!.dir}-take-2`, "a folder beside the first take's");
  assert.is(plus[0]!.note, "new take: take 1 rejected in review (1 of retake_rejected: 1)");
  assert.equal(plus[0]!.estimate, { currency: "USD", amount: "0.25" });
  assert.equal(plan.estimate, { USD: "0.75" }, "the new take (0.25) and the approved still's clip (0.5)");
  assert.equal(plan.retakes?.map((t) => t.id), [retake.id]);
  assert.is((retake.request as { external_task_id?: string }).external_task_id, retake.id);
  assert.not.equal(retake.id, red!.id);
  const clips = plan.entries.filter((e) => e.job === "clips");
  assert.equal(clips.filter((e) => e.mark === "+").map((e) => e.task!.upstream!.task), [green!.id], "no clip of the rejected still");
  assert.equal(clips.filter((e) => e.mark === "…").map((e) => e.count), [1], "the new take's clip waits for it");
  const text = formatPlan(plan, { manifest: "p.yaml", lockfile: "p.lock.json" });
  assert.match(text, `+ ${retake.id}  ${red!.dir}-take-2/image-1.png  (new take: take 1 rejected in review (1 of retake_rejected: 1); ~0.25 USD)`);
});

test("plan: the new take made is = (created once); approved, its clip is made and the rejected take's is not", async () => {
  const m = await load(manifest());
  const [red, green] = m.tasks;
  const retake = m.withTake(red!, 2);
  const lock = lockOf([[red!, "a"], [green!, "b"], [retake, "c"]]);
  const awaiting = diffPlan(m, lock, { reviews: decide([[red!, "a", "rejected"], [green!, "b", "approved"]]) });
  assert.equal(picsOf(awaiting).map((e) => e.mark), ["=", "=", "="]);
  assert.is(awaiting.total["+"], 1, "only the approved still's clip");
  assert.equal(awaiting.review?.["pics"], { awaiting: 1, approved: 1, rejected: 1 }, "the new take awaits review");
  assert.equal(awaiting.review?.["clips"], { waitingOnReview: 1 });

  const approved = diffPlan(m, lock, { reviews: decide([[red!, "a", "rejected"], [green!, "b", "approved"], [retake, "c", "approved"]]) });
  const clips = approved.entries.filter((e) => e.job === "clips" && e.mark === "+");
  assert.equal(clips.map((e) => e.task!.upstream!.task).sort(), [green!.id, retake.id].sort(), "the new take's clip, never the rejected one's");
  assert.is(approved.entries.filter((e) => e.mark === "-").length, 0, "the new take's record is current, not orphaned");
  assert.is(approved.total["…"], 0);
});

test("plan: a second rejection with retake_rejected: 1 makes no third take, and the plan says why", async () => {
  const m = await load(manifest());
  const [red, green] = m.tasks;
  const retake = m.withTake(red!, 2);
  const lock = lockOf([[red!, "a"], [green!, "b"], [retake, "c"]]);
  const plan = diffPlan(m, lock, { reviews: decide([[red!, "a", "rejected"], [green!, "b", "approved"], [retake, "c", "rejected"]]) });
  assert.is(plan.total["+"], 1, "the approved still's clip only");
  assert.equal(plan.retakes?.map((t) => t.id), [retake.id], "no third take");
  const told = plan.entries.filter((e) => e.noNewTake);
  assert.equal(told.map((e) => e.id), [retake.id]);
  assert.is(told[0]!.note, "take 2 rejected in review: no new take (retake_rejected: 1 per combination, made or planned already)");
  const text = formatPlan(plan, { manifest: "p.yaml", lockfile: "p.lock.json" });
  assert.match(text, `= ${retake.id}  ${red!.dir}-take-2  (downloaded; take 2 rejected in review: no new take`);
  assert.match(text, "= 2 unchanged");
  assert.is(plan.total["…"], 0, "no clip waits for the rejected takes");
});

test("plan: review: true, or no decision, plans no new take (no id is worked out for them)", async () => {
  const plain = await load(manifest("true"));
  const [red, green] = plain.tasks;
  const lock = lockOf([[red!, "a"], [green!, "b"]]);
  const reviews = decide([[red!, "a", "rejected"]]);
  assert.is(diffPlan(plain, lock, { reviews }).retakes, undefined);
  assert.is(diffPlan(plain, lock, { reviews }).total["+"], 0);
  const m = await load(manifest());
  assert.is(diffPlan(m, lock, { reviews: new Map() }).retakes, undefined);
  assert.is(diffPlan(m, lock).total["+"], 0);
});

test("plan: with take: 2 the new take is take 3, in the takes' folder", async () => {
  const m = await load(manifest("{ retake_rejected: 1 }", "    take: 2\n"));
  const [red1, red2] = m.tasks;
  assert.is(red1!.dir, "pics/red/take-1");
  const lock = lockOf(m.tasks.map((t) => [t, t.id.slice(-1)]));
  const plan = diffPlan(m, lock, { reviews: decide([[red2!, red2!.id.slice(-1), "rejected"]]) });
  const plus = picsOf(plan).filter((e) => e.mark === "+");
  assert.equal(plus.map((e) => [e.task!.take, e.dir, e.note]), [[3, "pics/red/take-3", "new take: take 2 rejected in review (1 of retake_rejected: 1)"]]);
  assert.is(m.withTake(red1!, 3).id, plus[0]!.id, "the same id from any take of the combination");
});

test("manifest: retake_rejected must be a whole number from 0 to 10 under review, and only on a job without for_each", async () => {
  const errorOf = async (yaml: string): Promise<string> => {
    try {
      await load(yaml);
    } catch (error) {
      if (error instanceof ManifestInvalid) return error.diagnostics.map((d) => `${d.line}:${d.col}: ${d.message}`).join("\n");
      throw error;
    }
    return "";
  };
  assert.match(await errorOf(manifest("{ retake_rejected: -1 }")), "7:32: jobs.pics.review.retake_rejected must be at least 0");
  assert.match(await errorOf(manifest("{ retake_rejected: 1.5 }")), "jobs.pics.review.retake_rejected must be an integer");
  assert.match(await errorOf(manifest("{ retake_rejected: 11 }")), "jobs.pics.review.retake_rejected must be at most 10");
  assert.match(await errorOf(manifest("{ retakes: 1 }")), "unknown key 'retakes' in jobs.pics.review; allowed: retake_rejected");
  assert.match(await errorOf(manifest("{}")), "jobs.pics.review is missing the required key 'retake_rejected'");
  const downstream = manifest("true").replace("    for_each: pics.outputs\n", "    for_each: pics.outputs\n    review: { retake_rejected: 1 }\n");
  assert.match(await errorOf(downstream), "retake_rejected: new takes are planned only for a job without for_each");
  assert.is(await errorOf(manifest("{ retake_rejected: 0 }")), "");
  const zero = await load(manifest("{ retake_rejected: 0 }"));
  assert.is(zero.jobs[0]!.review, true, "retake_rejected: 0 is review: true");
  assert.is(zero.jobs[0]!.retakeRejected, undefined);
});

test("review filter: take=2 names the new take (same matrix values as the rejected one), unless the matrix has a value called take", () => {
  const filter = parseFilter("pics c=red take=2") as ReviewFilter;
  assert.ok(matchesFilter({ job: "pics", vars: { c: "red" }, take: 2 }, filter));
  assert.not.ok(matchesFilter({ job: "pics", vars: { c: "red" }, take: 1 }, filter));
  assert.ok(matchesFilter({ job: "pics", vars: { c: "red" }, take: 1 }, parseFilter("pics c=red") as ReviewFilter), "without take=, every take matches");
  assert.ok(matchesFilter({ job: "pics", vars: { c: "red", take: "2" }, take: 1 }, filter), "a matrix value called take is the value compared");
});

test.run();
