// "May this create be sent again?", decided in one place. After a create answered with an
// error, the create worker (Submitting.ts) asks `afterCreateError` what to do: a create
// whose outcome is unknown is never sent again by the worker; the task becomes "outcome
// unknown" in the table and `settleUnknown` decides, lookup by lookup, when that ends:
// found (adopt it), or a definite "not there" from a lookup that started at least
// `policy.unknownOutcomeWindow` after the send (send it again). A 1201 saying the external
// id is in use proves the task exists: it is only ever adopted. The table side of the rule for
// lockfile records (look up before the first create) is `Entry.lookupFirst`. Pure.

/**
 * Whether an answer (a create's, a query's) is about another task than ours: the service
 * echoes the external id it holds (video `external_id`, image
 * `task_info.external_task_id`); one present and different from ours means the answer's
 * task id, state, results and charge belong to someone else. Absent (or empty): nothing
 * to compare, the answer is taken as ours.
 */
export const echoesAnotherTask = (ours: string, echoed: string | undefined): boolean =>
  typeof echoed === "string" && echoed.length > 0 && echoed !== ours;

import { Duration } from "effect";
import type { ErrorClass } from "../api/classify.js";
import type { Policy } from "../policy/Policy.js";

export type CreateErrorStep =
  /** 1303: nothing was created; wait for a slot. */
  | { readonly _tag: "NoSlot" }
  /** The account refused; `keepSubmitting`: an earlier send of this create may have landed. */
  | { readonly _tag: "Refused"; readonly keepSubmitting: boolean }
  /** Look the task up by external id once: adopt it if found, else do `then`. */
  | { readonly _tag: "Lookup"; readonly then: CreateErrorStep }
  /**
   * The create may have landed (`exists`: the service said the id is in use, so it did):
   * look it up once, adopt it if visible, else hand it to the table as "outcome unknown".
   * Never sent again from here.
   */
  | { readonly _tag: "Unknown"; readonly exists: boolean }
  /** Nothing was created and the service could not fetch an upstream link: refresh the links and send again. */
  | { readonly _tag: "RefreshLinks" }
  /** Give up for now; `lookupFirst`: the outcome is unknown, so look up before the next create. */
  | { readonly _tag: "SendFailed"; readonly lookupFirst: boolean }
  /** The service refused this task's request: record it rejected. */
  | { readonly _tag: "Rejected" };

export interface CreateError {
  readonly errorClass: ErrorClass;
  readonly code: number | undefined;
  readonly message: string;
}

export interface CreateAttempt {
  /** The task's external id. */
  readonly id: string;
  /** Sends so far in this worker, before the one that failed. */
  readonly sends: number;
  readonly linkRefreshes: number;
  /** Earlier unconfirmed creates of this task (from the table). */
  readonly sendFailures: number;
  /** A downstream task (its request carries upstream result links). */
  readonly downstream: boolean;
}

/**
 * The service's own words in a message: our id (as a whole word: a short one is no part
 * of `external_task_id`) and the values it quotes ('…', "…", `…`) taken out, so nothing we
 * sent (a prompt, a link, the id) can speak for the service.
 */
const ownWords = (message: string, id: string): string => {
  const echoed = id.length > 0 ? new RegExp(`(?<![\\w-])${id.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}(?![\\w-])`, "g") : undefined;
  return (echoed ? message.replace(echoed, " ") : message).replace(/'[^']*'|"[^"]*"|`[^`]*`/g, " ");
};

/** A 1201 names its field first, `field: reason` (`options.external_task_id: …`, `image_list[0].image: …`). */
const leadingField = (words: string): string | undefined => /^\s*([A-Za-z_][\w.[\]]*)\s*:/.exec(words)?.[1];

/**
 * A 1201 that says the external id is in use: the task exists already; adopt it, never
 * record it rejected. The answer is undocumented (service-behaviour.md: seen as 1201), so
 * it is read from the service's own words: they name the external task id and say it is
 * taken. Quoting our id proves nothing (a 1201 about a prompt or a link may echo it, or the
 * request): one naming another field first is about that field. Any other 1201 is looked
 * up once (afterCreateError), so a task that does exist is adopted all the same.
 */
export const isDuplicateId = (error: CreateError, id: string): boolean => {
  if (error.code !== 1201) return false;
  const words = ownWords(error.message, id);
  const field = leadingField(words);
  if (field !== undefined && !/(^|\.)external_task_id$/i.test(field)) return false;
  return /external[\s_-]*(task[\s_-]*)?id/i.test(words) && /exist|duplicate|already|unique|in use|used/i.test(words);
};

/** The service says it could not fetch an input link (it expired on the way). */
const isLinkFailure = (message: string): boolean => /fetch|403|expired|download|aborted/i.test(message);

