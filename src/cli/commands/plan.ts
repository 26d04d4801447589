// `omnibatch plan M.yaml`: validate, then compare with the lockfile beside the manifest
// and show what a run would create, what is done or in flight, what changed, what is
// orphaned and what waits on an upstream job, with counts and an estimated cost.

import { defineCommand } from "../Command.js";
import { ExitCode } from "../ExitCode.js";
import { displayPath, loadManifest } from "../../manifest/loadManifest.js";
import { ManifestInvalid } from "../../manifest/Diagnostic.js";
import { diffPlan } from "../../manifest/diffPlan.js";
import { budgetOutlook } from "../../manifest/budgetOutlook.js";
import { formatDiagnostics } from "../../manifest/formatDiagnostics.js";
import { annotateDiagnostics, annotateFailure } from "../ciAnnotations.js";
import { formatPlan, planJson } from "../../manifest/formatPlan.js";
import { readLockFile } from "../../state/readLockFile.js";
import { emulatedManifest } from "../../run/EmulatedRun.js";
import { planChanges } from "../../report/requestChanges.js";
import { readFile } from "node:fs/promises";
import { join } from "node:path";

export const planCommand = defineCommand({
  name: "plan",
  summary: "Show what a run would create, compared with the lockfile, and its estimated cost.",
  usage: "omnibatch plan <manifest.yaml> [--emulate] [--all] [--json]",
  description:
    "Validates the manifest, then compares it with the lockfile beside it:\n" +
    "  +  to create        =  done or in flight    ~  changed (old task kept, new one created)\n" +
    "  -  no longer in the manifest                …  waiting on an upstream job\n" +
    "Lists what changes and counts the unchanged (--all lists them too); counts per job\n" +
    "and in total, an estimated cost from the manifest's prices and, with a budget, what\n" +
    "the lockfile has spent and which tasks the budget would not reach.\n" +
    "With --emulate, compares with the lockfile that 'run --emulate' keeps instead.\n" +
    "Nothing is sent. Exit 0 when the manifest is valid, 2 when not.",
  options: {
    emulate: {
      type: "boolean",
      description: "Compare with the emulated lockfile that 'run --emulate' writes (M.emulate.lock.json), not the real one.",
    },
    json: { type: "boolean", description: "Print the plan as one JSON object on stdout, nothing else." },
    all: { type: "boolean", description: "List unchanged tasks one per line too (by default they are counted)." },
  },
  positionals: { min: 1, max: 1, name: "manifest" },
  run: async (args, io) => {
    const file = args.positionals[0]!;
    const json = args.values.json === true;
    try {
      const loaded = await loadManifest(file, { cwd: io.cwd });
      // The one rule for where emulated runs keep their state (shared with run and status).
      const m = args.values.emulate === true ? emulatedManifest(loaded) : loaded;
      const lock = await readLockFile(m.lockfilePath);
      const plan = diffPlan(m, lock);
      const outlook = m.budget ? budgetOutlook(plan, lock, m.budget) : undefined;
      annotateDiagnostics(m.warnings, io);
      if (json) {
        io.stdout.write(`${JSON.stringify({ ...(planJson(plan) as object), ...(outlook ? { budget: outlook } : {}), diagnostics: m.warnings })}\n`);
        return ExitCode.Ok;
      }
      if (m.warnings.length) io.stderr.write(`${formatDiagnostics(m.warnings)}\n\n`);
      io.stdout.write(
        formatPlan(plan, {
          manifest: displayPath(m.file, io.cwd),
          lockfile: displayPath(m.lockfilePath, io.cwd),
          all: args.values.all === true,
          ...(outlook ? { outlook } : {}),
          changes: planChanges(plan, lock, await readFile(join(m.outputsDir, "results.jsonl"), "utf8").catch(() => "")),
        }),
      );
      return ExitCode.Ok;
    } catch (error) {
      if (json && error instanceof ManifestInvalid) {
        annotateFailure(error, io);
        io.stdout.write(`${JSON.stringify({ valid: false, manifest: file, diagnostics: error.diagnostics })}\n`);
        return ExitCode.Invalid;
      }
      throw error;
    }
  },
});
