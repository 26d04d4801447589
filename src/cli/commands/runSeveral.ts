// `omnibatch run a.yaml b.yaml ...`: several manifests in one run (src/run/runManifests.ts),
// sharing one pool of the account's slots per product. Every manifest is loaded first;
// one that is invalid (or two that would share a lockfile or outputs folder) stops the
// command with exit 2 before anything is sent for any. Each manifest keeps its own
// lockfile, outputs, reports and exit status; the exit code is the worst of them. Output:
// with --json every event of a manifest's run carries `manifest` (its name) and `file`
// (its path; the Action tells the runs apart by it); otherwise
// each run's warnings, and its summary under a line naming it as it ends (no progress
// lines: several would interleave).

import type { CallbackSetting } from "../../run/CallbackSetting.js";
import type { RunEvent } from "../../engine/RunEvent.js";
import { loadManifest } from "../../manifest/loadManifest.js";
import { ManifestInvalid } from "../../manifest/Diagnostic.js";
import { timeScaleVariable } from "../../policy/timeScale.js";
import { loadEach, overlapOf, runManifests, worstExitCode } from "../../run/runManifests.js";
import { annotateFailure, annotateRunFailures } from "../ciAnnotations.js";
import type { CommandIO } from "../Command.js";
import { serviceNameOf } from "../commonOptions.js";
import { ExitCode, exitCodeFor, isUserFacing } from "../../exit/ExitCode.js";
import { Progress } from "../Progress.js";
import { selectionFromArgs } from "../selectionFlags.js";
import { UsageError } from "../UsageError.js";

type Values = Record<string, string | boolean | string[] | undefined>;

export interface SeveralFlags {
  readonly values: Values;
  readonly maxWaitMs?: number;
  readonly concurrency?: number;
  readonly callbacks?: false | CallbackSetting;
}

/** Flags that choose what one manifest's run does: they cannot apply to several. */
const ONE_MANIFEST_FLAGS = ["plan", "switch-service", "recreate-lost", "outputs"] as const;

export const runSeveral = async (files: readonly string[], flags: SeveralFlags, io: CommandIO): Promise<ExitCode> => {
  const v = flags.values;
  for (const flag of ONE_MANIFEST_FLAGS) {
    if (v[flag] !== undefined && v[flag] !== false) throw new UsageError({ command: "run", message: `--${flag} applies to one manifest: run that manifest on its own` });
  }
  if (selectionFromArgs("run", v) !== undefined) throw new UsageError({ command: "run", message: "--only, --where and --failed apply to one manifest: run that manifest on its own" });
  if (new Set(files).size < files.length) throw new UsageError({ command: "run", message: "a manifest is named twice: name each once" });
  // Nobody is asked before spending on several manifests: at a terminal, say so first.
  const configured = !!io.env["OMNIBATCH_API_KEY"];
  if (!v.emulate && !v.yes && !v.json && configured && io.stdout.isTTY && io.stdin?.isTTY) {
    throw new UsageError({ command: "run", message: "several manifests are run without asking before spending: pass --yes (see each one's spend first with 'omnibatch plan FILE')" });
  }

  const service = serviceNameOf(v, io.env);
  const { loaded, errors } = await loadEach(files, (file) => loadManifest(file, { service }));
  if (errors.length > 0) {
    for (const { error } of errors) {
      if (!isUserFacing(error)) throw error;
      if (v.json && error instanceof ManifestInvalid) {
        for (const d of error.diagnostics) {
          const { lineText: _text, ...where } = d;
          io.stdout.write(`${JSON.stringify({ type: "diagnostic", at: new Date().toISOString(), ...where })}\n`);
        }
      }
      io.stderr.write(`omnibatch: ${error.message}\n`);
      annotateFailure(error, io);
    }
    io.stderr.write(`omnibatch: nothing was sent for any of the ${files.length} manifests\n`);
    return ExitCode.Invalid;
  }
  const overlap = overlapOf(loaded);
  if (overlap !== undefined) throw new UsageError({ command: "run", message: overlap });

  // First signal: every run stops cleanly (exit 3, lockfiles written); a second leaves at once.
  const abort = new AbortController();
  let signals = 0;
  const onSignal = (name: NodeJS.Signals) => {
    signals++;
    if (signals > 1) process.exit(130);
    if (!v.json) io.stderr.write(`\nomnibatch: ${name}: stopping (again to quit at once); run the same command to continue\n`);
    abort.abort();
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  const onClosed = () => abort.abort();
  io.outputClosed?.addEventListener("abort", onClosed, { once: true });
  if (io.outputClosed?.aborted) abort.abort();
  const progress: Progress[] = [];
  try {
    const outcomes = await runManifests(loaded, {
      env: io.env,
      ...(io.env[timeScaleVariable] !== undefined ? { timeScale: io.env[timeScaleVariable] } : {}),
      ...(typeof v["base-url"] === "string" ? { baseUrl: v["base-url"] } : {}),
      client: { service },
      ...(v.emulate ? { emulate: true } : {}),
      ...(flags.concurrency !== undefined ? { concurrency: flags.concurrency } : {}),
      ...(flags.maxWaitMs !== undefined ? { maxWaitMs: flags.maxWaitMs, maxWaitSince: Math.round(performance.timeOrigin) } : {}),
      ...(flags.callbacks !== undefined ? { callbacks: flags.callbacks } : {}),
      ...(v["no-reuse"] ? { reuse: false } : {}),
      signal: abort.signal,
      onEventOf: (manifest) => {
        if (v.json) return (event: RunEvent) => io.stdout.write(`${JSON.stringify({ ...event, manifest: manifest.name, file: manifest.file })}\n`);
        const shown = new Progress({ mode: "quiet", stdout: io.stdout, stderr: io.stderr });
        progress.push(shown);
        return (event: RunEvent) => {
          if (event.type === "summary" && !v.quiet) io.stdout.write(`\n== ${manifest.name} (${manifest.file})\n`);
          if (event.type === "notice" && event.level === "warn") {
            io.stderr.write(`omnibatch: ${manifest.name}: ${event.message}\n`);
            return;
          }
          shown.onEvent(event);
        };
      },
    });
    const codes: number[] = [];
    for (const outcome of outcomes) {
      if (outcome.summary) {
        await annotateRunFailures(outcome.file, outcome.summary, io);
        codes.push(outcome.summary.exitCode);
      } else {
        const error = outcome.error;
        io.stderr.write(
          isUserFacing(error)
            ? `omnibatch: ${outcome.name}: ${error.message}\n`
            : `omnibatch: ${outcome.name}: internal error (this is a bug in omnibatch, please report it):\n${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
        );
        if (isUserFacing(error)) annotateFailure(error, io);
        codes.push(exitCodeFor(error));
      }
    }
    if (!v.json && !v.quiet) {
      io.stdout.write(`\n${outcomes.map((o, i) => `${o.name}: exit ${codes[i]}`).join(", ")}\n`);
    }
    return worstExitCode(codes) as ExitCode;
  } finally {
    for (const p of progress) p.close();
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
    io.outputClosed?.removeEventListener("abort", onClosed);
  }
};
