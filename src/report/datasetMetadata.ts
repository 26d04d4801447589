// metadata.jsonl per job folder, in the convention of Hugging Face's imagefolder and
// videofolder datasets: one line per image or video file, `file_name` relative to the
// folder the metadata.jsonl is in, then the prompt and the matrix values, so a job's
// results folder loads as a dataset as it is. Pure.

import type { LockFile } from "../state/LockFile.js";
import type { Provenance } from "./resultsJsonl.js";

const MEDIA = new Set(["image", "video"]);
const OWN_KEYS = new Set(["file_name", "prompt", "external_task_id", "output_index", "variant"]);

/** Job folder (relative to the outputs folder) -> its metadata.jsonl text; jobs without files are left out. */
export const datasetMetadata = (lock: LockFile, prov?: Provenance): Map<string, string> => {
  const lines = new Map<string, string[]>();
  for (const id of Object.keys(lock.tasks).sort()) {
    const task = lock.tasks[id]!;
    // Superseded and pruned files are left out, as everywhere (orphaned ones stay, as in status).
    const standing = prov?.standing?.of.get(id);
    if (task.pruned_at !== undefined || task.superseded_by !== undefined || task.abandoned !== undefined || standing === "superseded" || standing === "pruned") continue;
    const folder = task.dir.split("/")[0]!;
    const planned = prov?.planned?.get(id);
    const prompt = planned
      ? planned.kind === "video"
        ? (planned.request.contents.find((c) => c.type === "prompt") as { text?: string } | undefined)?.text ?? ""
        : planned.request.prompt
      : undefined;
    for (const output of task.outputs) {
      if (!output.path || !MEDIA.has(output.type) || !output.path.startsWith(`${folder}/`)) continue;
      const vars = Object.fromEntries(Object.entries(task.vars).filter(([k]) => !OWN_KEYS.has(k)));
      const line = {
        file_name: output.path.slice(folder.length + 1),
        // Every line has the column: null where the manifest that made the file is not at hand.
        prompt: prompt ?? null,
        ...vars,
        external_task_id: id,
        output_index: output.index,
        variant: output.variant,
      };
      const list = lines.get(folder) ?? [];
      list.push(JSON.stringify(line));
      lines.set(folder, list);
    }
  }
  return new Map([...lines].map(([k, v]) => [k, `${v.join("\n")}\n`]));
};
