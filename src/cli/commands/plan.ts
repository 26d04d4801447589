// `omnibatch plan M.yaml`: validate, then compare with the lockfile beside the manifest
// and show what a run would create, what is done or in flight, what changed, what is
// orphaned and what waits on an upstream job, with counts and an estimated cost.

import { resolve } from "node:path";
import { outputsOption, withOutputs } from "../outputsOption.js";
import { defineCommand } from "../Command.js";
import { ExitCode } from "../../exit/ExitCode.js";
import { displayPath, loadManifest } from "../../manifest/loadManifest.js";
import { commonOptions, serviceNameOf } from "../commonOptions.js";
import { ManifestInvalid } from "../../manifest/Diagnostic.js";
import { diffPlan } from "../../plan/diffPlan.js";
import { budgetOutlook } from "../../plan/budgetOutlook.js";
import { formatDiagnostics } from "../../manifest/formatDiagnostics.js";
import { annotateDiagnostics, annotateFailure } from "../ciAnnotations.js";
import { formatPlan, planJson } from "../../plan/formatPlan.js";
import { readLockFile } from "../../state/readLockFile.js";
import { emulatedManifest } from "../../run/EmulatedRun.js";
import { savePlan } from "../../plan/savedPlan.js";
import { digestOfManifest, lockDigest, selectedPlan, selectionFromArgs, selectionLines, selectionOptions, writeSavedPlan } from "../selectionFlags.js";
import { manifestDecisions } from "../../review/manifestDecisions.js";
import { scanOrReason } from "../scanOrReason.js";
import { neutralise } from "../../api/neutralise.js";
import { formatResults, resultsPart } from "../../report/statusView.js";
import { planChanges } from "../../report/requestChanges.js";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { warnForeignLines } from "./status.js";
import { openReuse } from "../../run/reuseIndex.js";
import { serviceIdentity } from "../../run/serviceCheck.js";
import { DEFAULT_BASE_URL } from "../../api/OmniClient.js";

