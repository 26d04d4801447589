// `omnibatch status M.yaml [--json]`: the lockfile's view, with no service and no API key (outputs in a
// store are listed once, for the results' states).

import { scanOrReason } from "../scanOrReason.js";
import { outputsOption, withOutputs } from "../outputsOption.js";
import { relative } from "node:path";
import { existsSync } from "node:fs";
import { emulatedLockfilePath, emulatedManifest, emulatedPaths } from "../../run/EmulatedRun.js";
import { standingsFor } from "../../report/standing.js";
import type { LoadedManifest } from "../../manifest/LoadedManifest.js";
import { diffPlan, type PlanResult } from "../../plan/diffPlan.js";
import { reviewPlanText } from "../../plan/formatPlan.js";
import { manifestDecisions } from "../../review/manifestDecisions.js";
import type { DecisionIndex } from "../../review/reviewDecision.js";
import type { LockFile } from "../../state/LockFile.js";
import { statusView, formatStatus } from "../../report/statusView.js";
import { manifestLocations, type ManifestLocations } from "../../report/manifestLocations.js";
import { LockfileMissing } from "../../state/LockfileError.js";
import { foreignLinesWarning } from "../../state/foreignLines.js";
import { readLockFile } from "../../state/readLockFile.js";
import { inspectRunLock } from "../../state/RunLock.js";
import { defineCommand } from "../Command.js";
import { commonOptions } from "../commonOptions.js";
import { ExitCode } from "../../exit/ExitCode.js";

