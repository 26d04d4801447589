#!/usr/bin/env node
// The GitHub Action's main step (action.yml runs `node dist/ci/actionStep.js`): reads the
// action's inputs from INPUT_* variables, masks the API key, runs `omnibatch run --json`,
// writes the step outputs and a line to the job summary from the run's NDJSON summary
// event, commits the lockfile back, and maps the exit code for a scheduler (stepResult.ts).
// Tests run it exactly as the runner does: env files, a git checkout with a remote.

import { describeResume } from "../plan/runTotals.js";
import { describeVars } from "../manifest/outputFolder.js";
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { appendFileSync } from "node:fs";
import { basename, relative, resolve } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import type { RunEvent, RunSummary } from "../engine/RunEvent.js";
import { commitBack, type CommitBackResult } from "./commitBack.js";
import { planSummaryMarkdown, planVerdict, type PlanFigures } from "./planSummary.js";
import { markdownCode, markdownText } from "../report/markdownText.js";
import { firstErrorLine, spendLine, stepResult } from "./stepResult.js";
import { addMask, annotation, fileCommandEntry } from "./workflowCommand.js";
import { serviceInEnv } from "../rules/serviceNames.js";

const bin = fileURLToPath(new URL("../cli/bin.js", import.meta.url));

interface Inputs {
  readonly command: "run" | "plan";
  readonly manifest: string;
  readonly maxWait: string;
  readonly emulate: boolean;
  readonly concurrency: string;
  readonly commitLockfile: boolean;
  readonly apiKey: string;
  /** `--outputs`: an s3:// store (or a folder) instead of the manifest's outputs. */
  readonly outputs: string;
}

class InputError extends Error {}

const bool = (env: NodeJS.ProcessEnv, name: string, fallback: boolean): boolean => {
  const raw = (env[`INPUT_${name}`] ?? "").trim().toLowerCase();
  if (raw === "") return fallback;
  if (raw === "true") return true;
  if (raw === "false") return false;
  throw new InputError(`input ${name.toLowerCase().replace(/_/g, "-")} must be true or false (got '${raw}')`);
};

const readInputs = (env: NodeJS.ProcessEnv): Inputs => {
  const manifest = (env["INPUT_MANIFEST"] ?? "").trim();
  if (manifest === "") throw new InputError("input manifest is required: the path of the manifest, e.g. manifests/spring.yaml");
  const command = (env["INPUT_COMMAND"] ?? "").trim() || "run";
  if (command !== "run" && command !== "plan") throw new InputError(`input command must be run or plan (got '${command}')`);
  return {
    command,
    manifest,
    maxWait: (env["INPUT_MAX_WAIT"] ?? "").trim(),
    emulate: bool(env, "EMULATE", false),
    concurrency: (env["INPUT_CONCURRENCY"] ?? "").trim(),
    commitLockfile: bool(env, "COMMIT_LOCKFILE", true),
    apiKey: env["INPUT_API_KEY"] ?? "",
    outputs: (env["INPUT_OUTPUTS"] ?? "").trim(),
  };
};

const setOutputs = (env: NodeJS.ProcessEnv, values: Record<string, string>): void => {
  const file = env["GITHUB_OUTPUT"];
  const text = Object.entries(values)
    .map(([k, v]) => fileCommandEntry(k, v, () => `ghadelimiter_${randomUUID()}`))
    .join("");
  if (file) appendFileSync(file, text);
  else process.stdout.write(text);
};

const appendSummary = (env: NodeJS.ProcessEnv, markdown: string): void => {
  const file = env["GITHUB_STEP_SUMMARY"];
  if (file) appendFileSync(file, markdown);
};

