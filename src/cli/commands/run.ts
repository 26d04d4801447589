// `omnibatch run M.yaml`: turns flags into a run request (runFlags.ts), supplies what the
// run says and asks once it has its plan (runQuestions.ts), wires SIGINT/SIGTERM to a
// clean stop, shows progress, and returns the run's exit code. The run itself is the
// pipeline the library shares (src/run/runLoadedManifest.ts).

import { resolve } from "node:path";
import { timeScaleVariable } from "../../policy/timeScale.js";
import { Progress, type ProgressMode } from "../Progress.js";
import { NotConfirmed, runLoadedManifest } from "../../run/runLoadedManifest.js";
import { loadManifest } from "../../manifest/loadManifest.js";
import { ManifestInvalid } from "../../manifest/Diagnostic.js";
import type { LoadedManifest } from "../../manifest/LoadedManifest.js";
import { defineCommand } from "../Command.js";
import { commonOptions, serviceNameOf } from "../commonOptions.js";
import { ExitCode } from "../../exit/ExitCode.js";
import { UsageError } from "../UsageError.js";
import { annotateRunFailures } from "../ciAnnotations.js";
import type { SavedPlan } from "../../plan/savedPlan.js";
import type { RunEvent } from "../../engine/RunEvent.js";
import { checkPlanApplies, checkSelectionEarly, readSavedPlan, runSelectionOf, selectionFromArgs, selectionOptions } from "../selectionFlags.js";
import { emulatedManifest } from "../../run/EmulatedRun.js";
import { readLockFile } from "../../state/readLockFile.js";
import { manifestDecisions } from "../../review/manifestDecisions.js";
import { outputsOption, withOutputs } from "../outputsOption.js";
import { runFlags, parseDuration } from "../runFlags.js";
import { runQuestions } from "../runQuestions.js";

export { parseDuration };

