// Retrying idempotent calls: only errors classified "retry" are tried again, and each
// pause is at least what the service asked for in Retry-After, up to a cap (a longer ask
// is cut to it: RETRY_AFTER_CAP_MS, named in src/policy/Policy.ts, unless the caller names one; the policy names the same). The schedules themselves
// (backoff, jitter, limits) are named in src/policy/Policy.ts; tests pass their own.

import { Data, Duration, Effect, Ref, Schedule } from "effect";
import { isApiError, type ApiError } from "./ApiError.js";
import { classify, retryAfterOf } from "./classify.js";
import { RETRY_AFTER_CAP_MS } from "../policy/Policy.js";


/**
 * Runs `effect`, retrying it on "retry"-class errors as `schedule` allows; the wait
 * before each attempt is max(the schedule's delay, the last error's Retry-After capped at
 * `retryAfterCap`).
 * Any other error (and the last one when the schedule ends) fails the effect unchanged,
 * as does an error of the effect's own that is no ApiError (a create's last check, OmniClient.ts).
 * Safe around a create: a create that may have reached the service is classified
 * "unknown-outcome", not "retry", so only answers proving nothing was created (1302, a
 * refused connection) send it again; the rest are left to the engine's lookup.
 * `beforeRetry`, when given, runs before every attempt after the first (a create confirms
 * the run lock there: time has passed since the engine's check); if it fails, nothing
 * more is sent and the effect fails with its error.
 */
export const withRetry = <A, E, R, Out, RS, G = never>(
  effect: Effect.Effect<A, E, R>,
  schedule: Schedule.Schedule<Out, E, RS>,
  beforeRetry?: Effect.Effect<void, G>,
  retryAfterCap: Duration.Duration = Duration.millis(RETRY_AFTER_CAP_MS),
): Effect.Effect<A, E | G, R | RS> => {
  const capMs = Duration.toMillis(retryAfterCap);
  if (beforeRetry === undefined) return retrying(effect, schedule, capMs);
  return Effect.suspend(() => {
    let attempts = 0;
    const attempt = Effect.suspend(() =>
      attempts++ === 0 ? effect : Effect.zipRight(Effect.mapError(beforeRetry, (cause) => new Halt({ cause })), effect),
    );
    return retrying<A, E | Halt<G>, R, Out, RS>(attempt, schedule as Schedule.Schedule<Out, E | Halt<G>, RS>, capMs).pipe(
      Effect.catchIf(
        (e): e is Halt<G> => e instanceof Halt,
        (halt) => Effect.fail(halt.cause),
      ),
    ) as Effect.Effect<A, E | G, R | RS>;
  });
};

/** A failed `beforeRetry`, carried through the retry loop (never retried) and unwrapped after it. */
class Halt<G> extends Data.TaggedError("RetryHalted")<{ readonly cause: G }> {}

/**
 * `Effect.retry(effect, schedule)`, with the retry loop entered at the first failure: a call
 * that succeeds at once (nearly every one) makes no schedule driver and no Ref (about 15 µs
 * of CPU a call; issue 13's throughput benchmark makes three per task). The loop is then
 * given that failure first, so the schedule sees the same errors in the same order as when
 * it wrapped the first attempt (its first step was at the first failure then too), and
 * `effect` runs again only for the retries.
 */
export const retryFromFirstFailure = <A, E, R, X, RS>(
  effect: Effect.Effect<A, E, R>,
  retry: (effect: Effect.Effect<A, E, R>) => Effect.Effect<A, X, R | RS>,
): Effect.Effect<A, E | X, R | RS> =>
  Effect.catchAll(effect, (first) => {
    let replayed = false;
    return retry(
      Effect.suspend(() => {
        if (replayed) return effect;
        replayed = true;
        return Effect.fail(first);
      }),
    );
  });

const retrying = <A, E, R, Out, RS>(effect: Effect.Effect<A, E, R>, schedule: Schedule.Schedule<Out, E, RS>, capMs: number): Effect.Effect<A, E, R | RS> =>
  retryFromFirstFailure(effect, (again) => retryLoop(again, schedule, capMs));

const retryLoop = <A, E, R, Out, RS>(effect: Effect.Effect<A, E, R>, schedule: Schedule.Schedule<Out, E, RS>, capMs: number): Effect.Effect<A, E, R | RS> =>
  Effect.flatMap(Ref.make(0), (askedMs) =>
    effect.pipe(
      // The service's ask, never beyond the cap: a header saying "an hour" cannot stall a run.
      Effect.tapError((error) => Ref.set(askedMs, isApiError(error) ? Math.min(retryAfterOf(error), capMs) : 0)),
      Effect.retry(
        schedule.pipe(
          Schedule.whileInput((error: E) => isApiError(error) && classify(error) === "retry"),
          Schedule.modifyDelayEffect((_, delay) =>
            Effect.map(Ref.get(askedMs), (ms) => Duration.max(delay, Duration.millis(ms))),
          ),
        ),
      ),
    ),
  );