/** Runs `omnibatch run --json`, echoing what matters to the log; resolves to the exit code, the summary and stderr. */
const runOmnibatch = (args: readonly string[], env: NodeJS.ProcessEnv, cwd: string) =>
  new Promise<{ code: number; summary?: RunSummary; name?: string; stderr: string }>((done) => {
    const child = spawn(process.execPath, [bin, "run", ...args], { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
    let summary: RunSummary | undefined;
    let name: string | undefined;
    let stderr = "";
    const forward = (signal: NodeJS.Signals) => child.kill(signal);
    process.on("SIGINT", forward);
    process.on("SIGTERM", forward);
    child.stderr.on("data", (chunk: Buffer) => {
      process.stderr.write(chunk);
      if (stderr.length < 64_000) stderr += chunk.toString("utf8");
    });
    createInterface({ input: child.stdout }).on("line", (line) => {
      let event: RunEvent;
      try {
        event = JSON.parse(line) as RunEvent;
      } catch {
        process.stdout.write(`${line}\n`);
        return;
      }
      if (event.type === "start") {
        name = event.name;
        const size = event.totals && event.total !== undefined ? `${event.total} task(s): ${Object.entries(event.totals).map(([j, c]) => `${c.total} ${j}`).join(", ")}` : `${event.tasks} task(s), jobs ${event.jobs.join(", ")}`;
        process.stdout.write(`omnibatch: ${event.name}: ${size}${event.emulated ? " (emulated)" : ""}\n`);
        if (event.resume) process.stdout.write(`omnibatch: ${describeResume(event.resume)}\n`);
      } else if (event.type === "notice") {
        process.stdout.write(`omnibatch: ${event.level === "warn" ? "warning: " : ""}${event.message}\n`);
      } else if (event.type === "task" && (event.state === "failed" || event.state === "rejected")) {
        const what = event.vars ? `${event.job} ${describeVars(event.vars)}` : event.id;
        process.stdout.write(`  ${event.state}: ${what}${event.error ? `: ${event.error.message}${event.error.code !== undefined ? ` (code ${event.error.code})` : ""}` : ""}\n`);
      } else if (event.type === "summary") {
        const { type: _type, ...rest } = event;
        summary = rest;
      }
    });
    child.on("close", (code, signal) => {
      process.off("SIGINT", forward);
      process.off("SIGTERM", forward);
      done({ code: code ?? (signal ? 128 + 15 : 70), ...(summary ? { summary } : {}), ...(name ? { name } : {}), stderr });
    });
  });

/** Runs the CLI, stderr passed through (annotations included); resolves to its exit code, stdout and stderr. */
const runCli = (args: readonly string[], env: NodeJS.ProcessEnv, cwd: string) =>
  new Promise<{ code: number; stdout: string; stderr: string }>((done) => {
    const child = spawn(process.execPath, [bin, ...args], { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
    child.stderr.on("data", (chunk: Buffer) => {
      process.stderr.write(chunk);
      if (stderr.length < 64_000) stderr += chunk.toString("utf8");
    });
    child.on("close", (code) => done({ code: code ?? 70, stdout, stderr }));
  });

/** `command: plan`, for pull requests: the plan in the log and the job summary, with the estimate against the budget. Sends nothing. */
const planStep = async (inputs: Inputs, env: NodeJS.ProcessEnv, cwd: string): Promise<number> => {
  const extra = [...(inputs.emulate ? ["--emulate"] : []), ...(inputs.outputs !== "" ? ["--outputs", inputs.outputs] : [])];
  const text = await runCli(["plan", inputs.manifest, ...extra], env, cwd);
  process.stdout.write(text.stdout);
  if (text.code !== 0) {
    const reason = text.code === 2 ? `invalid: ${firstErrorLine(text.stderr) ?? "see the log"}` : `plan ended with exit ${text.code}`;
    setOutputs(env, { outcome: text.code === 2 ? "invalid" : "error", "exit-code": String(text.code) });
    appendSummary(env, `### omnibatch plan: ❌ ${markdownCode(inputs.manifest)}\n\n${markdownText(reason)}\n\n`);
    process.stdout.write(`${annotation("error", `omnibatch: ${reason}`, { title: "omnibatch: plan" })}\n`);
    return text.code === 0 ? 1 : text.code;
  }
  const json = await runCli(["plan", inputs.manifest, "--json", ...extra], { ...env, GITHUB_ACTIONS: "false" }, cwd);
  const plan = JSON.parse(json.stdout) as { total: Record<string, number>; estimate: Record<string, string>; waitingEstimate: Record<string, string> };
  const { loadManifest } = await import("../manifest/loadManifest.js");
  const m = await loadManifest(inputs.manifest, { cwd, service: serviceInEnv(env) });
  const figures: PlanFigures = {
    manifest: inputs.manifest,
    planText: text.stdout,
    toCreate: (plan.total["+"] ?? 0) + (plan.total["~"] ?? 0),
    estimate: plan.estimate,
    waitingEstimate: plan.waitingEstimate,
    ...(m.budget ? { budget: m.budget } : {}),
  };
  const verdict = planVerdict(figures);
  appendSummary(env, planSummaryMarkdown(figures));
  setOutputs(env, {
    outcome: "planned",
    "exit-code": "0",
    "to-create": String(figures.toCreate),
    estimate: spendLine(verdict.total),
    budget: m.budget ? `${m.budget.max} ${m.budget.currency}` : "",
    "over-budget": String(verdict.overBudget === true),
  });
  if (verdict.overBudget) {
    process.stdout.write(`${annotation("warning", `omnibatch: the estimate (${spendLine(verdict.total)}) is over the budget (${m.budget!.max} ${m.budget!.currency})`, { file: inputs.manifest, title: "omnibatch: budget" })}\n`);
  }
  return 0;
};

const branchOf = (env: NodeJS.ProcessEnv): string | undefined => {
  const ref = env["GITHUB_REF"] ?? "";
  return ref.startsWith("refs/heads/") ? ref.slice("refs/heads/".length) : undefined;
};

const runLabel = (env: NodeJS.ProcessEnv): string => {
  const id = env["GITHUB_RUN_ID"];
  if (!id) return "a local run";
  const attempt = env["GITHUB_RUN_ATTEMPT"] && env["GITHUB_RUN_ATTEMPT"] !== "1" ? ` attempt ${env["GITHUB_RUN_ATTEMPT"]}` : "";
  return `${env["GITHUB_WORKFLOW"] ? `${env["GITHUB_WORKFLOW"]} ` : ""}run ${id}${attempt}`;
};

const runUrl = (env: NodeJS.ProcessEnv): string | undefined =>
  env["GITHUB_RUN_ID"] && env["GITHUB_REPOSITORY"]
    ? `${env["GITHUB_SERVER_URL"] ?? "https://github.com"}/${env["GITHUB_REPOSITORY"]}/actions/runs/${env["GITHUB_RUN_ID"]}`
    : undefined;

export const main = async (env: NodeJS.ProcessEnv, cwd: string): Promise<number> => {
  let inputs: Inputs;
  try {
    inputs = readInputs(env);
  } catch (error) {
    if (!(error instanceof InputError)) throw error;
    process.stdout.write(`${annotation("error", `omnibatch: ${error.message}`, { title: "omnibatch" })}\n`);
    setOutputs(env, { outcome: "invalid", pending: "false", "exit-code": "2" });
    return 2;
  }
  // The key: from the api-key input or the caller's OMNIBATCH_API_KEY; hidden in every later log line.
  const apiKey = inputs.apiKey !== "" ? inputs.apiKey : (env["OMNIBATCH_API_KEY"] ?? "");
  if (apiKey !== "") process.stdout.write(`${addMask(apiKey)}\n`);
  if (inputs.command === "plan") return planStep(inputs, env, cwd);
  const childEnv: NodeJS.ProcessEnv = { ...env, ...(apiKey !== "" ? { OMNIBATCH_API_KEY: apiKey } : {}) };
  delete childEnv["INPUT_API_KEY"];

  const args = [inputs.manifest, "--json"];
  if (inputs.emulate) args.push("--emulate");
  if (inputs.maxWait !== "") args.push("--max-wait", inputs.maxWait);
  if (inputs.concurrency !== "") args.push("--concurrency", inputs.concurrency);
  if (inputs.outputs !== "") args.push("--outputs", inputs.outputs);
  process.stdout.write(`omnibatch run ${args.filter((a) => a !== "--json").join(" ")}\n`);
  const run = await runOmnibatch(args, childEnv, cwd);
  const result = stepResult(run.code, run.summary, run.stderr);
  const s = run.summary;
  const workspace = env["GITHUB_WORKSPACE"] ?? cwd;
  const shown = (p: string) => {
    const rel = relative(workspace, p);
    return rel.startsWith("..") ? p : rel;
  };
  // The report a person opens: the HTML report, else the billing summary.
  const billing = s?.reports.find((r) => basename(r) === "report.html") ?? s?.reports.find((r) => basename(r) === "billing.md") ?? s?.reports[0];

  // Commit back whatever the outcome: the lockfile records work that was paid for.
  let commit: CommitBackResult | undefined;
  let commitNote = "";
  if (inputs.commitLockfile && s) {
    const branch = branchOf(env);
    if (s.emulated) {
      commitNote = "emulated run: its lockfile is not committed";
    } else if (branch === undefined) {
      commitNote = `not on a branch (${env["GITHUB_REF"] ?? "GITHUB_REF unset"}): the lockfile is not committed`;
      process.stdout.write(`${annotation("warning", `omnibatch: ${commitNote}`, { title: "omnibatch" })}\n`);
    } else {
      const review = resolve(s.manifest.replace(/\.ya?ml$/i, "") + ".review.yaml");
      const counts = `${s.created} created, ${s.downloaded} downloaded, ${s.failures.length} failed`;
      const url = runUrl(env);
      commit = await commitBack({
        files: [s.lockfile, review],
        branch,
        env,
        message: `omnibatch: ${run.name ?? basename(s.manifest)} lockfile after ${runLabel(env)} (${result.outcome}: ${counts})${url ? `\n\n${url}` : ""}\n`,
      });
      if (commit.kind === "committed") commitNote = `committed ${commit.files.join(", ")} as ${commit.sha.slice(0, 12)} to ${branch}`;
      else if (commit.kind === "unchanged") commitNote = "the lockfile did not change";
      else commitNote = `the lockfile could not be committed: ${commit.reason}`;
    }
    process.stdout.write(`omnibatch: ${commitNote}\n`);
  }

  const failed = commit?.kind === "failed";
  setOutputs(env, {
    outcome: result.outcome,
    pending: String(result.pending),
    "exit-code": String(run.code),
    created: String(s?.created ?? 0),
    downloaded: String(s?.downloaded ?? 0),
    failed: String(s?.failures.length ?? 0),
    spend: spendLine(s?.spend),
    report: billing ? shown(billing) : "",
    reports: (s?.reports ?? []).map(shown).join("\n"),
    outputs: s ? shown(s.outputs) : "",
    lockfile: s ? shown(s.lockfile) : "",
    name: run.name ?? "",
    committed: commit?.kind === "committed" ? commit.sha : "",
  });
  appendSummary(
    env,
    `### omnibatch: ${result.ok ? (result.pending ? "⏳" : "✅") : "❌"} ${result.outcome}\n\n${markdownText(result.reason)}.` +
      `${s ? ` Spend: ${markdownText(spendLine(s.spend))}.` : ""}${commitNote ? ` ${markdownText(`${commitNote[0]!.toUpperCase()}${commitNote.slice(1)}`)}.` : ""}\n\n`,
  );

  if (failed) {
    process.stdout.write(`${annotation("error", `omnibatch: ${commitNote}`, { title: "omnibatch" })}\n`);
    return result.ok ? 1 : result.exitCode;
  }
  if (!result.ok) {
    process.stdout.write(`${annotation("error", `omnibatch: ${result.reason}`, { title: `omnibatch: ${result.outcome}` })}\n`);
    return result.exitCode;
  }
  if (result.pending) process.stdout.write(`${annotation("notice", `omnibatch: ${result.reason}`, { title: "omnibatch: pending" })}\n`);
  else process.stdout.write(`omnibatch: ${result.reason}\n`);
  return 0;
};

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = await main(process.env, process.cwd());
}