export const afterCreateError = (error: CreateError, attempt: CreateAttempt, policy: Policy): CreateErrorStep => {
  switch (error.errorClass) {
    case "no-slot":
      return { _tag: "NoSlot" };
    case "refused":
      return { _tag: "Refused", keepSubmitting: attempt.sends > 0 };
    case "retry":
      // The retry schedule ran out on an answer that proves nothing was created.
      return { _tag: "SendFailed", lookupFirst: false };
    case "task-rejected": {
      // A downstream request whose upstream link expired on the way: nothing was
      // created (1xxx), so fresh links and one more send are safe.
      const otherwise: CreateErrorStep =
        attempt.downstream && isLinkFailure(error.message)
          ? attempt.linkRefreshes < policy.linkRefreshesPerCreate
            ? { _tag: "RefreshLinks" }
            : attempt.sendFailures < policy.linkFailuresBeforeReject
              ? { _tag: "SendFailed", lookupFirst: false }
              : { _tag: "Rejected" }
          : { _tag: "Rejected" };
      // The real service's words for a reused external id are undocumented (seen as
      // 1201). One that says the id is in use proves the task exists (maybe not yet
      // visible): adopt it, never record it rejected. Any other 1201 gets one lookup,
      // so a task another job created is adopted, not marked rejected.
      if (error.code === 1201 && isDuplicateId(error, attempt.id)) return { _tag: "Unknown", exists: true };
      return error.code === 1201 ? { _tag: "Lookup", then: otherwise } : otherwise;
    }
    case "unknown-outcome":
      // The task may exist and may not be visible for a while: never sent again here.
      return { _tag: "Unknown", exists: false };
  }
};

/** What a lookup by external id of an "outcome unknown" task leads to. */
export type UnknownStep =
  | { readonly _tag: "Adopt" }
  /** Not visible, and the lookup does not settle it yet: keep the slot, look again next poll. */
  | { readonly _tag: "KeepLooking" }
  /** A definite "not there": the lookup started after the visibility window. */
  | { readonly _tag: "SendAgain" }
  /** The service said it exists, yet it never showed: leave it for a later run (never created again). */
  | { readonly _tag: "LeaveForLater" };

export interface UnknownOutcome {
  /** When the create whose outcome is unknown was sent. */
  readonly unknownSince: number;
  /** The service said the id is in use (1201). */
  readonly exists: boolean;
}

/** `lookupStartedAt`: when the lookup request was decided (it left after this). */
export const settleUnknown = (u: UnknownOutcome, found: boolean, lookupStartedAt: number, policy: Policy): UnknownStep => {
  if (found) return { _tag: "Adopt" };
  const waited = lookupStartedAt - u.unknownSince;
  if (u.exists) return waited >= Duration.toMillis(policy.missingAfter) ? { _tag: "LeaveForLater" } : { _tag: "KeepLooking" };
  return waited >= Duration.toMillis(policy.unknownOutcomeWindow) ? { _tag: "SendAgain" } : { _tag: "KeepLooking" };
};

/** The worker sent `policy.sendsPerCreate` times without a confirmation. */
export const outOfSends = { _tag: "SendFailed", lookupFirst: true } as const satisfies CreateErrorStep;

/**
 * Whether a task entering the run must be looked up by external id before its first
 * create (`Entry.lookupFirst`): whenever something before this run may have created it.
 * Not on a fresh service (config.lookupFirst false). Not for a task the lockfile does not
 * know whose parent (the upstream whose results it is made from, or the failed attempt it
 * retries) this run created: its id derives from that parent (a downstream task's from the
 * upstream's new result bytes, a retry's from the attempt number, reached only through
 * that failure), so no earlier run could have sent it; unless the lockfile may lack
 * creates of an earlier run (restored: that run may have made the same parent and child
 * while this run looked, so its lookups are kept). Known records keep the lookup: the
 * admit rules for their state decide (transition.ts).
 */
export const lookupBeforeCreate = (
  config: { readonly lookupFirst: boolean; readonly mayLackCreates?: boolean },
  recorded: boolean,
  parentCreatedHere: boolean,
): boolean => config.lookupFirst && (recorded || !parentCreatedHere || config.mayLackCreates === true);

/** A waiting task, in line order, as the write-ahead rule sees it. */
export interface AheadCandidate {
  /** Its intent is being written or is durable already. */
  readonly intent?: "writing" | "ready" | undefined;
  /** It must be looked up by external id before its create: it goes through the full create path. */
  readonly lookupFirst: boolean;
}

/**
 * Which waiting tasks (given in line order) get their intent written now, so the next
 * freed slots need only the create's round trip: the first ones in line without an
 * intent, until `ahead` tasks have one. A task to be looked up first is passed over (its
 * lookup comes before any intent) and does not count. Returns indexes into `line`, in order.
 */
export const intentsToWrite = (line: readonly AheadCandidate[], ahead: number): number[] => {
  const chosen: number[] = [];
  let withIntent = 0;
  for (let i = 0; i < line.length && withIntent < ahead; i++) {
    const c = line[i]!;
    if (c.intent !== undefined) withIntent++;
    else if (!c.lookupFirst) {
      chosen.push(i);
      withIntent++;
    }
  }
  return chosen;
};
