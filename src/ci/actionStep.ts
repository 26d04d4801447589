#!/usr/bin/env node
// The GitHub Action's main step (action.yml runs `node dist/ci/actionStep.js`): reads the
// action's inputs from INPUT_* variables, masks the API key, runs `omnibatch run --json`
// (several manifests, or a glob, in one process: manifestInput.ts, severalOutputs.ts),
// writes the step outputs and a line to the job summary from the runs' NDJSON summary
// events, commits the lockfiles back, and maps the exit code for a scheduler (stepResult.ts).
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
import { expandManifestInput, ManifestInputError } from "./manifestInput.js";
import { combinedOutputs, combinedReason, mainReport, manifestsJson, type ManifestRun, severalSummaryMarkdown, sumSpend, worstRun } from "./severalOutputs.js";
import { worstExitCode } from "../run/runManifests.js";
import { reviewFilePathFor } from "../review/ReviewFile.js";
import { planSummaryMarkdown, planVerdict, type PlanFigures } from "./planSummary.js";
import { markdownCode, markdownText } from "../report/markdownText.js";
import { firstErrorLine, spendLine, stepResult } from "./stepResult.js";
import { addMask, annotation, fileCommandEntry } from "./workflowCommand.js";
import { serviceInEnv } from "../rules/serviceNames.js";

const bin = fileURLToPath(new URL("../cli/bin.js", import.meta.url));

