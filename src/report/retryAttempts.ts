// The planned task behind each later attempt in a lockfile: a retry has an id of its own
// (the attempt is part of the hash) but is the manifest's task sent again, so its
// record in the reports carries the request it was sent with. Pure.

import { slotDirs } from "../plan/diffPlan.js";
import type { PlannedTask } from "../manifest/PlannedTask.js";
import type { LockFile } from "../state/LockFile.js";

/**
 * For each lockfile task of attempt 2 or more that `planned` lacks: the manifest's task
 * at the same job, position and take, made into that attempt, when its request hash is
 * the recorded one (so it is exactly what was sent). In the folder the lockfile records.
 */
export const retryAttempts = (
  lock: LockFile,
  planned: ReadonlyMap<string, PlannedTask>,
  withAttempt: (task: PlannedTask, attempt: number) => PlannedTask,
): PlannedTask[] => {
  // A loop, not Object.entries: a lockfile of 100,000 first attempts makes no pair per record.
  const later: [string, LockFile["tasks"][string]][] = [];
  for (const id in lock.tasks) {
    const t = lock.tasks[id]!;
    if (t.attempt > 1 && !planned.has(id)) later.push([id, t]);
  }
  if (later.length === 0) return [];
  const at = (job: string, dir: string, take: number) => `${job}\u0000${dir}\u0000${take}`;
  const firsts = new Map<string, PlannedTask>();
  for (const t of planned.values()) if (t.attempt === 1) firsts.set(at(t.job, t.dir, t.take), t);
  const out: PlannedTask[] = [];
  for (const [id, rec] of later) {
    for (const dir of slotDirs(id, rec)) {
      const first = firsts.get(at(rec.job, dir, rec.take));
      if (!first) continue;
      let next: PlannedTask;
      try {
        next = withAttempt(first, rec.attempt);
      } catch {
        continue; // a task this manifest did not make
      }
      if (next.id === id && next.requestHash === rec.request_hash) {
        out.push(next.dir === rec.dir ? next : { ...next, dir: rec.dir });
        break;
      }
    }
  }
  return out;
};
