// Keeps every task's results in a folder of its own across manifest changes. A changed
// task (`~` in plan) has a new id but the same matrix values, so the same default folder
// as the task it replaces, which stays in the lockfile with its paid, downloaded files:
// downloading the new one there would overwrite them. Such a task gets a suffixed folder
// (the rule is src/manifest/resultFolder.ts, which `plan` shows too).

import type { PlannedTask, UpstreamItem } from "../manifest/PlannedTask.js";
import { folderHolders, placedFolder } from "../manifest/taskFiles.js";
import type { LockTask } from "../state/LockFile.js";
import type { RunnableManifest } from "./RunnableManifest.js";

const holdsFiles = (t: LockTask): boolean => t.outputs.some((o) => o.path !== undefined);

/** The manifest with each task's folder made its own, given the lockfile's records. */
export const ownFolders = (manifest: RunnableManifest, lock: ReadonlyMap<string, LockTask>): RunnableManifest => {
  // No folder holds another task's recorded files: every task keeps its own.
  let anyHolder = false;
  for (const t of lock.values()) if ((anyHolder = holdsFiles(t))) break;
  if (!anyHolder) return manifest;
  // Folders holding another task's recorded files, made when a task without a record of
  // its own asks (a rerun whose every task is recorded makes no map of 100,000 folders).
  let holder: Map<string, string> | undefined;
  const place = (task: PlannedTask): PlannedTask => {
    // A task already recorded keeps the folder it was given (plan shows the same: taskFiles.ts).
    const recorded = lock.get(task.id)?.dir;
    const dir = recorded !== undefined ? recorded : placedFolder(task, undefined, (holder ??= folderHolders(lock)));
    return dir === task.dir ? task : { ...task, dir };
  };
  return {
    ...manifest,
    tasks: manifest.tasks.map(place),
    expandDownstream: (job: string, items: UpstreamItem[]) => manifest.expandDownstream(job, items).map(place),
    // An attempt keeps its task's folder (a failed attempt has no files to protect).
    withAttempt: (task: PlannedTask, attempt: number) => {
      const next = manifest.withAttempt(task, attempt);
      return next.dir === task.dir ? next : { ...next, dir: task.dir };
    },
  };
};
