// `omnibatch prune M.yaml [--yes]`: shows the superseded and orphaned tasks whose files
// and report records can go, and with --yes removes them under the run lock. Their
// lockfile lines stay (marked pruned) for the billing history: spend never goes down.

import { Cause, Effect, Exit } from "effect";
import { loadManifest } from "../../manifest/loadManifest.js";
import { emulatedManifest } from "../../run/EmulatedRun.js";
import { prunePlan, type PrunePlan } from "../../prune/prunePlan.js";
import { pruneTasks } from "../../prune/pruneTasks.js";
import { chargesLabel } from "../../report/billingMarkdown.js";
import { standingsFor } from "../../report/standing.js";
import { manifestDecisions } from "../../review/manifestDecisions.js";
import { summarizeBilling } from "../../report/summarizeBilling.js";
import { TASK_SIDECAR, writeReports } from "../../report/writeReports.js";
import { LockStore } from "../../state/LockStore.js";
import { defineCommand } from "../Command.js";
import { commonOptions } from "../commonOptions.js";
import { ExitCode } from "../../exit/ExitCode.js";
import { emulateOption, requireLockFile, shownPath } from "./status.js";
import { neutralise } from "../../api/neutralise.js";
import { serviceInEnv } from "../../rules/serviceNames.js";

const LIST_LIMIT = 25;

const megabytes = (n: number): string => `${(n / 1024 / 1024).toFixed(n < 1024 * 1024 ? 2 : 1)} MB`;

const describe = (plan: PrunePlan): string[] => {
  const out: string[] = [];
  for (const t of plan.tasks.slice(0, LIST_LIMIT)) {
    const why = t.standing === "superseded" ? `superseded by ${t.supersededBy}` : "orphaned: no longer in the manifest";
    out.push(`  ${t.id}  ${t.dir}  (${t.state}; ${why}; ${t.files.length} file(s))`);
  }
  if (plan.tasks.length > LIST_LIMIT) out.push(`  ... and ${plan.tasks.length - LIST_LIMIT} more (--json lists all)`);
  for (const w of plan.waiting) out.push(`  (kept for now: ${w.id} is still ${w.state}; prune again once it has finished)`);
  return out;
};

export const pruneCommand = defineCommand({
  name: "prune",
  summary: "Remove superseded and orphaned tasks' files and records (shows them; --yes removes).",
  usage: "omnibatch prune <manifest.yaml> [--yes] [--emulate] [--json]",
  description:
    "Lists the tasks whose results are no longer current: superseded (replaced by a changed task,\n" +
    "'~' in plan) and orphaned (no longer in the manifest, '-'), with their files. With --yes, removes\n" +
    "those files, their task.json and the folders left empty, and drops them from results.jsonl,\n" +
    "metadata.jsonl and report.html. Their lockfile lines stay, marked pruned: what they cost stays in\n" +
    "the billing history (spend to date never goes down) and a task asked for again is never re-paid.\n" +
    "Takes the run lock (exit 2 while a run holds it). Tasks still in flight are kept.\n" +
    "Exit 0; 1 when a file could not be removed (its task is kept); 2 when the manifest or lockfile is invalid or missing.",
  options: {
    yes: { type: "boolean", description: "Remove what is listed (without it, nothing is changed)." },
    emulate: emulateOption,
    json: { ...commonOptions.json, description: "Print what would be (or was) removed as one JSON object." },
  },
  positionals: { min: 1, max: 1, name: "manifest" },
  run: async (args, io) => {
    const manifest = args.positionals[0]!;
    const emulated = args.values.emulate === true;
    const json = args.values.json === true;
    const yes = args.values.yes === true;
    // The manifest must be valid: orphans are told by what it makes now.
    const loaded = await loadManifest(manifest, { cwd: io.cwd, service: serviceInEnv(io.env) });
    const m = emulated ? emulatedManifest(loaded) : loaded;
    const before = await requireLockFile(m.lockfilePath, manifest, io.cwd, emulated, io.stderr);
    const spentBefore = chargesLabel(summarizeBilling(before));
    // As plan reads them: a task made of an approved output is current, never pruned as orphaned.
    const reviews = manifestDecisions(loaded, emulated);

    if (!yes) {
      const plan = prunePlan(before, standingsFor(before, m, reviews), TASK_SIDECAR);
      if (json) {
        io.stdout.write(`${JSON.stringify({ removed: false, ...plan, ...(emulated ? { emulated: true } : {}) })}\n`);
        return ExitCode.Ok;
      }
      const lines =
        plan.tasks.length === 0
          ? [`Nothing to prune: every task in ${shownPath(m.lockfilePath, io.cwd)} is current${plan.waiting.length ? " or still in flight" : ""}.`, ...describe(plan)]
          : [
              `Would remove ${plan.tasks.length} task(s) (${plan.tasks.filter((t) => t.standing === "superseded").length} superseded, ${plan.tasks.filter((t) => t.standing === "orphaned").length} orphaned): ${plan.files} file(s), ${megabytes(plan.bytes)}:`,
              ...describe(plan),
              "",
              `Run 'omnibatch prune ${manifest}${emulated ? " --emulate" : ""} --yes' to remove them. Their spend stays in the billing history (spent to date: ${spentBefore}).`,
            ];
      io.stdout.write(`${lines.map(neutralise).join("\n")}\n`);
      return ExitCode.Ok;
    }

    // Under the run lock, from the lockfile as it is then (a run may have changed it since).
    const program = LockStore.use(m.lockfilePath, m.name, (store) =>
      Effect.gen(function* () {
        const lock = yield* store.snapshot;
        const plan = prunePlan(lock, standingsFor(lock, m, reviews), TASK_SIDECAR);
        const outcome = yield* pruneTasks(store, m.outputsDir, plan.tasks, Date.now());
        const after = yield* store.snapshot;
        // The reports drop the pruned tasks' records (billing.* keeps their spend).
        yield* Effect.promise(() =>
          writeReports({ lock: after, outputsDir: m.outputsDir, manifestName: m.name, force: true, emulated, manifest: m, ...(reviews ? { reviews } : {}) }),
        );
        return { plan, outcome, spent: chargesLabel(summarizeBilling(after)) };
      }),
    );
    const exit = await Effect.runPromiseExit(program);
    if (Exit.isFailure(exit)) throw Cause.squash(exit.cause);
    const { plan, outcome, spent } = exit.value;
    if (json) {
      io.stdout.write(`${JSON.stringify({ removed: true, ...plan, pruned: outcome.tasks, failed: outcome.failed, spent, ...(emulated ? { emulated: true } : {}) })}\n`);
      return outcome.failed.length ? ExitCode.TasksFailed : ExitCode.Ok;
    }
    const lines = [
      plan.tasks.length === 0
        ? "Nothing to prune: every task is current."
        : `Removed ${outcome.tasks} task(s): ${outcome.removed} file(s), ${megabytes(plan.bytes)}.`,
      ...describe(plan),
      ...outcome.failed.map((f) => `  could not remove ${f.path}: ${f.reason} (that task is kept; fix it and prune again)`),
      `Spent to date (unchanged, pruned tasks included): ${spent}.`,
    ];
    io.stdout.write(`${lines.map(neutralise).join("\n")}\n`);
    return outcome.failed.length ? ExitCode.TasksFailed : ExitCode.Ok;
  },
});
