// The schemas accept answers that leave out descriptive fields the spec lists but does
// not promise on every answer (a message, task_info, watermark_info). These functions
// give such answers the empty values the wire types promise, so callers need no checks.

import type { ImageCreated, ImageTask, VideoTask } from "../protocol/wire.js";

export const fillVideoTask = (task: VideoTask): VideoTask => (typeof task.message === "string" ? task : { ...task, message: "" });

export const fillImageCreated = (created: ImageCreated): ImageCreated =>
  created.task_info === undefined ? { ...created, task_info: {} } : created;

export const fillImageTask = (task: ImageTask): ImageTask => {
  const filled: ImageTask = {
    ...task,
    task_status_msg: task.task_status_msg ?? "",
    task_info: task.task_info ?? {},
    watermark_info: task.watermark_info ?? { enabled: false },
  };
  if (task.task_result !== undefined && task.task_result.result_type === undefined) {
    // Infer the result type from which list is present.
    filled.task_result = { ...task.task_result, result_type: task.task_result.series_images?.length ? "series" : "single" };
  }
  return filled;
};
