// The size of a typical run's git diff of the lockfile. After a finished run, a later
// scheduled run is staged: the committed lockfile is the finished one with some tasks
// set back to `submitted` (the previous run stopped while they were in flight) and some
// missing (new in the manifest); the engine runs again against the same emulator, and
// `git diff --numstat` of the lockfile is measured against the tasks whose records changed.

import { execFileSync } from "node:child_process";
import { copyFileSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { LockTask } from "../../src/state/LockFile.js";
import { encodeLockFile } from "../../src/state/LockfileText.js";
import { readLockFile } from "../../src/state/readLockFile.js";
import { sameJson } from "../../src/state/sameJson.js";

export interface LockfileDiff {
  readonly tasksChanged: number;
  readonly linesAdded: number;
  readonly linesRemoved: number;
  /** Lines added ÷ tasks changed: 1 for a changed task (its line), 2 for a new one (its line and blank line). */
  readonly linesPerTask: number;
  readonly staged: { readonly setBack: number; readonly removed: number };
}

const git = (cwd: string, ...args: string[]): string =>
  execFileSync("git", ["-c", "user.email=bench@example.invalid", "-c", "user.name=bench", "-c", "commit.gpgsign=false", ...args], {
    cwd,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
  });

/**
 * Stages the earlier state of `lockfilePath` (every 10th task set back to submitted,
 * every 20th missing), commits it in a git repository made in `repoDir`, runs `rerun`
 * on the staged file, and measures the diff.
 */
export const measureLockfileDiff = async (
  lockfilePath: string,
  repoDir: string,
  rerun: (lockfilePath: string) => Promise<void>,
): Promise<LockfileDiff> => {
  const finished = await readLockFile(lockfilePath);
  if (!finished) throw new Error(`no lockfile at ${lockfilePath}`);
  const ids = Object.keys(finished.tasks).sort();
  const earlier = new Map<string, LockTask>();
  let setBack = 0;
  let removed = 0;
  ids.forEach((id, i) => {
    const t = finished.tasks[id]!;
    if (i % 20 === 7) return void removed++;
    if (i % 10 === 3) {
      setBack++;
      const { finished_at: _f, created_at: _c, ...rest } = t;
      earlier.set(id, { ...rest, state: "submitted", outputs: [], billing: [], updated_at: t.submitted_at ?? t.updated_at });
      return;
    }
    earlier.set(id, t);
  });
  mkdirSync(repoDir, { recursive: true });
  git(repoDir, "init", "-q");
  const staged = join(repoDir, "m.lock.json");
  writeFileSync(staged, encodeLockFile(finished.name, earlier));
  git(repoDir, "add", "m.lock.json");
  git(repoDir, "commit", "-q", "-m", "earlier run");
  // The run works on the real lockfile path (beside its manifest); the repository tracks a copy.
  copyFileSync(staged, lockfilePath);
  await rerun(lockfilePath);
  copyFileSync(lockfilePath, staged);
  const [added, deleted] = git(repoDir, "diff", "--numstat", "--", "m.lock.json").trim().split(/\s+/).map(Number) as [number, number];
  const after = await readLockFile(lockfilePath);
  const all = new Set([...earlier.keys(), ...Object.keys(after!.tasks)]);
  let tasksChanged = 0;
  for (const id of all) if (!sameJson(earlier.get(id), after!.tasks[id])) tasksChanged++;
  return {
    tasksChanged,
    linesAdded: added ?? 0,
    linesRemoved: deleted ?? 0,
    linesPerTask: tasksChanged === 0 ? 0 : (added ?? 0) / tasksChanged,
    staged: { setBack, removed },
  };
};
