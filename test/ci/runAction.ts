// Runs the steps of action.yml the way the GitHub runner does for a composite action:
// each `run:` step through `bash --noprofile --norc -eo pipefail` in the workspace, its
// `env:` with `${{ inputs.* }}`, `${{ github.* }}` and `${{ steps.*.outputs.* }}`
// filled in, a fresh $GITHUB_OUTPUT file per step parsed after it, shared
// $GITHUB_STEP_SUMMARY and $GITHUB_ENV files, then the action's outputs from its
// `outputs:` map. `uses:` steps (upload-artifact) cannot run here: their `if:` and `with:`
// are evaluated and returned, so a test can check what would be uploaded.

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execa } from "execa";
import { parse } from "yaml";

interface Step {
  id?: string;
  name?: string;
  if?: string;
  shell?: string;
  run?: string;
  uses?: string;
  env?: Record<string, string>;
  with?: Record<string, string>;
}

interface ActionYaml {
  inputs: Record<string, { default?: string; required?: boolean }>;
  outputs: Record<string, { value: string }>;
  runs: { using: string; steps: Step[] };
}

export interface ActionRun {
  /** The exit code of the first step that failed, else 0 (the action's step is red when not 0). */
  readonly exitCode: number;
  readonly stdout: string;
  readonly stderr: string;
  readonly outputs: Record<string, string>;
  readonly summary: string;
  readonly envFile: string;
  /** Each `uses:` step whose `if:` held, with its `with:` evaluated. */
  readonly uploads: ReadonlyArray<{ uses: string; with: Record<string, string> }>;
}

/** Parses a $GITHUB_OUTPUT / $GITHUB_ENV file: `k=v` lines and `k<<DELIM` heredocs. */
export const parseFileCommands = (text: string): Record<string, string> => {
  const out: Record<string, string> = {};
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (line === "") continue;
    const heredoc = /^([^=<]+)<<(.+)$/.exec(line);
    if (heredoc) {
      const body: string[] = [];
      for (i++; i < lines.length && lines[i] !== heredoc[2]; i++) body.push(lines[i]!);
      out[heredoc[1]!] = body.join("\n");
      continue;
    }
    const eq = line.indexOf("=");
    if (eq > 0) out[line.slice(0, eq)] = line.slice(eq + 1);
  }
  return out;
};

type Context = { inputs: Record<string, string>; github: Record<string, string>; steps: Record<string, Record<string, string>>; status: { failed: boolean } };

/** `${{ a.b.c }}` with a dotted name only: what action.yml uses in env and with. */
const lookup = (expr: string, ctx: Context): string => {
  const [head, ...rest] = expr.trim().split(".");
  if (head === "inputs") return ctx.inputs[rest.join(".")] ?? "";
  if (head === "github") return ctx.github[rest.join(".")] ?? "";
  if (head === "steps" && rest[1] === "outputs") return ctx.steps[rest[0]!]?.[rest.slice(2).join(".")] ?? "";
  throw new Error(`runAction: unsupported expression ${expr}`);
};

export const substitute = (text: string, ctx: Context): string => text.replace(/\$\{\{(.*?)\}\}/g, (_, e: string) => lookup(e, ctx));

/** The `if:` forms action.yml uses: `always() && a == 'x' && b != ''`. */
const condition = (cond: string | undefined, ctx: Context): boolean => {
  if (cond === undefined) return !ctx.status.failed;
  let always = false;
  const ok = cond.split("&&").every((part) => {
    const p = part.trim();
    if (p === "always()") return (always = true);
    const m = /^(\S+)\s*(==|!=)\s*'([^']*)'$/.exec(p);
    if (!m) throw new Error(`runAction: unsupported condition ${p}`);
    const value = lookup(m[1]!, ctx);
    return m[2] === "==" ? value === m[3] : value !== m[3];
  });
  return ok && (always || !ctx.status.failed);
};

