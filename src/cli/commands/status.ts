// `omnibatch status M.yaml [--json]`: the lockfile's view, with no network and no API key.

import { relative } from "node:path";
import { existsSync } from "node:fs";
import { emulatedLockfilePath, emulatedPaths } from "../../run/EmulatedRun.js";
import { statusView, formatStatus } from "../../report/statusView.js";
import { scanResults } from "../../outputs/scanResults.js";
import { manifestLocations, type ManifestLocations } from "../../report/manifestLocations.js";
import { LockfileMissing } from "../../state/LockfileError.js";
import { readLockFile } from "../../state/readLockFile.js";
import { inspectRunLock } from "../../state/RunLock.js";
import { defineCommand } from "../Command.js";
import { commonOptions } from "../commonOptions.js";
import { ExitCode } from "../ExitCode.js";

/** A path as the user would type it: relative to the working directory when inside it. */
export const shownPath = (path: string, cwd: string): string => {
  const rel = relative(cwd, path);
  return rel !== "" && !rel.startsWith("..") ? rel : path;
};

/** The manifest's lockfile, or LockfileMissing saying what to do. */
export const requireLockFile = async (lockfilePath: string, manifest: string, cwd: string, emulated = false) => {
  const lock = await readLockFile(lockfilePath);
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
export const locationsFor = async (manifest: string, cwd: string, emulated: boolean): Promise<ManifestLocations> => {
  const where = await manifestLocations(manifest, cwd);
  return emulated ? { ...where, ...emulatedPaths(where) } : where;
};

export const statusCommand = defineCommand({
  name: "status",
  summary: "Show the lockfile's view: counts per job and state, in flight, failures.",
  usage: "omnibatch status <manifest.yaml> [--emulate] [--json]",
  description:
    "Reads the manifest's lockfile (no network, no API key) and shows per job how many tasks are\n" +
    "downloaded, in flight, queued and failed; what is in flight and for how long; why tasks failed;\n" +
    "results not downloaded yet that the service deletes soon (30 days after creation); what was spent;\n" +
    "and whether a run holds the lockfile now. Exit 2 when the lockfile is missing or damaged.\n" +
    "With --emulate, the same for the emulated lockfile that 'run --emulate' keeps.",
  options: { emulate: emulateOption, json: { ...commonOptions.json, description: "Print the status as one JSON object." } },
  positionals: { min: 1, max: 1, name: "manifest" },
  run: async (args, io) => {
    const manifest = args.positionals[0]!;
    const emulated = args.values.emulate === true;
    const where = await locationsFor(manifest, io.cwd, emulated);
    if (where.manifestInvalid) {
      io.stderr.write(`omnibatch: note: ${manifest} has errors (see 'omnibatch validate ${manifest}'); showing its lockfile anyway.\n`);
    }
    const lock = await requireLockFile(where.lockfilePath, manifest, io.cwd, emulated);
    const now = Date.now();
    const view = statusView(
      lock,
      { lockfile: shownPath(where.lockfilePath, io.cwd), outputs: shownPath(where.outputsDir, io.cwd) },
      await inspectRunLock(where.lockfilePath, {}, now),
      now,
      where.shape,
      scanResults(lock.tasks, where.outputsDir, now),
    );
    if (args.values.json) io.stdout.write(`${JSON.stringify(emulated ? { ...view, emulated: true } : view)}\n`);
    else io.stdout.write(`${emulated ? "EMULATED (run --emulate; nothing real was created or charged)\n" : ""}${formatStatus(view, manifest, now)}`);
    return ExitCode.Ok;
  },
});
