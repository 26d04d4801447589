// The store's records in memory, with a finished one held as its lockfile line. A
// downloaded task's record (its output and billing objects and their strings) took about
// 1 KB of live heap; its line, already made for the journal, takes about 370 bytes, and
// V8 grows its heap in proportion to what is live (a 200,000-task run's RSS was about
// three times its live heap). So once a downloaded record is encoded for a write (a
// journal append, a full write), the store keeps its line instead (`keepLine`), and a reader gets the record decoded from it (`get`,
// iteration), a new object each time, equal to the one put (`decodeTaskLine` inverts
// `encodeTaskLine`, TaskLine.ts). Records in any other state stay objects: they change
// again during the run, and a line would be decoded at each change.

import type { LockTask } from "./LockFile.js";
import { decodeTaskLine, type TaskLine } from "./TaskLine.js";

/** A record, or the task line (current rules, keyed `name`) it was kept as. */
export type HeldRecord = LockTask | string;

/** Whether a durable record is kept as its line: a downloaded one, which a run does not change again. */
export const keptAsLine = (task: LockTask): boolean => task.state === "downloaded";

export class TaskRecords implements ReadonlyMap<string, LockTask> {
  /**
   * `held` is used as it is (a loaded lockfile's map: nothing copied); `name` is the
   * header name the kept lines were encoded with.
   */
  constructor(
    readonly name: string,
    private readonly held: Map<string, HeldRecord> = new Map(),
  ) {}

  get size(): number {
    return this.held.size;
  }

  has(id: string): boolean {
    return this.held.has(id);
  }

  get(id: string): LockTask | undefined {
    const v = this.held.get(id);
    return typeof v === "string" ? this.decodeLine(v) : v;
  }

  set(id: string, task: LockTask): void {
    this.held.set(id, task);
  }

  /** Keeps `task` as `line` (its encodeTaskLine under `name`), if it is still the record of `id` and a kept kind. */
  keepLine(id: string, task: LockTask, line: string): void {
    if (keptAsLine(task) && this.held.get(id) === task) this.held.set(id, line);
  }

  /** Each record as held (an object, or its line): for a writer that wants lines, without decoding. */
  heldEntries(): IterableIterator<[string, HeldRecord]> {
    return this.held.entries();
  }

  /** How many records are held as lines (for tests and probes). */
  linesHeld(): number {
    let n = 0;
    for (const v of this.held.values()) if (typeof v === "string") n++;
    return n;
  }

  /** The record a kept line holds. */
  decodeLine(line: string): LockTask {
    return decodeTaskLine(this.name, JSON.parse(line) as TaskLine).task;
  }

  *entries(): IterableIterator<[string, LockTask]> {
    for (const [id, v] of this.held) yield [id, typeof v === "string" ? this.decodeLine(v) : v];
  }

  keys(): IterableIterator<string> {
    return this.held.keys();
  }

  *values(): IterableIterator<LockTask> {
    for (const v of this.held.values()) yield typeof v === "string" ? this.decodeLine(v) : v;
  }

  [Symbol.iterator](): IterableIterator<[string, LockTask]> {
    return this.entries();
  }

  forEach(f: (task: LockTask, id: string, map: ReadonlyMap<string, LockTask>) => void): void {
    for (const [id, task] of this.entries()) f(task, id, this);
  }
}