export const runAction = async (o: {
  actionPath: string;
  workspace: string;
  inputs: Record<string, string>;
  /** The job's environment (GITHUB_REF, OMNIBATCH_BASE_URL, ...), on top of a minimal base. */
  env?: Record<string, string>;
  timeoutMs?: number;
}): Promise<ActionRun> => {
  const action = parse(readFileSync(join(o.actionPath, "action.yml"), "utf8")) as ActionYaml;
  if (action.runs.using !== "composite") throw new Error("runAction: only composite actions");
  const files = mkdtempSync(join(tmpdir(), "omnibatch-runner-"));
  const summaryFile = join(files, "step_summary.md");
  const envFile = join(files, "env");
  writeFileSync(summaryFile, "");
  writeFileSync(envFile, "");
  const inputs: Record<string, string> = {};
  for (const [name, spec] of Object.entries(action.inputs)) inputs[name] = o.inputs[name] ?? spec.default ?? "";
  for (const name of Object.keys(o.inputs)) if (!(name in action.inputs)) throw new Error(`runAction: unknown input ${name}`);
  const ctx: Context = {
    inputs,
    github: { action_path: o.actionPath, run_id: o.env?.["GITHUB_RUN_ID"] ?? "1", run_attempt: o.env?.["GITHUB_RUN_ATTEMPT"] ?? "1", workspace: o.workspace },
    steps: {},
    status: { failed: false },
  };
  let exitCode = 0;
  let stdout = "";
  let stderr = "";
  const uploads: { uses: string; with: Record<string, string> }[] = [];
  try {
    for (const [i, step] of action.runs.steps.entries()) {
      if (!condition(step.if, ctx)) continue;
      if (step.uses) {
        uploads.push({ uses: step.uses, with: Object.fromEntries(Object.entries(step.with ?? {}).map(([k, v]) => [k, substitute(String(v), ctx)])) });
        continue;
      }
      if (step.shell !== "bash" || step.run === undefined) throw new Error(`runAction: step ${i} is not a bash run step`);
      const outputFile = join(files, `output_${i}`);
      const script = join(files, `step_${i}.sh`);
      writeFileSync(outputFile, "");
      writeFileSync(script, step.run);
      const stepEnv = Object.fromEntries(Object.entries(step.env ?? {}).map(([k, v]) => [k, substitute(String(v), ctx)]));
      const r = await execa("bash", ["--noprofile", "--norc", "-eo", "pipefail", script], {
        cwd: o.workspace,
        reject: false,
        extendEnv: false,
        timeout: o.timeoutMs ?? 120_000,
        env: {
          PATH: process.env["PATH"] ?? "/usr/bin:/bin",
          HOME: process.env["HOME"] ?? files,
          GITHUB_ACTIONS: "true",
          CI: "true",
          GITHUB_WORKSPACE: o.workspace,
          GITHUB_ACTION_PATH: o.actionPath,
          GITHUB_OUTPUT: outputFile,
          GITHUB_STEP_SUMMARY: summaryFile,
          GITHUB_ENV: envFile,
          GITHUB_RUN_ID: ctx.github["run_id"]!,
          GITHUB_RUN_ATTEMPT: ctx.github["run_attempt"]!,
          ...o.env,
          ...stepEnv,
        },
      });
      stdout += r.stdout === "" ? "" : `${r.stdout}\n`;
      stderr += r.stderr === "" ? "" : `${r.stderr}\n`;
      ctx.steps[step.id ?? `__${i}`] = parseFileCommands(readFileSync(outputFile, "utf8"));
      if (r.exitCode !== 0) {
        exitCode = r.exitCode ?? 1;
        ctx.status.failed = true;
      }
    }
    const outputs = Object.fromEntries(Object.entries(action.outputs).map(([k, v]) => [k, substitute(v.value, ctx)]));
    return { exitCode, stdout, stderr, outputs, summary: readFileSync(summaryFile, "utf8"), envFile: readFileSync(envFile, "utf8"), uploads };
  } finally {
    rmSync(files, { recursive: true, force: true });
  }
};
