// `omnibatch run M.yaml`: turns flags into a call of the engine (runManifest), wires
// SIGINT/SIGTERM to a clean stop, shows progress, and returns the run's exit code.

import { resolve } from "node:path";
import type { CallbackSetting } from "../../run/CallbackSetting.js";
import { timeScaleVariable } from "../../policy/timeScale.js";
import { Progress, type ProgressMode } from "../Progress.js";
import { runLoadedManifest } from "../../run/runLoadedManifest.js";
import { budgetOutlook } from "../../manifest/budgetOutlook.js";
import { diffPlan } from "../../manifest/diffPlan.js";
import { loadManifest } from "../../manifest/loadManifest.js";
import { ManifestInvalid } from "../../manifest/Diagnostic.js";
import type { LoadedManifest } from "../../manifest/LoadedManifest.js";
import { readLockFile } from "../../state/readLockFile.js";
import { manifestDecisions } from "../../review/manifestDecisions.js";
import { askYesNo, recreateQuestion, spendQuestion } from "../confirmSpend.js";
import { recreatePlan } from "../../run/recreatePlan.js";
import { resultsAt } from "../../outputs/resultsAt.js";
import { defineCommand } from "../Command.js";
import { commonOptions, serviceNameOf } from "../commonOptions.js";
import { ExitCode } from "../../exit/ExitCode.js";
import { UsageError } from "../UsageError.js";
import { annotateRunFailures } from "../ciAnnotations.js";
import { emulatedManifest } from "../../run/EmulatedRun.js";
import type { SavedPlan } from "../../manifest/savedPlan.js";
import type { PlanResult } from "../../manifest/diffPlan.js";
import type { RunSelection } from "../../engine/RunSelection.js";
import { checkPlanApplies, readSavedPlan, runSelectionOf, selectedPlan, selectionFromArgs, selectionLines, selectionOptions } from "../selectionFlags.js";
import { outputsOption, withOutputs } from "../outputsOption.js";

const units: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** `90s`, `25m`, `2h`, `1.5h`, `500ms`; a bare number is seconds. */
export const parseDuration = (text: string): number | undefined => {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*$/i.exec(text);
  if (!m) return undefined;
  return Math.round(Number(m[1]) * units[(m[2] ?? "s").toLowerCase()]!);
};

