// The region rule: a lockfile names the service its tasks were created at (the header's
// `service`), and task ids of one service (one regional host) are invisible from another.
// A run against a different service would find none of the lockfile's unfinished tasks
// there and create them again, paying twice; so it refuses (exit 2, before anything is
// sent) unless told to switch with --switch-service, which abandons those tasks at the
// old service and creates them again at the new one. Pure: the run (runLoadedManifest.ts)
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
 * States of a record whose task exists at the service it was created at and still has
 * something to give there (its outcome, its files): these are what a switch abandons.
 * `planned` was never created; `downloaded`, `failed` and `rejected` need nothing more.
 */
const AT_THE_SERVICE: ReadonlySet<TaskState> = new Set(["submitting", "submitted", "processing", "succeeded"]);

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
  const unfinished = [...c.records].filter(([, t]) => AT_THE_SERVICE.has(t.state)).map(([id]) => id);
  unfinished.sort();
  const moved = `${c.lockfile} records its tasks at ${c.recorded}, but this run is against ${c.current}`;
  if (unfinished.length === 0) {
    return { _tag: "Record", note: `${moved}; none of its tasks is unfinished there, so ${c.current} is recorded from now on` };
  }
  const what = `${unfinished.length} task(s) created at ${c.recorded} are not finished here (${sample(unfinished)})`;
  if (!c.switchAllowed) {
    return {
      _tag: "Refuse",
      message:
        `${moved}. ${what}. Task ids of one service (region) cannot be seen from another, so this run would ` +
        `create them again at ${c.current} and pay for them twice. Nothing was sent.\n` +
        `Run against ${c.recorded} (--base-url or OMNIBATCH_BASE_URL) to finish them, or pass ${SWITCH_FLAG} to ` +
        `abandon them at ${c.recorded} and create them again at ${c.current} (paid again; what was already ` +
        `charged for them there is not refunded).`,
    };
  }
  return {
    _tag: "Switch",
    from: c.recorded,
    abandon: unfinished,
    message: `${SWITCH_FLAG}: ${moved}; ${what}: abandoned there and created again here (paid again); ${c.current} is recorded from now on`,
  };
};

/** The run refused to start against another service than the lockfile's (exit 2: nothing was sent). */
export class ServiceChanged extends Data.TaggedError("ServiceChanged")<{
  readonly lockfile: string;
  readonly recorded: string;
  readonly current: string;
  readonly message: string;
}> {}
