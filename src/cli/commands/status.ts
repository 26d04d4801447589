// `omnibatch status M.yaml [--json]`: the lockfile's view, with no network and no API key.

import { relative } from "node:path";
import { statusView, formatStatus } from "../../report/statusView.js";
import { manifestLocations } from "../../report/manifestLocations.js";
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
export const requireLockFile = async (lockfilePath: string, manifest: string, cwd: string) => {
  const lock = await readLockFile(lockfilePath);
  if (lock === undefined) {
    const shown = shownPath(lockfilePath, cwd);
    throw new LockfileMissing({
      path: lockfilePath,
      message: `no lockfile at ${shown}: nothing has run for this manifest yet (or the lockfile was moved). Run 'omnibatch run ${manifest}' first.`,
    });
  }
  return lock;
};

export const statusCommand = defineCommand({
  name: "status",
  summary: "Show the lockfile's view: counts per job and state, in flight, failures.",
  usage: "omnibatch status <manifest.yaml> [--json]",
  description:
    "Reads the manifest's lockfile (no network, no API key) and shows per job how many tasks are\n" +
    "downloaded, in flight, queued and failed; what is in flight and for how long; why tasks failed;\n" +
    "results not downloaded yet that the service deletes soon (30 days after creation); what was spent;\n" +
    "and whether a run holds the lockfile now. Exit 2 when the lockfile is missing or damaged.",
  options: { json: { ...commonOptions.json, description: "Print the status as one JSON object." } },
  positionals: { min: 1, max: 1, name: "manifest" },
  run: async (args, io) => {
    const manifest = args.positionals[0]!;
    const where = await manifestLocations(manifest, io.cwd);
    if (where.manifestInvalid) {
      io.stderr.write(`omnibatch: note: ${manifest} has errors (see 'omnibatch validate ${manifest}'); showing its lockfile anyway.\n`);
    }
    const lock = await requireLockFile(where.lockfilePath, manifest, io.cwd);
    const now = Date.now();
    const view = statusView(
      lock,
      { lockfile: shownPath(where.lockfilePath, io.cwd), outputs: shownPath(where.outputsDir, io.cwd) },
      await inspectRunLock(where.lockfilePath, {}, now),
      now,
    );
    io.stdout.write(args.values.json ? `${JSON.stringify(view)}\n` : formatStatus(view, manifest, now));
    return ExitCode.Ok;
  },
});
