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
import type { LockTask, TaskState } from "../state/LockFile.js";

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
  if (!c.switchAllowed) {
    return {
      _tag: "Refuse",
      message:
        `${moved}. ${what}. Task ids of one service (region) cannot be seen from another, so this run would ` +
        `create them again at ${c.current} and pay for them twice. Nothing was sent.\n` +
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
      `${SWITCH_FLAG}: ${moved}; ${what}: abandoned there and created again here as new attempts (paid again; ` +
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