/** --no-callbacks / --callback-url / --callback-listen: undefined leaves the choice to the engine (on for loopback). */
const callbackSetting = (v: Record<string, string | boolean | string[] | undefined>): false | CallbackSetting | undefined => {
  const url = typeof v["callback-url"] === "string" ? v["callback-url"] : undefined;
  const listen = typeof v["callback-listen"] === "string" ? v["callback-listen"] : undefined;
  if (v["no-callbacks"]) {
    if (url !== undefined || listen !== undefined) {
      throw new UsageError({ command: "run", message: "--no-callbacks excludes --callback-url and --callback-listen" });
    }
    return false;
  }
  if (url === undefined && listen === undefined) return undefined;
  if (url !== undefined && !/^https?:\/\/[^/\s]+/i.test(url)) {
    throw new UsageError({ command: "run", message: `--callback-url '${url}' must be an http(s) address, e.g. https://hooks.example.com/omnibatch` });
  }
  let host: string | undefined;
  let port: number | undefined;
  if (listen !== undefined) {
    const m = /^\[?([^\]]*?)\]?:(\d{1,5})$/.exec(listen.trim());
    port = m ? Number(m[2]) : NaN;
    if (!m || !m[1] || port > 65535) {
      throw new UsageError({ command: "run", message: `--callback-listen '${listen}' must be HOST:PORT, e.g. 0.0.0.0:8787` });
    }
    host = m[1];
  }
  return { ...(url !== undefined ? { url } : {}), ...(host !== undefined ? { host } : {}), ...(port !== undefined ? { port } : {}) };
};

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
    let maxWaitMs: number | undefined;
    if (typeof v["max-wait"] === "string") {
      maxWaitMs = parseDuration(v["max-wait"]);
      if (maxWaitMs === undefined || maxWaitMs <= 0) {
        throw new UsageError({ command: "run", message: `--max-wait '${v["max-wait"]}' is not a duration: use e.g. 90s, 25m or 2h` });
      }
    }
    let concurrency: number | undefined;
    if (typeof v.concurrency === "string") {
      concurrency = Number(v.concurrency);
      if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 1000) {
        throw new UsageError({ command: "run", message: `--concurrency '${v.concurrency}' must be a whole number from 1 to 1000` });
      }
    }
    const callbacks = callbackSetting(v);
    if (v.emulate && typeof v["base-url"] === "string") {
      throw new UsageError({ command: "run", message: "--emulate and --base-url exclude each other: --emulate runs against an in-process emulator" });
    }
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
    let chosen: PlanResult | undefined;
    let runSelection: RunSelection | undefined;
    if (saved) selection = await checkPlanApplies(saved, loaded, v.emulate === true, v.plan as string);
    if (selection) {
      const m = v.emulate ? emulatedManifest(loaded) : loaded;
      const reviews = manifestDecisions(loaded, v.emulate === true);
      chosen = selectedPlan("run", m, await readLockFile(m.lockfilePath), selection, reviews);
      runSelection = runSelectionOf(selection, loaded, saved ? new Set(saved.create.map((t) => t.id)) : undefined);
      // What this part will create and cost, before anything is sent.
      for (const message of selectionLines(chosen)) {
        if (v.json) io.stdout.write(`${JSON.stringify({ type: "notice", at: new Date().toISOString(), level: "info", message })}\n`);
        else if (!v.quiet) io.stderr.write(`${message}\n`);
      }
    }
    // --max-wait counts from the process's start (loading the manifest and the lockfile is
    // part of the run), except the time a person takes to answer a question below.
    let maxWaitSince = Math.round(performance.timeOrigin);
    // Ask before spending: only a person at a terminal, only when money can go out.
    // Without a key the run stops before sending anything: no question (the address has a default).
    const configured = !!io.env["OMNIBATCH_API_KEY"];
    if (!v.emulate && !v.yes && !v.json && configured && io.stdout.isTTY && io.stdin?.isTTY) {
      const lock = await readLockFile(loaded.lockfilePath);
      const reviews = manifestDecisions(loaded, false);
      // What the run will really pay for: results reused from other lockfiles cost nothing (issue 31).
      const reuser = v["no-reuse"] ? undefined : await (await import("../../run/reuseIndex.js")).openReuse(loaded, { emulated: false, ...(lock ? { ownLock: lock } : {}), warn: () => {} });
      const plan = chosen ?? diffPlan(loaded, lock, { ...(reviews ? { reviews } : {}), ...(reuser ? { reusable: reuser.reusable } : {}) });
      const question = spendQuestion(plan, loaded.budget ? budgetOutlook(plan, lock, loaded.budget) : undefined);
      if (question !== undefined && !(await askYesNo(question, io.stdin, io.stdout))) {
        io.stderr.write("omnibatch: not confirmed, nothing was sent; run again and answer y, or pass --yes\n");
        return ExitCode.Pending;
      }
      if (question !== undefined) maxWaitSince = Date.now();
    }

    // Paying again for lost results: only when asked, shown first, confirmed on a terminal.
    if (v["recreate-lost"] && !v.emulate) {
      const lock = await readLockFile(loaded.lockfilePath);
      // With outputs in a store, its listing says what is there (one that cannot be listed: exit 2, nothing sent).
      const at = await resultsAt(loaded.outputsDir, io.env);
      const question = recreateQuestion(recreatePlan(loaded, lock, Date.now(), at), !v.yes && !v.json && configured && !!io.stdout.isTTY && !!io.stdin?.isTTY);
      if (question !== undefined && !v.json) {
        if (question.endsWith("[y/N] ")) {
          if (!(await askYesNo(question, io.stdin!, io.stdout))) {
            io.stderr.write("omnibatch: not confirmed, nothing was sent; run again and answer y, or pass --yes\n");
            return ExitCode.Pending;
          }
          maxWaitSince = Date.now();
        } else io.stdout.write(question);
      }
    }

    const mode = progressMode;
    // Without a terminal (CI): a status line this often (OMNIBATCH_PROGRESS_EVERY, e.g. 10s; default 30 s).
    const progress = makeProgress();

    // First signal: stop cleanly (exit 3, lockfile written). Second: leave at once; the
    // lockfile is still valid because every write is atomic or journaled.
    const abort = new AbortController();
    let signals = 0;
    const onSignal = (name: NodeJS.Signals) => {
      signals++;
      if (signals === 1) {
        if (mode !== "json") io.stderr.write(`\nomnibatch: ${name}: stopping (again to quit at once); run the same command to continue\n`);
        abort.abort();
      } else {
        process.exit(130);
      }
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
        ...(maxWaitMs !== undefined ? { maxWaitMs, maxWaitSince } : {}),
        ...(callbacks !== undefined ? { callbacks } : {}),
        ...(runSelection ? { selection: runSelection } : {}),
        ...(saved ? { expectLockfile: saved.digests.lockfile } : {}),
        ...(v["switch-service"] ? { switchService: true } : {}),
        ...(v["recreate-lost"] ? { recreateLost: true } : {}),
        ...(v["no-reuse"] ? { reuse: false } : {}),
        signal: abort.signal,
        onEvent: progress.onEvent,
      });
      await annotateRunFailures(file, summary, io);
      return summary.exitCode as ExitCode;
    } finally {
      progress.close();
      process.off("SIGINT", onSignal);
      process.off("SIGTERM", onSignal);
      io.outputClosed?.removeEventListener("abort", onClosed);
    }
  },
});
