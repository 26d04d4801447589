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

  /**
   * The records as they are now, as a lockfile's `tasks` object whose records are decoded
   * only when read (`frozenTasks`): later puts do not change it, and a pass over every
   * record keeps none of them alive unless it holds on to them.
   */
  frozen(): Readonly<Record<string, LockTask>> {
    return frozenTasks(new Map(this.held), (line) => this.decodeLine(line));
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

/** Whether `key` is an array index: a plain object lists those first, in numeric order. */
const isArrayIndex = (key: string): boolean => {
  if (key === "" || key.length > 10 || (key.length > 1 && key.charCodeAt(0) === 48)) return false;
  for (let i = 0; i < key.length; i++) {
    const c = key.charCodeAt(i);
    if (c < 48 || c > 57) return false;
  }
  return Number(key) < 4294967295;
};

/**
 * `held` as a plain object keyed by id (the keys in the order `Object.fromEntries` gives
 * them), each record decoded from its line when read and not kept: a new object each
 * time, the last one read handed out again for the same id (a pass reads a task's fields
 * one after the other). Read-only. `held` must not change while it is used (a copy).
 *
 * Why a proxy: every report, the plan diff and the failure groups take a lockfile
 * (`LockFile.tasks`, a record). A run of 200,000 tasks that decoded every held line into
 * one such record for them raised its RSS by about 150 MB at the stop, its highest point.
 */
export const frozenTasks = (held: ReadonlyMap<string, HeldRecord>, decode: (line: string) => LockTask): Readonly<Record<string, LockTask>> => {
  const keys: string[] = [];
  const indices: string[] = [];
  for (const id of held.keys()) (isArrayIndex(id) ? indices : keys).push(id);
  const ownKeys = indices.length ? [...indices.sort((a, b) => Number(a) - Number(b)), ...keys] : keys;
  let lastId: string | undefined;
  let last: LockTask | undefined;
  const read = (id: string): LockTask | undefined => {
    if (id === lastId) return last;
    const v = held.get(id);
    if (v === undefined) return undefined;
    last = typeof v === "string" ? decode(v) : v;
    lastId = id;
    return last;
  };
  const readOnly = (): never => {
    throw new TypeError("a lockfile snapshot's tasks are read-only");
  };
  const target: Record<string, LockTask> = {};
  return new Proxy(target, {
    get: (t, key, receiver) => (typeof key === "string" && held.has(key) ? read(key) : Reflect.get(t, key, receiver)),
    has: (t, key) => (typeof key === "string" && held.has(key)) || Reflect.has(t, key),
    ownKeys: () => ownKeys,
    // An accessor, so that listing the keys (Object.keys, for...in) decodes nothing.
    getOwnPropertyDescriptor: (_t, key) =>
      typeof key === "string" && held.has(key) ? { get: () => read(key), enumerable: true, configurable: true } : undefined,
    set: readOnly,
    defineProperty: readOnly,
    deleteProperty: readOnly,
    setPrototypeOf: readOnly,
    preventExtensions: readOnly,
  });
};
