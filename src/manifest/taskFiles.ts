// Where a task's results will really go: its folder (a changed task whose folder holds
// another task's recorded files gets a suffixed one) and its file names. One rule for
// the run (engine/ownFolders.ts) and for plan, so plan shows the names a run will use.
// Pure: the lockfile's records come in as data.

import { fileNameFor, usualExtension, type OutputRef } from "./fileNames.js";
import { imageOutputs } from "../rules/outputCount.js";
import type { PlannedTask } from "./PlannedTask.js";

// The folder rule itself lives in resultFolder.ts (one rule for the run and for plan).
export { folderHolders, resultFolder as placedFolder, type FolderHolders } from "./resultFolder.js";

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
