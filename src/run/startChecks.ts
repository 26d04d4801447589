// What a run checks before anything can be paid for: the outputs folder holds no link
// leading out of it (checkOutputsFolder), and the outputs folder and the lockfile's
// folder can be written to (a probe file made and removed in each). Found after the
// first create, either problem would leave paid work with nowhere to go; found here,
// it is a clear error and exit 2 with nothing sent.

import { randomBytes } from "node:crypto";
import { mkdir, unlink, writeFile } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import { Data, Effect } from "effect";
import { checkOutputsFolder, type LinkScope, type OutputsFolderUnsafe } from "../outputs/OutputsFolderCheck.js";

/** A folder the run must write to cannot be written to. Nothing was sent. */
export class FolderNotWritable extends Data.TaggedError("FolderNotWritable")<{
  readonly path: string;
  readonly what: "outputs folder" | "lockfile folder";
  readonly message: string;
}> {}

/** Makes `dir` if needed and writes and removes a probe file in it. */
const probe = (dir: string, what: FolderNotWritable["what"]): Effect.Effect<void, FolderNotWritable> =>
  Effect.tryPromise({
    try: async () => {
      await mkdir(dir, { recursive: true });
      const file = resolve(dir, `.omnibatch-probe-${randomBytes(6).toString("hex")}.tmp`);
      try {
        await writeFile(file, "probe\n", { flag: "wx" });
      } finally {
        await unlink(file).catch(() => undefined);
      }
    },
    catch: (error) => {
      const code = (error as NodeJS.ErrnoException)?.code;
      const why = code === "EACCES" || code === "EPERM" ? "permission denied" : code === "EROFS" ? "read-only file system" : code === "ENOSPC" ? "no space left on the device" : ((error as Error)?.message ?? String(error));
      return new FolderNotWritable({
        path: dir,
        what,
        message: `the ${what} ${dir} cannot be written to (${why}); results and the lockfile must be writable before anything is paid for. Fix its permissions or free space, or choose another folder; nothing was sent.`,
      });
    },
  });

/**
 * Runs every start-up check for a run writing results under `outputsDir` (task folders
 * `dirs`, relative to it: see LinkScope) and its lockfile at `lockfilePath`.
 */
export const startChecks = (outputsDir: string, dirs: readonly string[] | LinkScope, lockfilePath: string): Effect.Effect<void, FolderNotWritable | OutputsFolderUnsafe> =>
  Effect.gen(function* () {
    yield* probe(resolve(dirname(lockfilePath)), "lockfile folder");
    // Outputs in an object store: its own check (listing it) runs when it is opened.
    if (/^s3:\/\//i.test(outputsDir)) return;
    // Links first: the probe must not write (or delete) through a link leading out.
    yield* checkOutputsFolder(outputsDir, dirs);
    yield* probe(resolve(outputsDir), "outputs folder");
  });