interface Inputs {
  readonly command: "run" | "plan";
  /** The manifests, as the input names them (patterns expanded); at least one. */
  readonly manifests: readonly string[];
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

const readInputs = (env: NodeJS.ProcessEnv, cwd: string): Inputs => {
  const manifest = (env["INPUT_MANIFEST"] ?? "").trim();
  if (manifest === "") throw new InputError("input manifest is required: the path of the manifest, e.g. manifests/spring.yaml");
  const command = (env["INPUT_COMMAND"] ?? "").trim() || "run";
  if (command !== "run" && command !== "plan") throw new InputError(`input command must be run or plan (got '${command}')`);
  let manifests: readonly string[];
  try {
    manifests = expandManifestInput(manifest, cwd, resolve(cwd, env["GITHUB_WORKSPACE"] ?? cwd));
  } catch (error) {
    if (error instanceof ManifestInputError) throw new InputError(error.message);
    throw error;
  }
  return {
    command,
    manifests,
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

/** What one manifest's run printed: its name (start event) and summary. */
interface RunSeen {
  name?: string;
  summary?: RunSummary;
}

/**
 * Runs `omnibatch run --json`, echoing what matters to the log; resolves to the exit code,
 * stderr, and what each manifest's run printed, keyed by its `file` (several manifests
 * tag their events with it; one manifest's are under "").
 */
const runOmnibatch = (args: readonly string[], env: NodeJS.ProcessEnv, cwd: string) =>
  new Promise<{ code: number; runs: ReadonlyMap<string, RunSeen>; stderr: string }>((done) => {
    const child = spawn(process.execPath, [bin, "run", ...args], { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
    const runs = new Map<string, RunSeen>();
    const seen = (key: string): RunSeen => {
      let r = runs.get(key);
      if (r === undefined) runs.set(key, (r = {}));
      return r;
    };
    let stderr = "";
    const forward = (signal: NodeJS.Signals) => child.kill(signal);
    process.on("SIGINT", forward);
    process.on("SIGTERM", forward);
    child.stderr.on("data", (chunk: Buffer) => {
      process.stderr.write(chunk);
      if (stderr.length < 64_000) stderr += chunk.toString("utf8");
    });
    createInterface({ input: child.stdout }).on("line", (line) => {
      let event: RunEvent & { file?: string };
      try {
        event = JSON.parse(line) as RunEvent & { file?: string };
      } catch {
        process.stdout.write(`${line}\n`);
        return;
      }
      const run = seen(event.file ?? "");
      if (event.type === "start") {
        run.name = event.name;
        const size = event.totals && event.total !== undefined ? `${event.total} task(s): ${Object.entries(event.totals).map(([j, c]) => `${c.total} ${j}`).join(", ")}` : `${event.tasks} task(s), jobs ${event.jobs.join(", ")}`;
        process.stdout.write(`omnibatch: ${event.name}: ${size}${event.emulated ? " (emulated)" : ""}\n`);
        if (event.resume) process.stdout.write(`omnibatch: ${describeResume(event.resume)}\n`);
      } else if (event.type === "notice") {
        process.stdout.write(`omnibatch: ${event.file !== undefined && run.name ? `${run.name}: ` : ""}${event.level === "warn" ? "warning: " : ""}${event.message}\n`);
      } else if (event.type === "task" && (event.state === "failed" || event.state === "rejected")) {
        const what = event.vars ? `${event.job} ${describeVars(event.vars)}` : event.id;
        process.stdout.write(`  ${event.file !== undefined && run.name ? `${run.name}: ` : ""}${event.state}: ${what}${event.error ? `: ${event.error.message}${event.error.code !== undefined ? ` (code ${event.error.code})` : ""}` : ""}\n`);
      } else if (event.type === "summary") {
        const { type: _type, file: _file, ...rest } = event;
        // Several manifests: `manifest` is the tag (the name); the path is `file`.
        run.summary = _file !== undefined ? { ...rest, manifest: _file } : rest;
      }
    });
    child.on("close", (code, signal) => {
      process.off("SIGINT", forward);
      process.off("SIGTERM", forward);
      done({ code: code ?? (signal ? 128 + 15 : 70), runs, stderr });
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

/** One manifest's plan: in the log and the job summary; its figures, or the exit code that stopped it. */
const planOne = async (manifest: string, inputs: Inputs, env: NodeJS.ProcessEnv, cwd: string): Promise<{ code: number; reason?: string; figures?: PlanFigures }> => {
  const extra = [...(inputs.emulate ? ["--emulate"] : []), ...(inputs.outputs !== "" ? ["--outputs", inputs.outputs] : [])];
  const text = await runCli(["plan", manifest, ...extra], env, cwd);
  process.stdout.write(text.stdout);
  if (text.code !== 0) {
    const reason = text.code === 2 ? `invalid: ${firstErrorLine(text.stderr) ?? "see the log"}` : `plan ended with exit ${text.code}`;
    appendSummary(env, `### omnibatch plan: ❌ ${markdownCode(manifest)}\n\n${markdownText(reason)}\n\n`);
    process.stdout.write(`${annotation("error", `omnibatch: ${inputs.manifests.length > 1 ? `${manifest}: ` : ""}${reason}`, { title: "omnibatch: plan" })}\n`);
    return { code: text.code, reason };
  }
  const json = await runCli(["plan", manifest, "--json", ...extra], { ...env, GITHUB_ACTIONS: "false" }, cwd);
  const plan = JSON.parse(json.stdout) as { total: Record<string, number>; estimate: Record<string, string>; waitingEstimate: Record<string, string> };
  const { loadManifest } = await import("../manifest/loadManifest.js");
  const m = await loadManifest(manifest, { cwd, service: serviceInEnv(env) });
  const figures: PlanFigures = {
    manifest,
    planText: text.stdout,
    toCreate: (plan.total["+"] ?? 0) + (plan.total["~"] ?? 0),
    estimate: plan.estimate,
    waitingEstimate: plan.waitingEstimate,
    ...(m.budget ? { budget: m.budget } : {}),
  };
  const verdict = planVerdict(figures);
  appendSummary(env, planSummaryMarkdown(figures));
  if (verdict.overBudget) {
    process.stdout.write(`${annotation("warning", `omnibatch: the estimate (${spendLine(verdict.total)}) is over the budget (${m.budget!.max} ${m.budget!.currency})`, { file: manifest, title: "omnibatch: budget" })}\n`);
  }
  return { code: 0, figures };
};

/**
 * `command: plan`, for pull requests: each manifest's plan in the log and the job summary,
 * with its estimate against its budget. Sends nothing. Several manifests: `to-create` and
 * `estimate` (per currency) are sums, `over-budget` is true when any is, `exit-code` the worst.
 */
const planStep = async (inputs: Inputs, env: NodeJS.ProcessEnv, cwd: string): Promise<number> => {
  const plans = [];
  for (const manifest of inputs.manifests) plans.push(await planOne(manifest, inputs, env, cwd));
  const code = worstExitCode(plans.map((p) => p.code));
  if (code !== 0) {
    setOutputs(env, { outcome: code === 2 ? "invalid" : "error", "exit-code": String(code) });
    return code;
  }
  const figures = plans.map((p) => p.figures!);
  const verdicts = figures.map(planVerdict);
  const budget = figures.length === 1 && figures[0]!.budget ? `${figures[0]!.budget.max} ${figures[0]!.budget.currency}` : "";
  setOutputs(env, {
    outcome: "planned",
    "exit-code": "0",
    "to-create": String(figures.reduce((n, f) => n + f.toCreate, 0)),
    estimate: spendLine(sumSpend(verdicts.map((v) => v.total))),
    budget,
    "over-budget": String(verdicts.some((v) => v.overBudget === true)),
  });
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
    inputs = readInputs(env, cwd);
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

  const several = inputs.manifests.length > 1;
  const args = [...inputs.manifests, "--json"];
  if (inputs.emulate) args.push("--emulate");
  if (inputs.maxWait !== "") args.push("--max-wait", inputs.maxWait);
  if (inputs.concurrency !== "") args.push("--concurrency", inputs.concurrency);
  if (inputs.outputs !== "") args.push("--outputs", inputs.outputs);
  process.stdout.write(`omnibatch run ${args.filter((a) => a !== "--json").join(" ")}\n`);
  const run = await runOmnibatch(args, childEnv, cwd);
  // Each manifest's run: one manifest's events carry no `file`; several tag theirs with its path.
  const runs: ManifestRun[] = inputs.manifests.map((manifest) => {
    const seen = run.runs.get(several ? resolve(cwd, manifest) : "") ?? {};
    const exitCode = seen.summary?.exitCode ?? run.code;
    return { manifest, ...seen, exitCode, result: stepResult(exitCode, seen.summary, run.stderr) };
  });
  const summaries = runs.flatMap((r) => (r.summary ? [r.summary] : []));
  // Several that ran: the worst manifest's result; stopped before any ran (an invalid one): the step's, from stderr.
  const ran = several && summaries.length > 0;
  const result = ran ? worstRun(runs, run.code).result : stepResult(run.code, runs[0]!.summary, run.stderr);
  const workspace = env["GITHUB_WORKSPACE"] ?? cwd;
  const shown = (p: string) => {
    const rel = relative(workspace, p);
    return rel.startsWith("..") ? p : rel;
  };

  // Commit back whatever the outcome: the lockfiles record work that was paid for. Several
  // manifests: every lockfile (and review file) in one commit.
  let commit: CommitBackResult | undefined;
  let commitNote = "";
  if (inputs.commitLockfile && summaries.length > 0) {
    const branch = branchOf(env);
    const lockfiles = several ? "the lockfiles are" : "the lockfile is";
    if (summaries.some((s) => s.emulated)) {
      commitNote = `emulated run: ${several ? "their lockfiles are" : "its lockfile is"} not committed`;
    } else if (branch === undefined) {
      commitNote = `not on a branch (${env["GITHUB_REF"] ?? "GITHUB_REF unset"}): ${lockfiles} not committed`;
      process.stdout.write(`${annotation("warning", `omnibatch: ${commitNote}`, { title: "omnibatch" })}\n`);
    } else {
      const counts = (s: RunSummary) => `${s.created} created, ${s.downloaded} downloaded, ${s.failures.length} failed`;
      const url = runUrl(env);
      const withSummary = runs.filter((r) => r.summary !== undefined);
      const message = several
        ? `omnibatch: lockfiles of ${withSummary.map((r) => r.name ?? basename(r.manifest)).join(", ")} after ${runLabel(env)} (${result.outcome})\n\n` +
          withSummary.map((r) => `${r.name ?? basename(r.manifest)}: ${r.result.outcome}: ${counts(r.summary!)}`).join("\n") +
          `${url ? `\n\n${url}` : ""}\n`
        : `omnibatch: ${runs[0]!.name ?? basename(summaries[0]!.manifest)} lockfile after ${runLabel(env)} (${result.outcome}: ${counts(summaries[0]!)})${url ? `\n\n${url}` : ""}\n`;
      commit = await commitBack({
        files: summaries.flatMap((s) => [s.lockfile, resolve(reviewFilePathFor(s.manifest))]),
        branch,
        env,
        message,
      });
      if (commit.kind === "committed") commitNote = `committed ${commit.files.join(", ")} as ${commit.sha.slice(0, 12)} to ${branch}`;
      else if (commit.kind === "unchanged") commitNote = several ? "the lockfiles did not change" : "the lockfile did not change";
      else commitNote = `${several ? "the lockfiles" : "the lockfile"} could not be committed: ${commit.reason}`;
    }
    process.stdout.write(`omnibatch: ${commitNote}\n`);
  }

  const failed = commit?.kind === "failed";
  const committed = commit?.kind === "committed" ? commit.sha : "";
  if (ran) {
    setOutputs(env, { ...combinedOutputs(runs, run.code, shown), committed });
    appendSummary(env, severalSummaryMarkdown(runs, run.code, commitNote));
  } else {
    const s = summaries[0];
    const billing = s ? mainReport(s.reports) : undefined;
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
      name: several ? "" : (runs[0]!.name ?? ""),
      manifests: manifestsJson(runs, shown),
      committed,
    });
    appendSummary(
      env,
      `### omnibatch: ${result.ok ? (result.pending ? "⏳" : "✅") : "❌"} ${result.outcome}${several ? ` (${inputs.manifests.map(markdownCode).join(", ")})` : ""}\n\n${markdownText(result.reason)}.` +
        `${s ? ` Spend: ${markdownText(spendLine(s.spend))}.` : ""}${commitNote ? ` ${markdownText(`${commitNote[0]!.toUpperCase()}${commitNote.slice(1)}`)}.` : ""}\n\n`,
    );
  }

  if (failed) {
    process.stdout.write(`${annotation("error", `omnibatch: ${commitNote}`, { title: "omnibatch" })}\n`);
    return result.ok ? 1 : result.exitCode;
  }
  // Several: one error line per manifest that is red (the first, the invalid input, when none printed a summary).
  const red = ran ? runs.filter((r) => !r.result.ok) : !result.ok ? [{ ...runs[0]!, name: undefined, result }] : [];
  for (const r of red) {
    process.stdout.write(`${annotation("error", `omnibatch: ${r.name ? `${r.name}: ` : ""}${r.result.reason}`, { title: `omnibatch: ${r.result.outcome}` })}\n`);
  }
  if (!result.ok) return result.exitCode;
  const reason = ran ? combinedReason(runs, run.code) : result.reason;
  if (ran ? runs.some((r) => r.result.pending) : result.pending) process.stdout.write(`${annotation("notice", `omnibatch: ${reason}`, { title: "omnibatch: pending" })}\n`);
  else process.stdout.write(`omnibatch: ${reason}\n`);
  return 0;
};

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = await main(process.env, process.cwd());
}
