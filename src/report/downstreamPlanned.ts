// The requests of downstream (for_each) tasks, for `omnibatch report`, which has the
// manifest but not the run that expanded them: each for_each job is expanded again from
// the upstream results the lockfile records. A result's URL is not kept (it is signed and
// expires), so a stand-in URL is used; identity hashes content, never the URL, so a
// task made this way has the id of the one that ran, and reports show such an input by
// its upstream file and sha256. Only tasks whose id is in the lockfile are returned.

import { itemFile } from "../manifest/itemFile.js";
import type { LoadedManifest } from "../manifest/LoadedManifest.js";
import type { PlannedTask, UpstreamItem } from "../manifest/PlannedTask.js";
import type { LockFile } from "../state/LockFile.js";

type Expander = {
  readonly jobs: readonly Pick<LoadedManifest["jobs"][number], "id" | "upstream">[];
  readonly expandDownstream: LoadedManifest["expandDownstream"];
};

export const downstreamPlanned = (manifest: Expander, lock: LockFile, outputsDir: string): PlannedTask[] => {
  const out: PlannedTask[] = [];
  for (const job of manifest.jobs) {
    if (!job.upstream) continue;
    const items: UpstreamItem[] = [];
    for (const id of Object.keys(lock.tasks).sort()) {
      const t = lock.tasks[id]!;
      if (t.job !== job.upstream.job) continue;
      for (const o of t.outputs) {
        if (o.variant !== "main" || !o.path || !o.sha256 || (o.type !== "image" && o.type !== "video")) continue;
        items.push({
          job: t.job,
          task: id,
          index: o.index,
          type: o.type,
          url: `https://upstream.invalid/${encodeURIComponent(id)}/${o.index}`,
          file: itemFile(outputsDir, o.path, `https://upstream.invalid/${encodeURIComponent(id)}/${o.index}`),
          sha256: o.sha256,
          vars: t.vars,
        });
      }
    }
    if (items.length === 0) continue;
    try {
      for (const task of manifest.expandDownstream(job.id, items)) if (task.id in lock.tasks) out.push(task);
    } catch {
      // The job cannot be expanded from what is on disk now (a file moved, the manifest
      // changed): its tasks are reported without their request, as with no manifest.
    }
  }
  return out;
};
