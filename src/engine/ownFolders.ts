// Keeps every task's results in a folder of its own across manifest changes. A changed
// task (`~` in plan) has a new id but the same matrix values, so the same default folder
// as the task it replaces, which stays in the lockfile with its paid, downloaded files:
// downloading the new one there would overwrite them. Such a task gets a suffixed folder
// (the rule is src/manifest/resultFolder.ts, which `plan` shows too).

import type { PlannedTask, UpstreamItem } from "../manifest/PlannedTask.js";
import { folderHolders, placedFolder } from "../manifest/taskFiles.js";
import type { LockTask } from "../state/LockFile.js";
import type { RunnableManifest } from "./RunnableManifest.js";

/** The manifest with each task's folder made its own, given the lockfile's records. */
export const ownFolders = (manifest: RunnableManifest, lock: ReadonlyMap<string, LockTask>): RunnableManifest => {
  // Folders holding another task's recorded files.
  const holder = folderHolders(lock);
  if (holder.size === 0) return manifest;
  const place = (task: PlannedTask): PlannedTask => {
    // A task already recorded keeps the folder it was given (plan shows the same: taskFiles.ts).
    const dir = placedFolder(task, lock.get(task.id)?.dir, holder);
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