export const planCommand = defineCommand({
  name: "plan",
  summary: "Show what a run would create, compared with the lockfile, and its estimated cost.",
  usage: "omnibatch plan <manifest.yaml> [--emulate] [--all] [--json] [--only JOB] [--where K=V] [--failed] [--out plan.json]",
  description:
    "Validates the manifest, then compares it with the lockfile beside it:\n" +
    "  +  to create        =  done or in flight    ~  changed (old task kept, new one created)\n" +
    "  -  no longer in the manifest                …  waiting on an upstream job (or on review)\n" +
    "Lists what changes and counts the unchanged (--all lists them too); counts per job\n" +
    "and in total, an estimated cost from the manifest's prices and, with a budget, what\n" +
    "the lockfile has spent and which tasks the budget would not reach.\n" +
    "With --emulate, compares with the lockfile that 'run --emulate' keeps instead.\n" +
    "--only, --where and --failed show the plan of that part only (as 'run' with them would do it).\n" +
    "--out FILE saves the exact plan (ids to create, estimates, digests of the manifest and the\n" +
    "lockfile); 'run --plan FILE' then creates exactly those, or refuses if either changed.\n" +
    "Nothing is sent to the service (with outputs in a store, its prefix is listed once to count\n" +
    "present, restorable and lost results). Exit 0 when the manifest is valid, 2 when not or when\n" +
    "the store cannot be listed.",
  options: {
    emulate: {
      type: "boolean",
      description: "Compare with the emulated lockfile that 'run --emulate' writes (M.emulate.lock.json), not the real one.",
    },
    json: { type: "boolean", description: "Print the plan as one JSON object on stdout, nothing else." },
    outputs: outputsOption,
    all: { type: "boolean", description: "List unchanged tasks one per line too (by default they are counted)." },
    ...selectionOptions,
    out: { type: "string", value: "FILE", description: "Save this exact plan as JSON, for 'run --plan FILE' (e.g. after a review)." },
    service: commonOptions.service,
    "no-reuse": { type: "boolean", description: "Show the plan without reuse: tasks whose request was paid for in another lockfile are to create too." },
  },
  positionals: { min: 1, max: 1, name: "manifest" },
  run: async (args, io) => {
    const file = args.positionals[0]!;
    const json = args.values.json === true;
    const selection = selectionFromArgs("plan", args.values);
    try {
      const loaded = withOutputs(await loadManifest(file, { cwd: io.cwd, service: serviceNameOf(args.values, io.env) }), args.values, io.cwd, "plan");
      // The one rule for where emulated runs keep their state (shared with run and status).
      const m = args.values.emulate === true ? emulatedManifest(loaded) : loaded;
      const lock = await readLockFile(m.lockfilePath);
      if (lock !== undefined) warnForeignLines(lock, m.lockfilePath, io.cwd, io.stderr);
      const reviews = manifestDecisions(m, args.values.emulate === true);
      // Paid results of the same request in other lockfiles (issue 31): shown as reused.
      // The service the run would use (OMNIBATCH_BASE_URL): a source of it whose files are gone may be fetched by its task id.
      const service = args.values.emulate === true ? undefined : serviceIdentity(io.env["OMNIBATCH_BASE_URL"]?.trim() || DEFAULT_BASE_URL);
      const reuser = await openReuse(m, { emulated: args.values.emulate === true, off: args.values["no-reuse"] === true, ...(lock ? { ownLock: lock } : {}), ...(service ? { service } : {}), now: Date.now(), env: io.env, warn: (w) => io.stderr.write(`omnibatch: ${w}\n`) });
      const plan = selection ? selectedPlan("plan", m, lock, selection, reviews, reuser?.reusable) : diffPlan(m, lock, { ...(reviews ? { reviews } : {}), ...(reuser ? { reusable: reuser.reusable } : {}) });
      if (typeof args.values.out === "string") {
        const out = resolve(io.cwd, args.values.out);
        const saved = savePlan({
          plan,
          name: m.name,
          emulated: args.values.emulate === true,
          manifestDigest: await digestOfManifest(m),
          lockDigest: lockDigest(lock),
          ...(selection ? { selection } : {}),
          now: new Date(),
        });
        await writeSavedPlan(out, saved);
        io.stderr.write(`plan saved to ${displayPath(out, io.cwd)}: ${saved.create.length} task(s) to create; apply it with 'omnibatch run ${args.positionals[0]}${args.values.emulate === true ? " --emulate" : ""} --plan ${args.values.out}'\n`);
      }
      const outlook = m.budget ? budgetOutlook(plan, lock, m.budget) : undefined;
      annotateDiagnostics(m.warnings, io);
      // What the lockfile records as made, each present, restorable or lost (issue 16).
      // In a store: one listing of its prefix; one that cannot be listed leaves the states unknown (exit 2).
      const scanned = await scanOrReason(lock?.tasks ?? {}, m.outputsDir, Date.now(), io.env);
      const results = "results" in scanned ? resultsPart(scanned.results) : undefined;
      const unknownNote = () => {
        if (!("unknown" in scanned)) return ExitCode.Ok;
        io.stderr.write(`omnibatch: ${scanned.unknown}; the results' states (present, restorable, lost) are not known: the rest of the plan is from the lockfile alone\n`);
        return ExitCode.Invalid;
      };
      // Why each changed task (~) is new: from the lockfile and the requests the reports recorded (read only when there is one).
      const changes =
        plan.total["~"] > 0
          ? planChanges(plan, lock, await readFile(join(m.outputsDir, "results.jsonl"), "utf8").catch(() => ""), (t, a) => m.withAttempt(t, a).requestHash)
          : new Map<string, readonly string[]>();
      if (json) {
        const unknown = "unknown" in scanned ? { results_unknown: scanned.unknown } : {};
        io.stdout.write(`${JSON.stringify({ ...(planJson(plan, changes) as object), ...(outlook ? { budget: outlook } : {}), results, ...unknown, diagnostics: m.warnings })}\n`);
        return unknownNote();
      }
      if (m.warnings.length) io.stderr.write(`${formatDiagnostics(m.warnings)}\n\n`);
      for (const l of selectionLines(plan)) io.stdout.write(`${l}\n`);
      io.stdout.write(
        formatPlan(plan, {
          manifest: displayPath(m.file, io.cwd),
          lockfile: displayPath(m.lockfilePath, io.cwd),
          all: args.values.all === true,
          ...(outlook ? { outlook } : {}),
          changes,
        }),
      );
      const lines = results ? formatResults(results) : [];
      // Names come from manifests and data files: inert on a terminal.
      if (lines.length > 0) io.stdout.write(`\n${lines.map(neutralise).join("\n")}\n`);
      return unknownNote();
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
