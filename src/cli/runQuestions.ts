// What `run` says and asks once the run has made its plan (src/run/prepareRun.ts calls
// it with that plan and the lockfile it was made from, before anything changes or is
// sent): what a chosen part will create and cost, the question before spending (a person
// at a terminal, a real service), and what --recreate-lost will pay for again.

import type { ConfirmPlan } from "../run/prepareRun.js";
import type { LoadedManifest } from "../manifest/LoadedManifest.js";
import type { Selection } from "../plan/selection.js";
import { budgetOutlook } from "../plan/budgetOutlook.js";
import { recreatePlan } from "../run/recreatePlan.js";
import { resultsAt } from "../outputs/resultsAt.js";
import type { CommandIO } from "./Command.js";
import { askYesNo, recreateQuestion, spendQuestion } from "./confirmSpend.js";
import { cutPlan, selectionLines } from "./selectionFlags.js";

export interface RunQuestions {
  readonly io: CommandIO;
  readonly loaded: LoadedManifest;
  readonly selection: Selection | undefined;
  readonly json: boolean;
  readonly quiet: boolean;
  readonly emulate: boolean;
  readonly yes: boolean;
  readonly recreateLost: boolean;
}

export const runQuestions = (q: RunQuestions): ConfirmPlan => async (plan, lock) => {
  const { io, loaded } = q;
  // A chosen part: checked against the manifest (an unknown job or key: exit 2), and what it will create and cost.
  const chosen = q.selection ? cutPlan("run", loaded, plan, q.selection) : plan;
  if (q.selection) {
    for (const message of selectionLines(chosen)) {
      if (q.json) io.stdout.write(`${JSON.stringify({ type: "notice", at: new Date().toISOString(), level: "info", message })}\n`);
      else if (!q.quiet) io.stderr.write(`${message}\n`);
    }
  }
  // Ask before spending: only a person at a terminal, only when money can go out.
  const terminal = !q.yes && !q.json && !!io.stdout.isTTY && !!io.stdin?.isTTY;
  if (!q.emulate && terminal) {
    const question = spendQuestion(chosen, loaded.budget ? budgetOutlook(chosen, lock, loaded.budget) : undefined);
    if (question !== undefined && !(await askYesNo(question, io.stdin!, io.stdout))) return false;
  }
  // Paying again for lost results: only when asked, shown first, confirmed on a terminal.
  if (q.recreateLost && !q.emulate) {
    // With outputs in a store, its listing says what is there (one that cannot be listed: exit 2, nothing sent).
    const at = await resultsAt(loaded.outputsDir, io.env);
    const question = recreateQuestion(recreatePlan(loaded, lock, Date.now(), at), terminal);
    if (question !== undefined && !q.json) {
      if (question.endsWith("[y/N] ")) return askYesNo(question, io.stdin!, io.stdout);
      io.stdout.write(question);
    }
  }
  return true;
};
