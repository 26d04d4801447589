// The region rule: a lockfile names the service its tasks were created at (the header's
// `service`), and task ids of one service (one regional host) are invisible from another.
// A run against a different service would find none of the lockfile's unfinished tasks
// there and create them again, paying twice; so it refuses (exit 2, before anything is
// sent) unless told to switch with --switch-service. A switch erases nothing: each
// unfinished record is marked `abandoned` (the old service, the time) and otherwise kept
// as it was (outputs, billing, ids: history, counted in spend to date), and the task is
// made again at the new service as its next attempt, a new external id; the old record
// names it (`superseded_by`) once it is created. Pure: the run (runLoadedManifest.ts)
// reads the lockfile, asks `checkService`, and acts on the answer.

import * as Data from "effect/Data";
import { isCurrentAttempt, type LockTask, type TaskState } from "../state/LockFile.js";

/** What an in-process emulator (`--emulate`) is recorded as: its port changes every run. */
export const EMULATOR_SERVICE = "emulator";

/** The command-line flag that allows a switch; named in the refusal. */
export const SWITCH_FLAG = "--switch-service";

/**
 * The service a base URL names, as the lockfile records it: origin (scheme, host, port)
 * and path, without a trailing slash. Never credentials, query or fragment: nothing
 * secret reaches the lockfile, and `https://api.x.com/` and `https://api.x.com` are one.
 */
