// The pure parts of the GitHub integration: escaping of workflow commands, annotation
// lines for diagnostics, lockfile problems and failed tasks, the exit mapping for a
// scheduler, and the plan's estimate against the budget.

import { suite } from "uvu";
import * as assert from "uvu/assert";
import { annotationPath, diagnosticAnnotations, failureAnnotations, lockfileAnnotation } from "../../src/ci/annotations.js";
import { planSummaryMarkdown, planVerdict } from "../../src/ci/planSummary.js";
import { firstErrorLine, spendLine, stepResult } from "../../src/ci/stepResult.js";
import { addMask, annotation, escapeData, escapeProperty, fileCommandEntry } from "../../src/ci/workflowCommand.js";
import type { RunSummary } from "../../src/engine/RunEvent.js";
import { parseFileCommands } from "./runAction.js";

const t = suite("GitHub workflow commands");

t("escapeData escapes %, CR and LF (in that order, so %0A in the text stays literal)", () => {
  assert.is(escapeData("50% done\r\nnext %0A"), "50%25 done%0D%0Anext %250A");
  assert.is(escapeData("a: b, c"), "a: b, c");
});

t("escapeProperty also escapes : and ,", () => {
  assert.is(escapeProperty("C:\\dir,x%\n"), "C%3A\\dir%2Cx%25%0A");
});

t("annotation: level, properties in GitHub's order, skipping empty ones; message escaped", () => {
  assert.is(annotation("error", "bad\nvalue", { file: "a,b.yaml", line: 3, col: 5, title: "t: x" }), "::error file=a%2Cb.yaml,line=3,col=5,title=t%3A x::bad%0Avalue");
  assert.is(annotation("warning", "w"), "::warning::w");
  assert.is(annotation("notice", "n", { file: "", line: 0 }), "::notice::n");
  assert.is(addMask("k%1"), "::add-mask::k%251");
});

t("fileCommandEntry: one line as name=value, several lines as a heredoc the runner parses back exactly", () => {
  assert.is(fileCommandEntry("a", "1", () => "EOF"), "a=1\n");
  const text = fileCommandEntry("list", "x\ny", () => "ghadelimiter_1") + fileCommandEntry("b", "2", () => "unused");
  assert.is(text, "list<<ghadelimiter_1\nx\ny\nghadelimiter_1\nb=2\n");
  assert.equal(parseFileCommands(text), { list: "x\ny", b: "2" });
  let n = 0;
  assert.is(fileCommandEntry("c", "D0\nD1", () => `D${n++}`), "c<<D2\nD0\nD1\nD2\n", "a delimiter found in the value is never used");
});

t("annotationPath: relative to the workspace with forward slashes; absolute when outside it", () => {
  assert.is(annotationPath("m.yaml", { cwd: "/repo/sub", workspace: "/repo" }), "sub/m.yaml");
  assert.is(annotationPath("/repo/a/m.yaml", { cwd: "/elsewhere", workspace: "/repo" }), "a/m.yaml");
  assert.is(annotationPath("/other/m.yaml", { cwd: "/repo", workspace: "/repo" }), "/other/m.yaml");
  assert.is(annotationPath("m.yaml", { cwd: "/repo" }), "m.yaml");
});

t("diagnosticAnnotations: one per diagnostic, in file and line order, with its severity and place", () => {
  const lines = diagnosticAnnotations(
    [
      { severity: "warning", file: "m.yaml", line: 9, col: 3, message: "w: 1, 2" },
      { severity: "error", file: "m.yaml", line: 2, col: 1, message: "e" },
    ],
    { cwd: "/repo" },
  );
  assert.equal(lines, ["::error file=m.yaml,line=2,col=1,title=omnibatch%3A manifest::e", "::warning file=m.yaml,line=9,col=3,title=omnibatch%3A manifest::w: 1, 2"]);
});

t("lockfileAnnotation: an error on the lockfile, the whole message escaped onto one line", () => {
  assert.is(
    lockfileAnnotation({ path: "/repo/m.lock.json", message: "damaged: x.\nrestore it" }, { cwd: "/repo" }),
    "::error file=m.lock.json,title=omnibatch%3A lockfile::damaged: x.%0Arestore it",
  );
});

t("failureAnnotations: the task's own place, else its job's, else none; capped with a count of the rest", () => {
  const failures = [
    { id: "t1", job: "a", state: "failed", code: 1301, message: "risk" },
    { id: "t2", job: "b", state: "rejected", message: "bad" },
    { id: "t3", job: "c", state: "failed", message: "gone" },
  ];
  const sources = {
    task: (id: string) => (id === "t1" ? { file: "m.yaml", line: 7, col: 9 } : undefined),
    job: (job: string) => (job === "b" ? { file: "m.yaml", line: 20, col: 3 } : undefined),
  };
  assert.equal(failureAnnotations(failures, sources, { cwd: "/repo" }), [
    "::warning file=m.yaml,line=7,col=9,title=omnibatch%3A task failed::task t1 (job a) failed (1301): risk",
    "::warning file=m.yaml,line=20,col=3,title=omnibatch%3A task failed::task t2 (job b) rejected: bad",
    "::warning title=omnibatch%3A task failed::task t3 (job c) failed: gone",
  ]);
  const capped = failureAnnotations(failures, sources, { cwd: "/repo" }, 1);
  assert.is(capped.length, 2);
  assert.is(capped[1], "::warning title=omnibatch%3A task failed::2 more failed task(s): see results.jsonl");
});

