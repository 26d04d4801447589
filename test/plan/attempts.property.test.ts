// The plan and the run agree on what is created, checked over generated lockfiles (seeded,
// reproducible: a failure names its seed). Each case writes a manifest of two image jobs
// (random retry_failed and retry_content_risk), a lockfile whose tasks have random
// histories of attempts (failed for content risk or not, abandoned at another service,
// refused, only planned, downloaded with its file on disk), and picks a selection (the
// whole run, --only one job, --failed, or both). A model written here from the rules
// (docs/guarantees.md: retries, --failed, --switch-service) says which attempt of each
// task is to be created; then:
//  1. the plan (diffPlan, cut to the selection) marks exactly those to create (`+`);
//  2. a real run against the emulator over loopback creates exactly the plan's tasks at
//     its start (the same ids, so the same attempts), and the start event's totals are
//     the plan's counts (runTotals);
//  3. the event sequences: the emulator fails some created tasks (content risk, at random,
//     seeded); every create beyond the plan's is the next attempt of a task whose attempt
//     failed in this run with a retry left (the model's rule), and each id is created once.
// DEBUG_SEED=<n> runs only that seed.

import { mkdirSync, writeFileSync } from "node:fs";
import { createHash } from "node:crypto";
import { dirname, join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { startEmulator } from "../../src/emulator/Emulator.js";
import { loadManifest } from "../../src/manifest/loadManifest.js";
import type { LoadedManifest } from "../../src/manifest/LoadedManifest.js";
import type { PlannedTask } from "../../src/manifest/PlannedTask.js";
import { diffPlan, walksOf, type PlanResult } from "../../src/plan/diffPlan.js";
import { runTotals } from "../../src/plan/runTotals.js";
import { renewFailedOf, selectPlan, selectsTask, type Selection } from "../../src/plan/selection.js";
import { runSelectionOf } from "../../src/cli/selectionFlags.js";
import { makePolicy } from "../../src/policy/Policy.js";
import type { RunEvent } from "../../src/engine/RunEvent.js";
import { runLoadedManifest } from "../../src/run/runLoadedManifest.js";
import { serviceIdentity } from "../../src/run/serviceCheck.js";
import { encodeLockFile } from "../../src/state/LockfileText.js";
import { readLockFile } from "../../src/state/readLockFile.js";
import type { LockFile, LockTask } from "../../src/state/LockFile.js";
import { tempManifest } from "../manifest/tempManifest.js";

/** A small seeded generator (mulberry32). */
const seeded = (seed: number) => {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return { int: (n: number) => Math.floor(next() * n), chance: (p: number) => next() < p, pick: <T>(xs: readonly T[]) => xs[Math.floor(next() * xs.length)]! };
};

type Step = "failed" | "risk" | "abandoned" | "rejected" | "planned" | "downloaded";
/** Steps the rules walk past (any attempt but the last); the last may be any. */
const PASSED: readonly Step[] = ["failed", "risk", "abandoned"];
const LAST: readonly Step[] = ["failed", "risk", "abandoned", "rejected", "planned", "downloaded", "failed", "risk"];

interface Job {
  readonly retryFailed: number;
  readonly contentRisk: boolean;
}

const yamlOf = (name: string, jobs: Record<string, Job>) =>
  [
    "version: 1",
    `name: ${name}`,
    "jobs:",
    ...Object.entries(jobs).flatMap(([id, j]) => [
      `  ${id}:`,
      "    kind: image",
      "    matrix: { c: [red, green, blue] }",
      `    prompt: "a {{ c }} ${id}"`,
      `    retry_failed: ${j.retryFailed}`,
      `    retry_content_risk: ${j.contentRisk}`,
    ]),
    "",
  ].join("\n");

/** The record of attempt `task` in state `step`; a downloaded one has its file written under `outputs`. */
const recordOf = (task: PlannedTask, step: Step, outputs: string): LockTask => {
  const base = { job: task.job, kind: task.kind, vars: task.vars, dir: task.dir, request_hash: task.requestHash, take: task.take, attempt: task.attempt, updated_at: 1_700_000_000_000, billing: [] };
  switch (step) {
    case "failed":
    case "risk":
      return {
        ...base,
        state: "failed",
        task_id: `old-${task.id}`,
        outputs: [],
        error: step === "risk" ? { code: 1301, message: "content risk", at: 1 } : { code: 5000, message: "internal error", at: 1 },
      };
    case "abandoned":
      return { ...base, state: "processing", task_id: `old-${task.id}`, outputs: [], abandoned: { service: "https://api-other.example.com", at: 1 } };
    case "rejected":
      return { ...base, state: "rejected", outputs: [], error: { code: 1201, message: "prompt refused", at: 1 } };
    case "planned":
      return { ...base, state: "planned", outputs: [] };
    case "downloaded": {
      const bytes = Buffer.from(`image of ${task.id}`);
      const path = `${task.dir}/image-1.png`;
      mkdirSync(dirname(join(outputs, path)), { recursive: true });
      writeFileSync(join(outputs, path), bytes);
      const sha256 = createHash("sha256").update(bytes).digest("hex");
      return { ...base, state: "downloaded", task_id: `old-${task.id}`, outputs: [{ type: "image", index: 0, variant: "main", path, size: bytes.length, sha256 }] };
    }
  }
};

/**
 * The model: the attempt of a task with this history to create now, if any, and whether
 * the walk passed a failed attempt. Written from the rules, not from src/plan/attempts.ts.
 */
const model = (history: readonly Step[], job: Job, renew: boolean): { create?: number; pastFailed: boolean; failedForGood: boolean; downloaded: boolean; firstAttempt: number } => {
  let passed = 0; // attempts abandoned elsewhere: they use up no retry
  let pastFailed = false;
  for (let i = 1; ; i++) {
    const step = history[i - 1];
    if (step === undefined) return { create: i, pastFailed, failedForGood: false, downloaded: false, firstAttempt: 1 + passed };
    if (step === "abandoned") {
      passed++;
      continue;
    }
    if (step === "downloaded") return { pastFailed, failedForGood: false, downloaded: true, firstAttempt: 1 + passed };
    if (step === "rejected" || step === "planned") return { create: i, pastFailed, failedForGood: false, downloaded: false, firstAttempt: 1 + passed };
    const retriesUsed = i - 1 - passed;
    const retryLeft = retriesUsed < job.retryFailed && (job.contentRisk || step !== "risk");
    if (retryLeft || renew || i < history.length) {
      pastFailed = true;
      continue;
    }
    return { pastFailed, failedForGood: true, downloaded: false, firstAttempt: 1 + passed };
  }
};

const policy = makePolicy(0.02);

const runCase = async (seed: number): Promise<void> => {
  const r = seeded(seed);
  const jobs: Record<string, Job> = {
    pics: { retryFailed: r.int(3), contentRisk: r.chance(0.5) },
    shots: { retryFailed: r.int(3), contentRisk: r.chance(0.5) },
  };
  const name = `prop${seed}`;
  const m = tempManifest(yamlOf(name, jobs));
  // The emulator fails some tasks (content risk): the run's own failures, retried or not.
  const emu = await startEmulator({ seed, timing: { scale: 0.05 }, failure: { rate: r.pick([0, 0.3, 0.6]) } }, { port: 0 });
  try {
    const manifest: LoadedManifest = await loadManifest(m.file);
    const selection: Selection = { ...(r.chance(0.3) ? { only: [r.pick(["pics", "shots"])] } : {}), where: [], failed: r.chance(0.35) };
    const whole = selection.only === undefined && !selection.failed;
    const histories = new Map<string, Step[]>();
    const tasks: Record<string, LockTask> = {};
    for (const task of manifest.tasks) {
      const n = r.int(4);
      const history: Step[] = [];
      for (let i = 1; i <= n; i++) history.push(i < n ? r.pick(PASSED) : r.pick(LAST));
      histories.set(task.id, history);
      history.forEach((step, i) => {
        const attempt = manifest.withAttempt(task, i + 1);
        tasks[attempt.id] = recordOf(attempt, step, manifest.outputsDir);
      });
    }
    writeFileSync(manifest.lockfilePath, encodeLockFile(name, tasks, serviceIdentity(emu.url)));
    const lock: LockFile = (await readLockFile(manifest.lockfilePath))!;
    const described = `seed ${seed}: ${JSON.stringify({ jobs, selection, histories: [...histories.values()] })}`;

    // The model's creates at the start.
    const expected = new Map<string, { task: PlannedTask; firstAttempt: number }>();
    let done = 0;
    let failedForGood = 0;
    for (const task of manifest.tasks) {
      const selected = selectsTask(selection, task);
      const said = model(histories.get(task.id)!, jobs[task.job]!, selected && selection.failed);
      if (said.downloaded) done++;
      if (said.failedForGood) failedForGood++;
      if (said.create !== undefined && selected && (!selection.failed || said.pastFailed)) {
        expected.set(manifest.withAttempt(task, said.create).id, { task, firstAttempt: said.firstAttempt });
      }
    }

    // 1. The plan.
    const full = diffPlan(manifest, lock, renewFailedOf(selection, (t) => selectsTask(selection, t)));
    const plan: PlanResult = whole ? full : selectPlan(full, selection, manifest.jobs);
    const toCreate = plan.entries.filter((e) => e.mark === "+" || e.mark === "~").map((e) => e.id);
    assert.equal(toCreate.sort(), [...expected.keys()].sort(), `the plan's + are the model's creates (${described})`);
    // What the engine admits at the start is the plan's walk of each manifest task (no walk of its own):
    // every walk lines up with its task, and the walks of the selected tasks reach the model's attempts.
    const walks = walksOf(full, manifest.tasks);
    assert.ok(walks !== undefined, `the plan's walks line up with the manifest's tasks (${described})`);
    for (const w of walks!) {
      const want = [...expected].find(([, x]) => x.task.id === w.planned.id);
      if (want !== undefined) {
        assert.is(w.task.id, want[0], `${w.planned.id}: the plan's walk reaches the attempt to create (${described})`);
        assert.is(w.firstAttempt, want[1].firstAttempt, `${w.planned.id}: retries count from the same attempt (${described})`);
        assert.is(w.record, lock.tasks[w.task.id], `${w.planned.id}: the walk carries the lockfile's record (${described})`);
      }
    }

    // 2. The run.
    const events: RunEvent[] = [];
    const summary = await runLoadedManifest(manifest, {
      baseUrl: emu.url,
      env: { OMNIBATCH_API_KEY: emu.apiKey },
      policy,
      reports: false,
      callbacks: false,
      maxWaitMs: 60_000,
      ...(whole ? {} : { selection: runSelectionOf(selection, manifest) }),
      onEvent: (e) => (events.push(e), process.env["DEBUG_EVENTS"] && console.log(JSON.stringify(e))),
    });
    assert.ok(summary.outcome !== "pending", `the run ended (${summary.outcome}; ${described})`);
    const start = events.find((e) => e.type === "start");
    assert.ok(start && start.type === "start" && start.totals, described);
    // A run of a chosen part counts from the whole plan what it does (and what stays done or failed).
    const totals = runTotals(full, false, whole ? undefined : runSelectionOf(selection, manifest).keeps);
    if (start?.type === "start") {
      assert.equal(start.totals, totals.jobs, `start totals are the plan's counts (${described})`);
      const sum = (k: "toCreate" | "done" | "failed") => Object.values(start.totals ?? {}).reduce((n, c) => n + c[k], 0);
      assert.is(sum("toCreate"), expected.size, `to create at the start (${described})`);
      assert.is(sum("done"), done, `done at the start (${described})`);
      assert.is(sum("failed"), failedForGood, `failed for good at the start (${described})`);
      // The buckets the view is told up front (startBuckets) are the same counts, position by position.
      const told = new Map<string, Record<"done" | "inFlight" | "failed", number>>();
      for (const task of manifest.tasks) {
        const b = start.startBuckets?.(task.job, task.dir);
        const c = told.get(task.job) ?? { done: 0, inFlight: 0, failed: 0 };
        if (b !== undefined) c[b]++;
        told.set(task.job, c);
      }
      for (const [job, c] of Object.entries(start.totals ?? {})) {
        assert.equal(told.get(job) ?? { done: 0, inFlight: 0, failed: 0 }, { done: c.done, inFlight: c.inFlight, failed: c.failed }, `${job}: start buckets per position are the start's counts (${described})`);
      }
    }

    // 3. What the emulator was asked to create: the plan's, then next attempts of this run's failures.
    const creates = emu.stats().creates;
    for (const [id, n] of Object.entries(creates)) assert.is(n, 1, `${id} created once (${described})`);
    const after = (await readLockFile(manifest.lockfilePath))!;
    const allowed = new Set(expected.keys());
    for (const [id, { task, firstAttempt }] of expected) {
      // Down the chain of this run's attempts: a failed one with a retry left is followed by the next.
      let current = id;
      for (let guard = 0; guard < 10; guard++) {
        const rec = after.tasks[current];
        if (rec?.state !== "failed") break;
        const job = jobs[task.job]!;
        const used = rec.attempt - firstAttempt;
        const risk = rec.error !== undefined && (rec.error.code === 1301 || /risk/i.test(rec.error.message));
        if (!(used < job.retryFailed && (job.contentRisk || !risk))) break;
        current = manifest.withAttempt(task, rec.attempt + 1).id;
        allowed.add(current);
        assert.ok(creates[current] === 1, `${current}: the retry of a failure in this run was created (${described})`);
      }
    }
    assert.equal(Object.keys(creates).sort(), [...allowed].sort(), `created: the plan's and the retries of this run's failures (${described})`);
  } finally {
    await emu.close();
    m.cleanup();
  }
};

const only = process.env["DEBUG_SEED"];
const seeds = only !== undefined ? [Number(only)] : Array.from({ length: Number(process.env["SEEDS"] ?? 16) }, (_, i) => 1000 + i * 7);

test("the engine creates exactly what the plan marks to create, and starts from the plan's counts", async () => {
  for (const seed of seeds) await runCase(seed);
});

test.run();
