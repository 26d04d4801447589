// Copies recorded results from a store to a local folder so a person can look at them:
// each file streamed through the folder sink (temp file, fsync, rename, never out of the
// folder) and kept only when its sha256 is the lockfile's. Files already there with the
// recorded sha256 are not fetched again. The reports at the top of the prefix come too.

import { fileSha256 } from "../outputs/verifyResults.js";
import { unlink } from "node:fs/promises";
import { folderSink } from "../outputs/FolderSink.js";
import { REPORT_FILES, TASK_SIDECAR } from "../report/writeReports.js";
import type { LockFile } from "../state/LockFile.js";
import { lockfileInvalid } from "../state/LockfileError.js";
import { recordPathProblem } from "../state/recordPaths.js";
import { selected, type WhereClause } from "./pullSelection.js";
import type { StoreSink } from "../outputs/StoreSink.js";

export interface PullSummary {
  readonly pulled: number;
  readonly present: number;
  /** Recorded results the store does not hold, or holds with other content. */
  readonly problems: readonly string[];
  readonly reports: number;
}

const sha256OfFile = (file: string): Promise<string | undefined> => fileSha256(file).catch(() => undefined);

export const pullResults = async (
  lock: LockFile,
  sink: StoreSink,
  dir: string,
  selection: { readonly only: readonly string[]; readonly where: readonly WhereClause[] },
  /** The lockfile's path, for the message naming a task whose paths lead out (exit 2). */
  lockfilePath = "the lockfile",
): Promise<PullSummary> => {
  const local = folderSink(dir);
  const wanted: { rel: string; size: number; sha256: string; type: string }[] = [];
  const sidecars: string[] = [];
  for (const [id, task] of Object.entries(lock.tasks)) {
    if (!selected(task, selection.only, selection.where)) continue;
    // Checked when the lockfile was read; checked again before any path is made from it,
    // for a lockfile that came by another way: refused (exit 2) before anything is copied.
    const pathProblem = recordPathProblem(task);
    if (pathProblem !== undefined) throw lockfileInvalid(lockfilePath, `task ${id}: ${pathProblem}`);
    let any = false;
    for (const o of task.outputs) {
      if (o.path === undefined || o.size === undefined || o.sha256 === undefined) continue;
      wanted.push({ rel: o.path, size: o.size, sha256: o.sha256, type: o.type });
      any = true;
    }
    if (any) sidecars.push(`${task.dir}/${TASK_SIDECAR}`);
  }
  const listed = await sink.listing();
  let pulled = 0;
  let present = 0;
  let reports = 0;
  const problems: string[] = [];
  const never = new AbortController().signal;

  const copy = async (rel: string, expect?: { size: number; sha256: string; type: string }) => {
    const got = await sink.store.get(rel);
    if (!got) return "missing";
    const written = await local.write(rel, { body: got.body, type: expect?.type ?? "report", cap: Number.MAX_SAFE_INTEGER, ...(got.size !== undefined ? { contentLength: got.size } : {}) }, never);
    if (expect && written.sha256 !== expect.sha256) {
      await unlink(local.absolutePath(rel)).catch(() => undefined);
      return "differs";
    }
    return "ok";
  };

  let next = 0;
  const worker = async () => {
    while (next < wanted.length) {
      const w = wanted[next++]!;
      const path = local.absolutePath(w.rel);
      if ((await sha256OfFile(path)) === w.sha256) {
        present++;
        continue;
      }
      if (!listed.has(w.rel)) {
        problems.push(`${w.rel}: not in ${sink.where}`);
        continue;
      }
      try {
        const outcome = await copy(w.rel, w);
        if (outcome === "ok") pulled++;
        else problems.push(outcome === "missing" ? `${w.rel}: not in ${sink.where}` : `${w.rel}: the store's copy is not the recorded result (sha256 differs); not kept`);
      } catch (error) {
        problems.push(`${w.rel}: ${(error as Error).message}`);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(4, wanted.length) }, worker));
  for (const rel of [...REPORT_FILES, ...sidecars]) {
    if (!listed.has(rel)) continue;
    if ((await copy(rel).catch(() => "failed")) === "ok") reports++;
  }
  return { pulled, present, problems, reports };
};