export const serviceIdentity = (baseUrl: string): string => {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    return baseUrl.replace(/[?#].*$/, "").replace(/\/+$/, "");
  }
  return `${url.origin}${url.pathname.replace(/\/+$/, "")}`;
};

/**
 * States of a record whose task exists (or may exist) at the service it was created at
 * and still has something to give there: its outcome (in flight; `submitting`: a create
 * whose outcome is unknown) or its files (`succeeded`: finished and paid, not all
 * downloaded). These are what a switch abandons. `planned` was never created;
 * `downloaded`, `failed` and `rejected` need nothing more from the service.
 */
const AT_THE_SERVICE: ReadonlySet<TaskState> = new Set(["submitting", "submitted", "processing", "succeeded"]);

/** Whether a record is unfinished at the lockfile's service: a switch would abandon it (one abandoned already is history). */
export const unfinishedThere = (t: LockTask): boolean => AT_THE_SERVICE.has(t.state) && t.abandoned === undefined;

/**
 * The record of a task abandoned at `service` by a switch at `at`: the same record (its
 * state, outputs, billing, ids and times are history) with `abandoned` added, and
 * `updated_at` moved to the switch (the record changed). Never anything taken away.
 */
export const abandonRecord = (rec: LockTask, service: string, at: number): LockTask => ({ ...rec, abandoned: { service, at }, updated_at: Math.max(rec.updated_at, at) });

/**
 * Abandoned records and the attempt that replaced each at the new service, once that
 * one was created (not merely planned, nor refused): the next attempt at the same job,
 * folder and take. An abandoned record already naming its successor is left out.
 */
export const abandonedSuccessors = (tasks: Readonly<Record<string, LockTask>>): [string, string][] => {
  const slot = (t: LockTask, attempt: number) => `${t.job}\u0000${t.dir}\u0000${t.take}\u0000${attempt}`;
  const waiting = new Map<string, string>();
  // for...in, not Object.entries: a rerun over 100,000 records (none abandoned) makes no pair per record.
  for (const id in tasks) {
    const t = tasks[id]!;
    if (t.abandoned !== undefined && t.superseded_by === undefined) waiting.set(slot(t, t.attempt + 1), id);
  }
  if (waiting.size === 0) return [];
  const out: [string, string][] = [];
  for (const id in tasks) {
    const t = tasks[id]!;
    // Only a later attempt can succeed an abandoned one.
    if (t.attempt < 2) continue;
    const old = waiting.get(slot(t, t.attempt));
    if (old !== undefined && old !== id && t.state !== "planned" && t.state !== "rejected") out.push([old, id]);
  }
  return out.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
};

/**
 * What a run at `current` does with tasks abandoned there by an earlier switch (a run
 * that moved from `current` to another service and now came back):
 * - `takeUp`: a slot (job, folder, take) with no current attempt (`isCurrentAttempt`:
 *   every later one was abandoned elsewhere, ended failed there, or was only planned or
 *   refused) whose latest attempt abandoned here
 *   still has something to give here (in flight: its outcome; `succeeded`: paid, its
 *   files) is followed and downloaded here, not made again: `resume` loses its
 *   `abandoned` mark (and the `superseded_by` naming the attempt made elsewhere), and
 *   each later attempt of the slot (`replaces`) names it as `superseded_by`.
 * - `learn`: the other tasks abandoned here and still in flight when abandoned, or
 *   `submitting` (a create whose outcome was unknown: the task may exist here), their
 *   charges unknown: asked about once (by task id, or by external id), so what they were
 *   charged here enters spend to date and the budget; their records stay history otherwise.
 * Only a service that keeps its tasks between runs (never the in-process emulator). Pure.
 */
export interface AbandonedHere {
  readonly takeUp: readonly { readonly resume: string; readonly replaces: readonly string[] }[];
  readonly learn: readonly string[];
}


export const abandonedHere = (records: Iterable<readonly [string, LockTask]>, current: string): AbandonedHere => {
  if (current === EMULATOR_SERVICE) return { takeUp: [], learn: [] };
  const slotOf = (t: LockTask) => `${t.job}\u0000${t.dir}\u0000${t.take}`;
  const slots = new Map<string, [string, LockTask][]>();
  for (const [id, t] of records) if (t.abandoned?.service === current) slots.set(slotOf(t), []);
  if (slots.size === 0) return { takeUp: [], learn: [] };
  for (const [id, t] of records) slots.get(slotOf(t))?.push([id, t]);
  const takeUp: { resume: string; replaces: string[] }[] = [];
  const learn: string[] = [];
  for (const members of slots.values()) {
    members.sort((a, b) => b[1].attempt - a[1].attempt || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    const hasCurrent = members.some(([, t]) => isCurrentAttempt(t));
    const resume = hasCurrent ? undefined : members.find(([, t]) => t.abandoned?.service === current && AT_THE_SERVICE.has(t.state));
    if (resume) {
      const replaces = members.filter(([, t]) => t.attempt > resume[1].attempt).map(([id]) => id).reverse();
      takeUp.push({ resume: resume[0], replaces });
    }
    for (const [id, t] of members) {
      if (id === resume?.[0] || t.abandoned?.service !== current) continue;
      // `submitting`: a create whose outcome is unknown may have made the task here (looked up by its external id).
      if (t.state === "submitting" || ((t.state === "submitted" || t.state === "processing") && t.task_id !== undefined)) learn.push(id);
    }
  }
  takeUp.sort((a, b) => (a.resume < b.resume ? -1 : 1));
  learn.sort();
  return { takeUp, learn };
};

/** The record of an abandoned task taken up again at its own service: current again, nothing else changed. */
export const takeUpRecord = (rec: LockTask, at: number): LockTask => {
  const { abandoned: _abandoned, superseded_by: _supersededBy, ...rest } = rec;
  return { ...rest, updated_at: Math.max(rec.updated_at, at) };
};

export type ServiceDecision =
  /** The lockfile names this service. */
  | { readonly _tag: "Same" }
  /** Record `current` in the header; `note`: what to tell the user (a file from before services were recorded, or a switch with nothing to abandon). */
  | { readonly _tag: "Record"; readonly note?: string }
  /** Refuse to run: nothing is sent. */
  | { readonly _tag: "Refuse"; readonly message: string }
  /** --switch-service: these records are planned again (their tasks at `from` are abandoned), then `current` is recorded. */
  | { readonly _tag: "Switch"; readonly from: string; readonly abandon: readonly string[]; readonly message: string };


export interface ServiceCheck {
  /** The service the lockfile's header names (undefined: none recorded). */
  readonly recorded: string | undefined;
  /** The service this run talks to (`serviceIdentity` or EMULATOR_SERVICE). */
  readonly current: string;
  readonly records: ReadonlyMap<string, LockTask>;
  /** --switch-service was given. */
  readonly switchAllowed: boolean;
  /** The lockfile's path, for the messages. */
  readonly lockfile: string;
}

const sample = (ids: readonly string[]): string => `${ids.slice(0, 3).join(", ")}${ids.length > 3 ? `, ... (${ids.length - 3} more)` : ""}`;

export const checkService = (c: ServiceCheck): ServiceDecision => {
  if (c.recorded === c.current) return { _tag: "Same" };
  if (c.recorded === undefined) return { _tag: "Record" };
  const unfinished = [...c.records].filter(([, t]) => unfinishedThere(t)).map(([id]) => id);
  unfinished.sort();
  // Finished and paid there, results not all downloaded: only the old service can give them.
  const waiting = unfinished.filter((id) => c.records.get(id)!.state === "succeeded").length;
  const moved = `${c.lockfile} records its tasks at ${c.recorded}, but this run is against ${c.current}`;
  if (unfinished.length === 0) {
    return { _tag: "Record", note: `${moved}; none of its tasks is unfinished there, so ${c.current} is recorded from now on` };
  }
  const what =
    `${unfinished.length} task(s) created at ${c.recorded} are not finished here (${sample(unfinished)})` +
    (waiting > 0 ? `; ${waiting} of them finished there (paid) with results not downloaded yet` : "");
  // As the switch would leave them (the tasks unfinished at the recorded service abandoned
  // there): the tasks made here before and abandoned by an earlier switch, taken up again.
  const from = c.recorded;
  const leaving = new Set(unfinished);
  const switched = {
    *[Symbol.iterator]() {
      for (const [id, t] of c.records) yield [id, leaving.has(id) ? abandonRecord(t, from, 0) : t] as const;
    },
  };
  const here = abandonedHere(switched, c.current).takeUp.map((t) => t.resume);
  if (!c.switchAllowed) {
    // Tasks abandoned here by an earlier switch: paid (or to be paid) here; a switch back follows them, not makes them again.
    const paidHere =
      here.length > 0
        ? ` ${here.length} task(s) were created at ${c.current} before and abandoned by a switch (${sample(here)}): they are paid, or will be when they finish, ` +
          `at ${c.current}; with ${SWITCH_FLAG} they are followed and downloaded here, not created again.`
        : "";
    return {
      _tag: "Refuse",
      message:
        `${moved}. ${what}. Task ids of one service (region) cannot be seen from another, so this run would ` +
        `create them again at ${c.current} and pay for them twice. Nothing was sent.${paidHere}\n` +
        `Run against ${c.recorded} (--base-url or OMNIBATCH_BASE_URL) to finish them and download their results, or pass ${SWITCH_FLAG} to ` +
        `abandon them at ${c.recorded} and create them again at ${c.current} as new attempts (paid again; what was already ` +
        `charged for them there is not refunded and stays in the lockfile's spend).`,
    };
  }
  return {
    _tag: "Switch",
    from: c.recorded,
    abandon: unfinished,
    message:
      `${SWITCH_FLAG}: ${moved}; ${what}: abandoned there and ` +
      (here.length > 0
        ? `${here.length} task(s) made here before (${sample(here)}) are followed and downloaded here, not created again; the others are `
        : "") +
      `created again here as new attempts (paid again; ` +
      `their records, results and charges at ${c.recorded} stay in the lockfile); ${c.current} is recorded from now on`,
  };
};

/** The run refused to start against another service than the lockfile's (exit 2: nothing was sent). */
export class ServiceChanged extends Data.TaggedError("ServiceChanged")<{
  readonly lockfile: string;
  readonly recorded: string;
  readonly current: string;
  readonly message: string;
}> {}
