// Whether a failed task is tried again on its own: one rule (retryRule.ts) that the plan
// (diffPlan, so the start's totals), the engine (taskRules.retryAllowed, asked at
// admission and when an answer says failed) and the failure report (groupFailures) all
// follow. Unit cases, then every combination of failure kind, retry_failed,
// retry_content_risk and attempts made: the three say the same of each.

import { test } from "uvu";
import * as assert from "uvu/assert";
import { diffPlan } from "../../src/plan/diffPlan.js";
import { loadManifest } from "../../src/manifest/loadManifest.js";
import type { LoadedManifest } from "../../src/manifest/LoadedManifest.js";
import { mayRetry } from "../../src/plan/retryRule.js";
import { runTotals } from "../../src/plan/runTotals.js";
import { groupFailures } from "../../src/report/failureGroups.js";
import { shapeOf } from "../../src/report/manifestLocations.js";
import { retryAllowed } from "../../src/engine/taskRules.js";
import type { LockFile, LockTask } from "../../src/state/LockFile.js";
import { makeTable } from "../engine/machine.js";
import { tempManifest } from "../manifest/tempManifest.js";

const risk = { code: 1301, message: "content risk" };
const riskByWords = { message: "Task failed: the content was flagged by the platform's content-risk review (emulated)." };
const other = { code: 5000, message: "internal error" };

test("mayRetry: retries left and not content risk; content risk only with retry_content_risk", () => {
  assert.is(mayRetry({ retryFailed: 1, retryContentRisk: false }, 0, other), true);
  assert.is(mayRetry({ retryFailed: 1, retryContentRisk: false }, 1, other), false, "no retry left");
  assert.is(mayRetry({ retryFailed: 0, retryContentRisk: true }, 0, risk), false, "retry_content_risk gives no retry of its own");
  assert.is(mayRetry({ retryFailed: 2, retryContentRisk: false }, 0, risk), false);
  assert.is(mayRetry({ retryFailed: 2, retryContentRisk: false }, 0, riskByWords), false, "known by its words too");
  assert.is(mayRetry({ retryFailed: 2, retryContentRisk: true }, 0, risk), true);
  assert.is(mayRetry({ retryFailed: 1, retryContentRisk: false }, 0, undefined), true, "no reason recorded: not content risk");
});

const manifestText = (retryFailed: number, contentRisk: boolean) => `version: 1
name: r
jobs:
  pics:
    kind: image
    prompt: "a mug"
    retry_failed: ${retryFailed}
${contentRisk ? "    retry_content_risk: true\n" : ""}`;

const load = async (yaml: string): Promise<LoadedManifest> => {
  const m = tempManifest(yaml);
  try {
    return await loadManifest(m.file);
  } finally {
    m.cleanup();
  }
};

/** A lockfile where attempts 1..made of the manifest's one task all failed with `error`. */
const failedChain = (m: LoadedManifest, made: number, error: { code?: number; message: string }): LockFile => {
  const tasks: Record<string, LockTask> = {};
  for (let a = 1; a <= made; a++) {
    const t = m.withAttempt(m.tasks[0]!, a);
    tasks[t.id] = {
      job: t.job,
      kind: t.kind,
      vars: t.vars,
      dir: t.dir,
      request_hash: t.requestHash,
      take: t.take,
      attempt: a,
      state: "failed",
      updated_at: 1,
      outputs: [],
      billing: [],
      error: { ...error, at: 1 },
    };
  }
  return { lockfile_version: 1, name: "r", tasks };
};

test("every failure kind, retry_failed 0-3, retry_content_risk on and off, 1-4 attempts made: plan, start totals, engine and failure report agree", async () => {
  const kinds = { risk, riskByWords, other, noReason: { message: "failed (no reason given)" } };
  let cases = 0;
  for (const retryFailed of [0, 1, 2, 3]) {
    for (const contentRisk of [false, true]) {
      const m = await load(manifestText(retryFailed, contentRisk));
      const table = makeTable({ retryFailedOf: (job) => m.jobs.find((j) => j.id === job)?.retryFailed });
      for (const [kind, error] of Object.entries(kinds)) {
        for (let made = 1; made <= 4; made++) {
          const what = `${kind}, retry_failed ${retryFailed}, retry_content_risk ${contentRisk}, ${made} attempt(s) made`;
          const latest = m.withAttempt(m.tasks[0]!, made);
          const engine = retryAllowed(table, latest, 1, "code" in error ? error.code : undefined, error.message);
          const lock = failedChain(m, made, error);
          const plan = diffPlan(m, lock);
          const entry = plan.entries.find((e) => e.job === "pics")!;
          assert.is(entry.mark === "+", engine, `plan: ${what}`);
          if (engine) assert.is(entry.id, m.withAttempt(m.tasks[0]!, made + 1).id, what);
          const totals = runTotals(plan);
          assert.equal(totals.resume, { done: 0, inFlight: 0, failed: engine ? 0 : 1, toCreate: engine ? 1 : 0 }, `start totals: ${what}`);
          const report = groupFailures(lock, shapeOf(m)).groups.flatMap((g) => g.tasks);
          assert.equal(report.map((t) => t.again), [engine], `failure report: ${what}`);
          // The reference: what the service's answer allows, by the rule as the README states it.
          const expected = made - 1 < retryFailed && (contentRisk || kind === "other" || kind === "noReason");
          assert.is(engine, expected, `engine: ${what}`);
          cases++;
        }
      }
    }
  }
  assert.is(cases, 128);
});

test("a content-risk failure with retries left but no retry_content_risk stays = with a note saying why", async () => {
  const m = await load(manifestText(2, false));
  const entry = diffPlan(m, failedChain(m, 1, risk)).entries[0]!;
  assert.is(entry.mark, "=");
  assert.match(entry.note!, "content risk: not retried without retry_content_risk");
  // --failed still gives it a new attempt: that is the person's choice.
  const renewed = diffPlan(m, failedChain(m, 1, risk), { renewFailed: () => true }).entries[0]!;
  assert.is(renewed.mark, "+");
  assert.match(renewed.note!, "(--failed)");
});

test.run();
