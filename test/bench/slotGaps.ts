// Where a slot's idle time goes between one task's end and the next create, for the
// saturation benchmark: the poll delay (end at the service -> the runner sees it) and the
// create path (the runner decides to send -> the service has the task), from the run's
// task events joined with the service's own task times (same machine, same wall clock).

import type { RunEvent } from "../../src/engine/RunEvent.js";

export interface TaskTimes {
  /** Service create_time and end time (update_time of a finished task), Unix ms. */
  readonly createdAt: number;
  readonly endedAt: number;
}

export interface SlotGaps {
  /** Mean ms from a task's end at the service to the runner's `succeeded` event. */
  readonly pollDelayMs: number;
  /** Mean ms from the runner's `submitting` event to the service's create_time. */
  readonly createPathMs: number;
  /** Mean idle slot-ms per task: the k-th end to the (k + slots)-th create. */
  readonly idlePerTaskMs: number;
}

export interface TimedEvent {
  readonly at: number;
  readonly event: RunEvent;
}

const mean = (xs: readonly number[]): number => (xs.length === 0 ? Number.NaN : xs.reduce((a, b) => a + b, 0) / xs.length);

export const slotGaps = (events: readonly TimedEvent[], times: ReadonlyMap<string, TaskTimes>, slots: number): SlotGaps => {
  const seen = new Map<string, number>();
  const sending = new Map<string, number>();
  for (const { at, event } of events) {
    if (event.type !== "task") continue;
    if (event.state === "succeeded" && !seen.has(event.id)) seen.set(event.id, at);
    if (event.state === "submitting" && !sending.has(event.id)) sending.set(event.id, at);
  }
  const poll: number[] = [];
  const create: number[] = [];
  for (const [id, t] of times) {
    const s = seen.get(id);
    if (s !== undefined) poll.push(s - t.endedAt);
    const c = sending.get(id);
    if (c !== undefined) create.push(t.createdAt - c);
  }
  const ends = [...times.values()].map((t) => t.endedAt).sort((a, b) => a - b);
  const creates = [...times.values()].map((t) => t.createdAt).sort((a, b) => a - b);
  const idle: number[] = [];
  for (let k = 0; k + slots < creates.length; k++) idle.push(Math.max(0, creates[k + slots]! - ends[k]!));
  return { pollDelayMs: mean(poll), createPathMs: mean(create), idlePerTaskMs: mean(idle) };
};

interface Envelope<T> {
  readonly code: number;
  readonly data?: T;
}

/** Service times of video tasks by external id (A2 in batches of 50, after the measured run). */
export const videoTimes = async (baseUrl: string, apiKey: string, externalIds: readonly string[]): Promise<Map<string, TaskTimes>> => {
  const out = new Map<string, TaskTimes>();
  for (let i = 0; i < externalIds.length; i += 50) {
    const ids = externalIds.slice(i, i + 50).map(encodeURIComponent).join(",");
    const res = await fetch(`${baseUrl}/tasks?external_task_ids=${ids}`, { headers: { authorization: `Bearer ${apiKey}` } });
    const body = (await res.json()) as Envelope<Array<{ external_id?: string; create_time: number; update_time: number }>>;
    for (const t of body.data ?? []) if (t.external_id) out.set(t.external_id, { createdAt: t.create_time, endedAt: t.update_time });
  }
  return out;
};
