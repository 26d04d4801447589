// Whether the service's address answers at all, asked before a run that has nothing at
// the service yet (and by `doctor`): one query that creates nothing and costs nothing (a
// list of one page of one image). A refused connection or an unknown host stops the run
// within seconds (exit 5) with a line naming the address and what to check, where the
// engine would retry for minutes. Once tasks are at the service (the lockfile holds some
// unfinished there), a lost connection is waited out as ever: no check is made.

import { Data, Duration, Effect, Either, Schedule } from "effect";
import type { ApiError } from "../api/ApiError.js";
import { isUnreachable } from "../api/classify.js";
import type { OmniClientService } from "../api/OmniClient.js";
import { withRetry } from "../api/retry.js";
import { reachCheckLimit, reachRetry } from "../policy/Policy.js";
import type { LockTask } from "../state/LockFile.js";
import { unfinishedThere } from "./serviceCheck.js";

/** Nothing answers at the service's address, and the run has nothing there: stopped before anything was sent (exit 5). */
export class ServiceUnreachable extends Data.TaggedError("ServiceUnreachable")<{
  readonly address: string;
  readonly message: string;
}> {}

/** The line for an address where nothing answers (the same kind as api/refusal.ts's). */
export const unreachableLine = (address: string, reason: string): string =>
  `nothing answers at ${address} (${reason}): check the base URL (--base-url / OMNIBATCH_BASE_URL) and the network`;

/**
 * Whether the run must ask first: it has something to create (a task the lockfile does
 * not record, or records planned or rejected) and nothing unfinished at the service (whose
 * tasks a lost connection must not abandon). A rerun with nothing to create asks nothing. Pure.
 */
export const mustCheckReach = (records: ReadonlyMap<string, LockTask>, taskIds: Iterable<string>): boolean => {
  for (const t of records.values()) if (unfinishedThere(t)) return false;
  for (const id of taskIds) {
    const state = records.get(id)?.state;
    if (state === undefined || state === "planned" || state === "rejected") return true;
  }
  return false;
};

/**
 * What asking the address gave: `answered` (any HTTP answer, an error envelope too),
 * `unreachable` (with the transport's reason) or `silent` (no answer and no refusal
 * within the limit: a stall, a timeout).
 */
export type Reach = { readonly _tag: "answered"; readonly error?: ApiError } | { readonly _tag: "unreachable"; readonly reason: string } | { readonly _tag: "silent" };

/** Asks the address once (retried briefly while nothing answers): a list of one page of one image. */
export const askReach = (client: OmniClientService, limit: Duration.Duration = reachCheckLimit): Effect.Effect<Reach> =>
  withRetry(
    client.listImages({ pageNum: 1, pageSize: 1 }),
    // Only a refused connection or an unknown host is asked again: any answer is an answer.
    reachRetry.pipe(Schedule.whileInput((error: ApiError) => isUnreachable(error))),
  ).pipe(
    Effect.either,
    Effect.map((result): Reach => {
      if (Either.isRight(result)) return { _tag: "answered" };
      const error = result.left;
      if (isUnreachable(error)) return { _tag: "unreachable", reason: error._tag === "TransportError" ? error.reason : error.message };
      if (error._tag === "ServiceError" || error._tag === "DecodeError") return { _tag: "answered", error };
      return { _tag: "silent" };
    }),
    Effect.timeoutTo({ duration: limit, onTimeout: (): Reach => ({ _tag: "silent" }), onSuccess: (r) => r }),
  );

/** Completes when `signal` aborts (an interrupt): the run's own stop then takes over. */
const aborted = (signal: AbortSignal): Effect.Effect<Reach> =>
  Effect.async<Reach>((resume) => {
    const done = () => resume(Effect.succeed({ _tag: "silent" }));
    if (signal.aborted) return done();
    signal.addEventListener("abort", done, { once: true });
    return Effect.sync(() => signal.removeEventListener("abort", done));
  });

/**
 * Stops a run with nothing at the service when nothing answers at its address. An
 * interrupt (`signal`) ends the asking at once and lets the run stop as it does; so does
 * the run's time limit (`withinMs`, what is left of --max-wait).
 */
export const reachCheck = (
  client: OmniClientService,
  address: string,
  records: ReadonlyMap<string, LockTask>,
  taskIds: Iterable<string>,
  bounds: { readonly signal?: AbortSignal | undefined; readonly withinMs?: number | undefined } = {},
): Effect.Effect<void, ServiceUnreachable> => {
  if (!mustCheckReach(records, taskIds)) return Effect.void;
  const limit = bounds.withinMs === undefined ? reachCheckLimit : Duration.min(reachCheckLimit, Duration.millis(Math.max(0, bounds.withinMs)));
  const ask = bounds.signal ? Effect.raceFirst(askReach(client, limit), aborted(bounds.signal)) : askReach(client, limit);
  return Effect.flatMap(ask, (reach) =>
    reach._tag === "unreachable"
      ? Effect.fail(new ServiceUnreachable({ address, message: `${unreachableLine(address, reach.reason)}; nothing was sent` }))
      : Effect.void,
  );
};
