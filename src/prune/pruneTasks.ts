// Carries out a prune plan under the run lock: removes each task's files (inside the
// outputs folder only, never through a link out of it), then the folders left empty,
// then marks the task `pruned_at` in the lockfile, whose line stays for the billing
// history. Files first: a prune killed midway leaves records whose files are gone, which
// the next prune finishes; never files no record names.

import { readdir, rmdir, unlink } from "node:fs/promises";
import { dirname } from "node:path";
import { Effect } from "effect";
import { resolveInside } from "../outputs/OutputPaths.js";
import { realDirInside } from "../outputs/OutputsFolderCheck.js";
import type { LockStoreService } from "../state/LockStore.js";
import type { PruneTask } from "./prunePlan.js";

export interface PruneOutcome {
  readonly tasks: number;
  readonly removed: number;
  /** Files that could not be removed (their reason); the task is still marked pruned only when none. */
  readonly failed: readonly { readonly path: string; readonly reason: string }[];
}

const removeFile = async (outputsDir: string, rel: string): Promise<string | undefined> => {
  try {
    const abs = resolveInside(outputsDir, rel);
    await realDirInside(outputsDir, dirname(abs));
    await unlink(abs);
    return undefined;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return undefined; // already gone: nothing to remove
    return (error as Error).message;
  }
};

/** Removes `dir` and its parents up to (not including) the outputs folder while they are empty. */
const removeEmptyFolders = async (outputsDir: string, dir: string): Promise<void> => {
  const parts = dir.split("/");
  for (let n = parts.length; n > 0; n--) {
    let abs: string;
    try {
      abs = resolveInside(outputsDir, parts.slice(0, n).join("/"));
      await realDirInside(outputsDir, abs);
    } catch {
      return;
    }
    const left = await readdir(abs).catch(() => undefined);
    if (left === undefined || left.length > 0) return;
    if (!(await rmdir(abs).then(() => true, () => false))) return;
  }
};

export const pruneTasks = (
  store: LockStoreService,
  outputsDir: string,
  tasks: readonly PruneTask[],
  now: number,
): Effect.Effect<PruneOutcome, unknown> =>
  Effect.gen(function* () {
    const all = yield* store.all;
    let removed = 0;
    let pruned = 0;
    const failed: { path: string; reason: string }[] = [];
    for (const task of tasks) {
      const problems = yield* Effect.promise(async () => {
        const out: { path: string; reason: string }[] = [];
        for (const rel of task.files) {
          const reason = await removeFile(outputsDir, rel);
          if (reason === undefined) removed++;
          else out.push({ path: rel, reason });
        }
        await removeEmptyFolders(outputsDir, task.dir);
        return out;
      });
      failed.push(...problems);
      const rec = all.get(task.id);
      if (problems.length > 0 || !rec) continue;
      yield* store.put(task.id, { ...rec, pruned_at: now, updated_at: now });
      pruned++;
    }
    yield* store.flush;
    return { tasks: pruned, removed, failed };
  });