const summary = (o: Partial<RunSummary>): RunSummary =>
  ({ exitCode: 0, outcome: "done", manifest: "m.yaml", lockfile: "m.lock.json", outputs: "out", reports: [], jobs: {}, spend: {}, created: 2, adopted: 0, downloaded: 3, failures: [], elapsedMs: 1, noSlotAnswers: 0, ...o }) as RunSummary;

t("stepResult: 0 and 3 are green (3 with pending), 1, 2, 4, 5 and anything else red with their own exit code and one line", () => {
  assert.equal(stepResult(0, summary({}), ""), { ok: true, exitCode: 0, pending: false, outcome: "done", reason: "all done (2 tasks created, 3 files downloaded)" });
  assert.equal(stepResult(3, summary({ reason: "--max-wait 5m reached" }), ""), {
    ok: true,
    exitCode: 0,
    pending: true,
    outcome: "pending",
    reason: "work pending: --max-wait 5m reached; the next run continues",
  });
  const failed = stepResult(1, summary({ failures: [{ id: "x", job: "j", state: "failed", message: "m" }] }), "");
  assert.equal([failed.ok, failed.exitCode, failed.outcome, failed.reason], [false, 1, "failed", "1 task failed or rejected (see the warnings and results.jsonl)"]);
  assert.equal(stepResult(2, undefined, "omnibatch: --max-wait 'x' is not a duration\n"), {
    ok: false,
    exitCode: 2,
    pending: false,
    outcome: "invalid",
    reason: "invalid: --max-wait 'x' is not a duration",
  });
  const budget = stepResult(4, summary({ reason: "budget 5 USD reached" }), "");
  assert.equal([budget.ok, budget.exitCode, budget.reason], [false, 4, "the budget stopped submission: budget 5 USD reached"]);
  const lost = stepResult(6, summary({ lost: [{ task: "t", job: "stills", vars: { subject: "apple" }, path: "stills/apple/image-1.png", why: "deleted", at: 1 }] }), "");
  assert.equal(
    [lost.ok, lost.exitCode, lost.outcome, lost.reason],
    [false, 6, "lost", "1 result lost: deleted at the service and not in the outputs folder (stills subject=apple); their records stay in the lockfile; 'run --recreate-lost' makes them again, at a cost"],
  );
  const refused = stepResult(5, undefined, "omnibatch: the service refused the key (1000)\n");
  assert.equal([refused.ok, refused.exitCode, refused.reason], [false, 5, "the account refused: the service refused the key (1000)"]);
  const bug = stepResult(70, undefined, "omnibatch: internal error (this is a bug)\n  at x\n");
  assert.equal([bug.ok, bug.exitCode, bug.outcome], [false, 70, "error"]);
  assert.match(bug.reason, "exit 70: internal error");
  assert.equal([stepResult(137, undefined, "").ok, stepResult(137, undefined, "").exitCode], [false, 137]);
});

t("firstErrorLine: the omnibatch line, skipping annotations; a list's first problem and count appended", () => {
  const stderr =
    "omnibatch: the manifest is invalid:\n\nm.yaml:3:5: error: jobs.a.prompt must be a string\n 3 |   prompt: 3\n\n1 error, 0 warnings\n::error file=m.yaml::x\n";
  assert.is(firstErrorLine(stderr), "the manifest is invalid: m.yaml:3:5: error: jobs.a.prompt must be a string (1 error, 0 warnings)");
  assert.is(firstErrorLine("::error::x\nomnibatch: plain\n"), "plain");
  assert.is(firstErrorLine(""), undefined);
});

t("spendLine: amounts per currency, or 0", () => {
  assert.is(spendLine({ USD: "1.4", CNY: "3" }), "1.4 USD, 3 CNY");
  assert.is(spendLine({}), "0");
  assert.is(spendLine(undefined), "0");
});

t("planVerdict: to create plus waiting, per currency, against the budget in its currency", () => {
  const base = { manifest: "m.yaml", planText: "", toCreate: 1 };
  assert.equal(planVerdict({ ...base, estimate: { USD: "0.1" }, waitingEstimate: { USD: "0.2" }, budget: { max: "0.3", currency: "USD" } }), {
    total: { USD: "0.3" },
    overBudget: false,
  });
  assert.is(planVerdict({ ...base, estimate: { USD: "0.1" }, waitingEstimate: { USD: "0.200001" }, budget: { max: "0.3", currency: "USD" } }).overBudget, true);
  assert.is(planVerdict({ ...base, estimate: { CNY: "9" }, waitingEstimate: {}, budget: { max: "1", currency: "USD" } }).overBudget, undefined);
  assert.is(planVerdict({ ...base, estimate: { USD: "9" }, waitingEstimate: {} }).overBudget, undefined);
});

t("planSummaryMarkdown: the table, the verdict, and the plan fenced so its own backticks cannot end the block", () => {
  const md = planSummaryMarkdown({ manifest: "m.yaml", planText: "a ``` b\n", toCreate: 2, estimate: { USD: "1" }, waitingEstimate: {}, budget: { max: "0.5", currency: "USD" } });
  assert.match(md, "| estimate, total | 1 USD |");
  assert.match(md, "| estimate, downstream tasks waiting | none (no prices for these tasks) |");
  assert.match(md, "**over the budget**");
  assert.match(md, "````\na ``` b\n````");
});

t.run();
