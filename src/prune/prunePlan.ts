// What `omnibatch prune` removes: superseded and orphaned tasks' files and report records
// (never a current task's, never a task still in flight). Pure: from the lockfile and
// the standings (report/standing.ts); the files are removed by pruneTasks.ts.

import type { LockFile, TaskState } from "../state/LockFile.js";
import { type Standings, standingOf } from "../report/standing.js";

/** Still at the service and followed by no run once out of the manifest: wait for it to end. */
const IN_FLIGHT: ReadonlySet<TaskState> = new Set(["submitting", "submitted", "processing"]);

export interface PruneTask {
  readonly id: string;
  readonly job: string;
  readonly standing: "superseded" | "orphaned";
  readonly state: TaskState;
  readonly dir: string;
  readonly supersededBy?: string;
  /** Files to remove, relative to the outputs folder: its results and its task.json. */
  readonly files: readonly string[];
  /** Bytes of its results as recorded. */
  readonly bytes: number;
}

export interface PrunePlan {
  readonly tasks: readonly PruneTask[];
  /** Superseded or orphaned but still in flight: left for a later prune. */
  readonly waiting: readonly { readonly id: string; readonly state: TaskState }[];
  readonly files: number;
  readonly bytes: number;
}

export const prunePlan = (lock: LockFile, standings: Standings, sidecar = "task.json"): PrunePlan => {
  // Paths and folders a kept task records: never removed, even if a pruned task names them too.
  const keptPaths = new Set<string>();
  const keptDirs = new Set<string>();
  const chosen: string[] = [];
  const waiting: { id: string; state: TaskState }[] = [];
  for (const id of Object.keys(lock.tasks).sort()) {
    const t = lock.tasks[id]!;
    const s = standingOf(standings, id);
    // An abandoned record's state is the last one seen at its old service: nothing is in flight here.
    if ((s === "superseded" || s === "orphaned") && (!IN_FLIGHT.has(t.state) || t.abandoned !== undefined)) chosen.push(id);
    else {
      if (s === "superseded" || s === "orphaned") waiting.push({ id, state: t.state });
      if (s === "pruned") continue;
      keptDirs.add(t.dir);
      for (const o of t.outputs) if (o.path !== undefined) keptPaths.add(o.path);
    }
  }
  let files = 0;
  let bytes = 0;
  const tasks = chosen.map((id): PruneTask => {
    const t = lock.tasks[id]!;
    const own = t.outputs.filter((o) => o.path !== undefined && !keptPaths.has(o.path));
    const list = own.map((o) => o.path!);
    if (!keptDirs.has(t.dir) && list.length > 0) list.push(`${t.dir}/${sidecar}`);
    const size = own.reduce((n, o) => n + (o.size ?? 0), 0);
    files += list.length;
    bytes += size;
    const by = standings.supersededBy.get(id);
    return {
      id,
      job: t.job,
      standing: standingOf(standings, id) as "superseded" | "orphaned",
      state: t.state,
      dir: t.dir,
      ...(by !== undefined ? { supersededBy: by } : {}),
      files: list,
      bytes: size,
    };
  });
  return { tasks, waiting, files, bytes };
};
