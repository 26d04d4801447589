// "May this create be sent again?", decided in one place. After a create answered with an
// error, the create worker (Submitting.ts) asks `afterCreateError` what to do: the answer
// never sends again while the outcome is unknown without a lookup first. The table side
// of the same rule (a task whose outcome is unknown is looked up before its next create)
// is `Entry.lookupFirst`, set by transition.ts. Pure.

import type { ErrorClass } from "../api/classify.js";
import type { Policy } from "../policy/Policy.js";

export type CreateErrorStep =
  /** 1303: nothing was created; wait for a slot. */
  | { readonly _tag: "NoSlot" }
  /** The account refused; `keepSubmitting`: an earlier send of this create may have landed. */
  | { readonly _tag: "Refused"; readonly keepSubmitting: boolean }
  /** Look the task up by external id (a few times when `patient`): adopt it if found, else do `then`. */
  | { readonly _tag: "Lookup"; readonly patient: boolean; readonly then: CreateErrorStep }
  /** Nothing was created and the service could not fetch an upstream link: refresh the links and send again. */
  | { readonly _tag: "RefreshLinks" }
  /** Send again: a lookup just showed the task does not exist. */
  | { readonly _tag: "SendAgain" }
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

/** A 1201 about the external id: the task exists already; adopt it instead of failing. */
export const isDuplicateId = (error: CreateError, id: string): boolean =>
  error.code === 1201 &&
  (error.message.includes(id) || (/external/i.test(error.message) && /exist|duplicate|already|unique|used/i.test(error.message)));

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
      // 1201): any 1201 gets a lookup, so a task another job created is adopted, not
      // marked rejected. Only a message naming the id is worth waiting for.
      return error.code === 1201 ? { _tag: "Lookup", patient: isDuplicateId(error, attempt.id), then: otherwise } : otherwise;
    }
    case "unknown-outcome":
      // The task may exist. Find it before sending again.
      return { _tag: "Lookup", patient: true, then: { _tag: "SendAgain" } };
  }
};

/** The worker sent `policy.sendsPerCreate` times without a confirmation. */
export const outOfSends = { _tag: "SendFailed", lookupFirst: true } as const satisfies CreateErrorStep;
