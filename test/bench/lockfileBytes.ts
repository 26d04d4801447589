// The lockfile's bytes per finished task, counted on the file itself: the bytes of the
// lines of the tasks that ended downloaded (each with its blank separator line) plus the
// header line, over their number. A run stopped by its time limit leaves the rest of its
// tasks on lines of their own (planned, in flight), which are not finished tasks: the
// whole file divided by the tasks done would charge them to the finished ones, so the
// whole file's size is reported beside it, not mixed into it.

import { readFileSync } from "node:fs";
import { readLockFile } from "../../src/state/readLockFile.js";

export interface LockfileBytes {
  /** The whole file. */
  readonly fileBytes: number;
  readonly tasks: number;
  /** Tasks whose record is `downloaded`. */
  readonly finished: number;
  /** (Header line + the finished tasks' lines with their separators) ÷ finished; 0 when none. */
  readonly perFinishedTask: number;
}

export const measureLockfileBytes = async (lockfilePath: string): Promise<LockfileBytes> => {
  const text = readFileSync(lockfilePath, "utf8");
  const lock = await readLockFile(lockfilePath);
  if (lock === undefined) throw new Error(`no lockfile at ${lockfilePath}`);
  const lines = text.split("\n");
  // Line 1 is the header; then each task is a blank line and its line (format v2 and later).
  let bytes = Buffer.byteLength(lines[0]!) + 1;
  let finished = 0;
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i]!;
    if (line === "") continue;
    const id = (JSON.parse(line) as { id: string }).id;
    if (lock.tasks[id]?.state !== "downloaded") continue;
    finished++;
    bytes += Buffer.byteLength(line) + 2;
  }
  return {
    fileBytes: Buffer.byteLength(text),
    tasks: Object.keys(lock.tasks).length,
    finished,
    perFinishedTask: finished === 0 ? 0 : bytes / finished,
  };
};