export const runCommand = defineCommand({
  name: "run",
  summary: "Submit, follow, download and report until done, the time limit or the budget.",
  usage: "omnibatch run <manifest.yaml>... [--emulate | --base-url URL] [--max-wait D] [--only JOB] [--where K=V] [--failed] [--plan FILE] [--json] [options]",
  description:
    "Validates the manifest, then creates the tasks the lockfile does not have yet, follows them,\n" +
    "downloads every result into the outputs folder and writes results.jsonl and the billing reports.\n" +
    "Every step is recorded in the lockfile beside the manifest, so a run that is stopped or killed\n" +
    "is simply run again: nothing is created twice, finished results are not downloaded again.\n" +
    "The API key is read from OMNIBATCH_API_KEY only. With --emulate, an emulator of the service runs\n" +
    "in-process (no key needed, nothing is charged) and the run keeps its own lockfile and results,\n" +
    "M.emulate.lock.json and <outputs>-emulated, never touching the real ones (delete them freely);\n" +
    "the emulated service keeps its tasks between such runs in M.emulate.state.json beside them.\n\n" +
    "On a terminal, a run against a real service first shows what it will create and the estimated\n" +
    "cost against the budget, and asks before the first create (--yes skips the question; CI, --json\n" +
    "and --emulate runs never ask).\n\n" +
    "A chosen part: --only JOB[,JOB] runs those jobs only (an upstream job does not run: its finished\n" +
    "results are used), --where KEY=VALUE only tasks with that matrix value (product.sku=A-1 reaches into\n" +
    "data rows; repeat to AND), --failed one new attempt (new id) of each failed task now. What it will\n" +
    "create and cost is shown first. Tasks not selected stay in the lockfile as they are; the budget and\n" +
    "the run lock apply as to a whole run. --plan FILE (from 'plan --out FILE') creates exactly the\n" +
    "tasks that plan lists, and exits 2 without sending anything if the manifest or lockfile changed.\n\n" +
    "Several manifests (run a.yaml b.yaml ...) run at once in one process, sharing one pool of the\n" +
    "account's slots per product, each with its own lockfile, outputs, reports and exit status (the\n" +
    "exit code is the worst); one invalid manifest: exit 2, nothing sent for any.\n\n" +
    "Exit codes: 0 all done; 1 some tasks failed or were rejected; 2 invalid manifest, command line,\n" +
    "or lockfile busy; 3 stopped with work pending (--max-wait, Ctrl-C): run again to continue;\n" +
    "4 the budget stopped submission; 5 the account refused (authentication, balance, permission),\n" +
    "or the address or the service's name is wrong, or nothing answers there (see 'omnibatch doctor');\n" +
    "6 results are lost: recorded in the lockfile, not in the outputs folder, deleted at the service\n" +
    "(their records stay; --recreate-lost makes them again, at a cost).\n\n" +
    "The lockfile records the service (base URL) its tasks were created at. A run against another one\n" +
    "(another region cannot see those tasks) is refused while any of them is unfinished, unless\n" +
    "--switch-service says to abandon them there and create them again here.\n\n" +
    "Callbacks: against a service on this machine (--emulate, a loopback --base-url) the run listens on\n" +
    "127.0.0.1 and the service reports status changes at once, so slots are refilled sooner and polling\n" +
    "slows down (it stays the source of truth). For a real service give --callback-url, a public address\n" +
    "forwarding to --callback-listen; set OMNIBATCH_WEBHOOK_SECRET (whsec_...) to drop unsigned callbacks.",
  options: {
    "base-url": commonOptions["base-url"],
    service: commonOptions.service,
    emulate: {
      ...commonOptions.emulate,
      description: "Run against an in-process emulator; uses M.emulate.lock.json and <outputs>-emulated, not the real files.",
    },
    json: { ...commonOptions.json, description: "Print NDJSON events (one per state change, then a summary) on stdout, nothing else." },
    concurrency: commonOptions.concurrency,
    "max-wait": commonOptions["max-wait"],
    yes: commonOptions.yes,
    quiet: commonOptions.quiet,
    "no-callbacks": { type: "boolean", description: "Follow tasks by polling only, even against a loopback service." },
    "callback-url": {
      type: "string",
      value: "URL",
      description: "Public address that forwards to --callback-listen; the service POSTs task updates there (a token is appended).",
    },
    "callback-listen": { type: "string", value: "HOST:PORT", description: "Where the callback listener listens (default 127.0.0.1, any free port)." },
    ...selectionOptions,
    plan: { type: "string", value: "FILE", description: "Create exactly what this saved plan lists ('plan --out FILE'); exit 2 if the manifest or lockfile changed." },
    "switch-service": {
      type: "boolean",
      description:
        "The lockfile names another service (base URL, region) than this run's: abandon its unfinished tasks there and create them again here (paid again). Without it such a run is refused.",
    },
    outputs: outputsOption,
    "recreate-lost": {
      type: "boolean",
      description: "Pay to make again the tasks whose results are lost (deleted at the service, not here): new attempts, new ids. Shows them and the cost first.",
    },
    "no-reuse": {
      type: "boolean",
      description: "Create every task, even one whose request was already paid for in another lockfile (reuse is on by default: its results are copied, no charge).",
    },
  },
  positionals: { min: 1, max: 100, name: "manifest" },
  run: async (args, io) => {
    const file = resolve(io.cwd, args.positionals[0]!);
    const v = args.values;
    const { maxWaitMs, concurrency, callbacks } = runFlags(v);
    // Several manifests at once, sharing the account's slots (issue 30): runSeveral.ts.
    if (args.positionals.length > 1) {
      const { runSeveral } = await import("./runSeveral.js");
      return runSeveral(args.positionals.map((p) => resolve(io.cwd, p)), { values: v, ...(maxWaitMs !== undefined ? { maxWaitMs } : {}), ...(concurrency !== undefined ? { concurrency } : {}), ...(callbacks !== undefined ? { callbacks } : {}) }, io);
    }
    // A run of a chosen part, or of a saved plan (which carries its own selection).
    let selection = selectionFromArgs("run", v);
    let saved: SavedPlan | undefined;
    if (typeof v.plan === "string") {
      if (selection) throw new UsageError({ command: "run", message: "--plan applies the selection the plan was made with: leave out --only, --where and --failed" });
      saved = await readSavedPlan(resolve(io.cwd, v.plan));
    }
    const service = serviceNameOf(v, io.env);
    const progressMode: ProgressMode = v.json ? "json" : v.quiet ? "quiet" : io.stdout.isTTY ? "tty" : "plain";
    const every = io.env["OMNIBATCH_PROGRESS_EVERY"] ? parseDuration(io.env["OMNIBATCH_PROGRESS_EVERY"]) : undefined;
    const makeProgress = () =>
      new Progress({ mode: progressMode, stdout: io.stdout, stderr: io.stderr, ...(every !== undefined && every > 0 ? { summaryEveryMs: every } : {}) });

    let loaded: LoadedManifest;
    try {
      loaded = withOutputs(await loadManifest(file, { service }), v, io.cwd, "run");
    } catch (error) {
      // --json: the problems as events too (stdout holds NDJSON only); the usual report goes to stderr.
      if (v.json && error instanceof ManifestInvalid) {
        for (const d of error.diagnostics) {
          const { lineText: _text, ...where } = d;
          io.stdout.write(`${JSON.stringify({ type: "diagnostic", at: new Date().toISOString(), ...where })}\n`);
        }
      }
      throw error;
    }
    if (saved) selection = await checkPlanApplies(saved, loaded, v.emulate === true, v.plan as string);
    if (selection) {
      const m = v.emulate ? emulatedManifest(loaded) : loaded;
      await checkSelectionEarly("run", m, selection, () => readLockFile(m.lockfilePath), manifestDecisions(loaded, v.emulate === true));
    }
    const runSelection = selection ? runSelectionOf(selection, loaded, saved ? new Set(saved.create.map((t) => t.id)) : undefined) : undefined;
    // The live view starts once the run has said and asked what it does with its plan
    // (runQuestions.ts): drawn before, it would draw over the question. Events until then wait.
    let progress: Progress | undefined;
    const early: RunEvent[] = [];
    const startProgress = () => {
      progress ??= makeProgress();
      for (const event of early.splice(0)) progress.onEvent(event);
      return progress;
    };
    const questions = runQuestions({
      io,
      loaded,
      selection,
      json: v.json === true,
      quiet: v.quiet === true,
      emulate: v.emulate === true,
      yes: v.yes === true,
      recreateLost: v["recreate-lost"] === true,
    });

    // First signal: stop cleanly (exit 3, lockfile written). Second: leave at once; the
    // lockfile is still valid because every write is atomic or journaled.
    const abort = new AbortController();
    let signals = 0;
    const onSignal = (name: NodeJS.Signals) => {
      signals++;
      if (signals > 1) process.exit(130);
      if (progressMode !== "json") io.stderr.write(`\nomnibatch: ${name}: stopping (again to quit at once); run the same command to continue\n`);
      abort.abort();
    };
    process.on("SIGINT", onSignal);
    process.on("SIGTERM", onSignal);
    // Nobody reads the output any more (`| head`): stop cleanly as on the first signal, silently.
    const onClosed = () => abort.abort();
    io.outputClosed?.addEventListener("abort", onClosed, { once: true });
    if (io.outputClosed?.aborted) abort.abort();
    try {
      const summary = await runLoadedManifest(loaded, {
        env: io.env,
        // Every wait scaled, for an emulator only (src/policy/timeScale.ts).
        ...(io.env[timeScaleVariable] !== undefined ? { timeScale: io.env[timeScaleVariable] } : {}),
        ...(typeof v["base-url"] === "string" ? { baseUrl: v["base-url"] } : {}),
        client: { service },
        ...(v.emulate ? { emulate: true } : {}),
        ...(concurrency !== undefined ? { concurrency } : {}),
        // --max-wait counts from the process's start (loading the manifest and the lockfile is
        // part of the run), except the time a person takes to answer a question.
        ...(maxWaitMs !== undefined ? { maxWaitMs, maxWaitSince: Math.round(performance.timeOrigin) } : {}),
        ...(callbacks !== undefined ? { callbacks } : {}),
        ...(runSelection ? { selection: runSelection } : {}),
        ...(saved ? { expectLockfile: saved.digests.lockfile } : {}),
        ...(v["switch-service"] ? { switchService: true } : {}),
        ...(v["recreate-lost"] ? { recreateLost: true } : {}),
        confirm: async (plan, lock) => {
          const go = await questions(plan, lock);
          if (go) startProgress();
          return go;
        },
        ...(v["no-reuse"] ? { reuse: false } : {}),
        signal: abort.signal,
        onEvent: (event) => (progress ? progress.onEvent(event) : event.type === "notice" ? early.push(event) : startProgress().onEvent(event)),
      });
      await annotateRunFailures(file, summary, io);
      return summary.exitCode as ExitCode;
    } catch (error) {
      if (!(error instanceof NotConfirmed)) throw error;
      io.stderr.write("omnibatch: not confirmed, nothing was sent; run again and answer y, or pass --yes\n");
      return ExitCode.Pending;
    } finally {
      startProgress().close();
      process.off("SIGINT", onSignal);
      process.off("SIGTERM", onSignal);
      io.outputClosed?.removeEventListener("abort", onClosed);
    }
  },
});
