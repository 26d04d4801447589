// A bench for the task state machine without any I/O: tasks and tables made by hand, a
// seeded random source, and `Machine`, which feeds events to `transition` and keeps the
// lockfile records the way the Recorder would (Record effects applied in order).

import type { PlannedTask } from "../../src/manifest/PlannedTask.js";
import { makePolicy, type Policy } from "../../src/policy/Policy.js";
import type { TaskView } from "../../src/protocol/TaskView.js";
import type { LockTask } from "../../src/state/LockFile.js";
import type { EngineEffect, EngineEvent } from "../../src/engine/EngineEvent.js";
import { TaskTable, type TableConfig } from "../../src/engine/TaskTable.js";
import { transition } from "../../src/engine/transition.js";

/** mulberry32: small, fast, good enough to drive event orders; the seed is printed on failure. */
export const seeded = (seed: number) => {
  let a = seed >>> 0;
  const next = (): number => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (n: number) => Math.floor(next() * n),
    pick: <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)]!,
    chance: (p: number) => next() < p,
  };
};
export type Random = ReturnType<typeof seeded>;

const source = { file: "t.yaml", line: 1, col: 1 };

export const task = (id: string, kind: "video" | "image" = "video", attempt = 1, retryFailed = 0): PlannedTask =>
  kind === "video"
    ? {
        id: attempt === 1 ? id : `${id}-a${attempt}`,
        job: "j",
        kind,
        vars: {},
        dir: id,
        requestHash: `h-${id}`,
        take: 1,
        attempt,
        retryFailed,
        retryContentRisk: false,
        slots: 1,
        source,
        request: { model_name: "m", prompt: "p", options: { external_task_id: id } } as unknown as PlannedTask["request"],
      } as PlannedTask
    : ({
        id: attempt === 1 ? id : `${id}-a${attempt}`,
        job: "j",
        kind,
        vars: {},
        dir: id,
        requestHash: `h-${id}`,
        take: 1,
        attempt,
        retryFailed,
        retryContentRisk: false,
        slots: 1,
        source,
        request: { model_name: "m", prompt: "p", external_task_id: id },
      } as unknown as PlannedTask);

export const baseId = (id: string) => id.replace(/-a\d+$/, "");

export const makeTable = (overrides: Partial<TableConfig> = {}, policy: Policy = makePolicy(1)): TaskTable =>
  new TaskTable(
    {
      concurrency: 4,
      policy,
      callbacks: true,
      lookupFirst: false,
      freshService: false,
      withAttempt: (t, attempt) => task(baseId(t.id), t.kind, attempt, t.retryFailed),
      retryFailedOf: () => undefined,
      ...overrides,
    },
    "USD",
  );

export const view = (taskId: string, externalId: string, status: TaskView["status"], at = 0, message = ""): TaskView => ({
  taskId,
  externalId,
  status,
  createdAt: at,
  updatedAt: at,
  message,
  outputs: status === "succeeded" ? [{ type: "video", index: 0, variant: "main", url: `http://127.0.0.1/${taskId}.mp4` }] : [],
  billing: status === "succeeded" || status === "failed" ? [{ charge_type: "cash", amount: "0.5", currency: "USD" }] : [],
});

/** One step: the event, the effects it gave, and the records before it. */
export interface Step {
  readonly event: EngineEvent;
  readonly effects: readonly EngineEffect[];
}

export class Machine {
  readonly records = new Map<string, LockTask>();
  readonly log: Step[] = [];
  constructor(readonly table: TaskTable) {}

  feed(event: EngineEvent): readonly EngineEffect[] {
    const { effects } = transition(this.table, event);
    this.log.push({ event, effects });
    for (const e of effects) {
      if (e._tag !== "Record") continue;
      const prev = this.records.get(e.task.id);
      this.records.set(e.task.id, { ...(prev ?? ({ outputs: [], billing: [] } as unknown as LockTask)), ...e.patch, updated_at: e.at } as LockTask);
    }
    return effects;
  }

  /** What the create worker writes before it sends (the durable intent). */
  intent(id: string, at: number): void {
    const prev = this.records.get(id);
    this.records.set(id, { ...(prev ?? ({ outputs: [], billing: [] } as unknown as LockTask)), state: "submitting", submitted_at: at, updated_at: at } as LockTask);
  }
}

export const ofTag = <T extends EngineEffect["_tag"]>(effects: readonly EngineEffect[], tag: T) =>
  effects.filter((e): e is Extract<EngineEffect, { _tag: T }> => e._tag === tag);