/** A path as the user would type it: relative to the working directory when inside it. */
export const shownPath = (path: string, cwd: string): string => {
  if (/^s3:\/\//i.test(path)) return path;
  const rel = relative(cwd, path);
  return rel !== "" && !rel.startsWith("..") ? rel : path;
};

/** The warning naming a lockfile's lines of another manifest (file:line), when it has any. */
export const warnForeignLines = (lock: LockFile, lockfilePath: string, cwd: string, stderr: { write(text: string): unknown }): void => {
  const warning = foreignLinesWarning(shownPath(lockfilePath, cwd), lock.name, lock.foreign);
  if (warning) stderr.write(`omnibatch: warning: ${warning}\n`);
};

/** The manifest's lockfile, or LockfileMissing saying what to do. */
export const requireLockFile = async (
  lockfilePath: string,
  manifest: string,
  cwd: string,
  emulated = false,
  /** Where the warning about lines of another manifest goes (foreignLines.ts), if anywhere. */
  stderr?: { write(text: string): unknown },
) => {
  const lock = await readLockFile(lockfilePath);
  if (lock !== undefined && stderr !== undefined) warnForeignLines(lock, lockfilePath, cwd, stderr);
  if (lock === undefined) {
    const shown = shownPath(lockfilePath, cwd);
    const what = emulated ? "nothing has run on the emulator for this manifest yet" : "nothing has run for this manifest yet";
    // Only emulated runs so far: say where their lockfile is, so the user is not puzzled.
    const hint = !emulated && existsSync(emulatedLockfilePath(lockfilePath)) ? " (Only emulated runs so far: add --emulate to see them.)" : "";
    throw new LockfileMissing({
      path: lockfilePath,
      message: `no lockfile at ${shown}: ${what} (or the lockfile was moved). Run 'omnibatch run ${manifest}${emulated ? " --emulate" : ""}' first.${hint}`,
    });
  }
  return lock;
};

/** `--emulate` on status and report: what `run --emulate` wrote, not the real lockfile and outputs. */
export const emulateOption = {
  type: "boolean",
  description: "Use the emulated lockfile and outputs that 'run --emulate' writes (M.emulate.lock.json, <outputs>-emulated).",
} as const;

/** The manifest's locations, or its emulated ones. */
export const locationsFor = async (
  manifest: string,
  cwd: string,
  emulated: boolean,
  values: Readonly<Record<string, unknown>> = {},
  command = "status",
): Promise<ManifestLocations> => {
  // --outputs first: the emulated outputs are named after the ones in use.
  const where = withOutputs(await manifestLocations(manifest, cwd), values, cwd, command);
  return emulated
    ? { ...where, ...emulatedPaths(where), ...(where.manifest ? { manifest: emulatedManifest(where.manifest) } : {}) }
    : where;
};

/** Outputs awaiting review and what waits on them, for a manifest with `review` jobs (its decisions read once by the caller). */
const reviewStatus = (m: LoadedManifest | undefined, lock: LockFile, reviews: DecisionIndex | undefined): PlanResult["review"] =>
  m && reviews ? diffPlan(m, lock, { reviews }).review : undefined;

export const statusCommand = defineCommand({
  name: "status",
  summary: "Show the lockfile's view: counts per job and state, in flight, failures.",
  usage: "omnibatch status <manifest.yaml> [--emulate] [--all] [--json]",
  description:
    "Reads the manifest's lockfile (no service, no API key) and shows per job how many tasks are\n" +
    "downloaded, in flight, queued and failed (and how many reused a paid result of the same request);\n" +
    "what is in flight and for how long; why tasks failed;\n" +
    "results not downloaded yet that the service deletes soon (30 days after creation); what was spent;\n" +
    "and whether a run holds the lockfile now. Exit 2 when the lockfile is missing or damaged.\n" +
    "Counts the current tasks: tasks replaced by a changed one (superseded) and tasks no longer in\n" +
    "the manifest (orphaned) are shown apart (--all counts and lists them); spend counts everything.\n" +
    "Each recorded result is present, restorable or lost: looked for in the outputs folder, or, with\n" +
    "outputs in a store, in one listing of its prefix (exit 2 when the store cannot be listed).\n" +
    "With --emulate, the same for the emulated lockfile that 'run --emulate' keeps.",
  options: {
    emulate: emulateOption,
    all: { type: "boolean", description: "Count superseded and orphaned tasks too, and list them." },
    json: { ...commonOptions.json, description: "Print the status as one JSON object." },
    outputs: outputsOption,
  },
  positionals: { min: 1, max: 1, name: "manifest" },
  run: async (args, io) => {
    const manifest = args.positionals[0]!;
    const emulated = args.values.emulate === true;
    const where = await locationsFor(manifest, io.cwd, emulated, args.values);
    if (where.manifestInvalid) {
      io.stderr.write(`omnibatch: note: ${manifest} has errors (see 'omnibatch validate ${manifest}'); showing its lockfile anyway.\n`);
    }
    const lock = await requireLockFile(where.lockfilePath, manifest, io.cwd, emulated, io.stderr);
    // As plan reads them: the standings (orphaned or current) and the review line agree with it.
    const reviews = where.manifest ? manifestDecisions(where.manifest, emulated) : undefined;
    const now = Date.now();
    // The results' states: the folder, or one listing of the store (a store that cannot be
    // listed: the rest is shown from the lockfile alone, and the command exits 2).
    const scanned = await scanOrReason(lock.tasks, where.outputsDir, now, io.env);
    const view = statusView(
      lock,
      { lockfile: shownPath(where.lockfilePath, io.cwd), outputs: shownPath(where.outputsDir, io.cwd) },
      await inspectRunLock(where.lockfilePath, {}, now),
      now,
      where.shape,
      standingsFor(lock, where.manifest, reviews),
      args.values.all === true,
      "results" in scanned ? scanned.results : undefined,
    );
    const review = reviewStatus(where.manifest, lock, reviews);
    const unknown = "unknown" in scanned ? { results_unknown: scanned.unknown } : {};
    if (args.values.json) io.stdout.write(`${JSON.stringify({ ...view, ...unknown, ...(emulated ? { emulated: true } : {}), ...(review ? { review } : {}) })}\n`);
    else {
      io.stdout.write(`${emulated ? "EMULATED (run --emulate; nothing real was created or charged)\n" : ""}${formatStatus(view, manifest, now)}`);
      if (review) io.stdout.write(`review: ${reviewPlanText(review)}\n`);
    }
    if ("unknown" in scanned) {
      io.stderr.write(`omnibatch: ${scanned.unknown}; the results' states (present, restorable, lost) are not known: the rest is from the lockfile alone\n`);
      return ExitCode.Invalid;
    }
    return ExitCode.Ok;
  },
});
