// Retrying idempotent calls: only errors classified "retry" are tried again, and each
// pause is at least what the service asked for in Retry-After. The schedules themselves
// (backoff, jitter, limits) are named in src/policy/Policy.ts; tests pass their own.

import { Duration, Effect, Ref, Schedule } from "effect";
import type { ApiError } from "./ApiError.js";
import { classify, retryAfterOf } from "./classify.js";

/**
 * Runs `effect`, retrying it on "retry"-class errors as `schedule` allows; the wait
 * before each attempt is max(the schedule's delay, the last error's Retry-After).
 * Any other error (and the last one when the schedule ends) fails the effect unchanged.
 * Safe around a create: a create that may have reached the service is classified
 * "unknown-outcome", not "retry", so only answers proving nothing was created (1302, a
 * refused connection) send it again; the rest are left to the engine's lookup.
 */
export const withRetry = <A, E extends ApiError, R, Out, RS>(
  effect: Effect.Effect<A, E, R>,
  schedule: Schedule.Schedule<Out, E, RS>,
): Effect.Effect<A, E, R | RS> =>
  Effect.flatMap(Ref.make(0), (askedMs) =>
    effect.pipe(
      Effect.tapError((error) => Ref.set(askedMs, retryAfterOf(error))),
      Effect.retry(
        schedule.pipe(
          Schedule.whileInput((error: E) => classify(error) === "retry"),
          Schedule.modifyDelayEffect((_, delay) =>
            Effect.map(Ref.get(askedMs), (ms) => Duration.max(delay, Duration.millis(ms))),
          ),
        ),
      ),
    ),
  );
