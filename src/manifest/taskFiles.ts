// Where a task's results will really go: its folder (a changed task whose folder holds
// another task's recorded files gets a suffixed one) and its file names. One rule for
// the run (engine/ownFolders.ts) and for plan, so plan shows the names a run will use.
// Pure: the lockfile's records come in as data.

import type { LockTask } from "../state/LockFile.js";
import { fileNameFor, usualExtension, type OutputRef } from "../outputs/OutputPaths.js";
import { imageOutputs } from "../rules/outputCount.js";
import type { PlannedTask } from "./PlannedTask.js";

/** Folder -> the task whose recorded files it holds. */
export type FolderHolders = ReadonlyMap<string, string>;

/** The folders the lockfile's tasks hold files in. */
export const folderHolders = (lock: Iterable<readonly [string, LockTask]>): Map<string, string> => {
  const holder = new Map<string, string>();
  for (const [id, t] of lock) if (t.outputs.some((o) => o.path !== undefined)) holder.set(t.dir, id);
  return holder;
};

/**
 * The folder a task's results go to: the one the lockfile recorded for it, else its own
 * unless another task's files are there (a changed task, `~`): then `<folder>-<last 6 of its id>`.
 */
export const placedFolder = (task: PlannedTask, recordedDir: string | undefined, holders: FolderHolders): string => {
  if (recordedDir !== undefined) return recordedDir;
  const taken = holders.get(task.dir);
  return taken !== undefined && taken !== task.id ? `${task.dir}-${task.id.slice(-6)}` : task.dir;
};

/**
 * The files a task is expected to make, relative to the outputs folder, named as the
 * downloader will name them. The extension is the usual one of the type (the service's
 * link or Content-Type decides at download); a series of `auto` length shows its default.
 */
export const plannedFiles = (task: PlannedTask, dir: string = task.dir): string[] => {
  const refs: OutputRef[] = [];
  if (task.kind === "video") {
    refs.push({ type: "video", index: 0, variant: "main" });
    if (task.request.options?.watermark_info?.enabled === true) refs.push({ type: "video", index: 0, variant: "watermark" });
  } else {
    const count = imageOutputs(task.request).expected;
    const watermark = task.request.watermark_info?.enabled === true;
    for (let index = 0; index < count; index++) {
      refs.push({ type: "image", index, variant: "main" });
      if (watermark) refs.push({ type: "image", index, variant: "watermark" });
    }
  }
  return refs.map((r) => `${dir}/${fileNameFor(r, usualExtension(r), task.name)}`);
};
