// withRetry: only "retry"-class errors are retried, each pause is at least the
// Retry-After the service asked for, and the schedule bounds the attempts. Timed with
// the TestClock, so nothing sleeps.

import { Duration, Effect, Either, Fiber, Schedule, TestClock, TestContext } from "effect";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { ServiceError, TransportError, type ApiError } from "../../src/api/ApiError.js";
import { parseRetryAfter } from "../../src/api/interpretAnswer.js";
import { withRetry } from "../../src/api/retry.js";
import { makePolicy, RETRY_AFTER_CAP_MS } from "../../src/policy/Policy.js";

const tooFast = (retryAfterMs?: number) =>
  new ServiceError({ operation: "listImages", code: 1302, httpStatus: 429, message: "too fast", requestId: "r", ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) });

/** An effect failing with `errors` in turn, then succeeding with the attempt count. */
const scripted = (errors: ApiError[]) => {
  let attempts = 0;
  const effect = Effect.suspend(() => {
    attempts += 1;
    const error = errors[attempts - 1];
    return error === undefined ? Effect.succeed(attempts) : Effect.fail(error);
  });
  return { effect, attempts: () => attempts };
};

const runTest = <A, E>(effect: Effect.Effect<A, E>) => Effect.runPromise(effect.pipe(Effect.provide(TestContext.TestContext)));

test("a Retry-After longer than the schedule's delay is waited in full", async () => {
  await runTest(
    Effect.gen(function* () {
      const script = scripted([tooFast(5_000)]);
      const fiber = yield* Effect.fork(withRetry(script.effect, Schedule.spaced("10 millis")));
      yield* TestClock.adjust("4999 millis");
      assert.is(script.attempts(), 1);
      yield* TestClock.adjust("1 millis");
      const result = yield* Fiber.join(fiber);
      assert.is(result, 2);
    }),
  );
});

test("a Retry-After beyond the cap is cut to the cap (the policy's; 20 s at real speed unless named)", async () => {
  await runTest(
    Effect.gen(function* () {
      const script = scripted([tooFast(3_600_000), tooFast(3_600_000)]);
      const fiber = yield* Effect.fork(withRetry(script.effect, Schedule.spaced("10 millis"), undefined, Duration.millis(500)));
      yield* TestClock.adjust("499 millis");
      assert.is(script.attempts(), 1);
      yield* TestClock.adjust("1 millis");
      assert.is(script.attempts(), 2, "an hour asked, half a second waited");
      yield* TestClock.adjust("500 millis");
      assert.is(yield* Fiber.join(fiber), 3);
      // No cap named: the policy's request-retry cap.
      const unnamed = scripted([tooFast(3_600_000)]);
      const other = yield* Effect.fork(withRetry(unnamed.effect, Schedule.spaced("10 millis")));
      yield* TestClock.adjust(Duration.millis(RETRY_AFTER_CAP_MS - 1));
      assert.is(unnamed.attempts(), 1);
      yield* TestClock.adjust("1 millis");
      assert.is(yield* Fiber.join(other), 2);
      assert.is(Duration.toMillis(makePolicy(0.01).retryAfterCap), RETRY_AFTER_CAP_MS * 0.01, "scaled with the policy");
    }),
  );
});

test("without Retry-After the schedule's delay applies", async () => {
  await runTest(
    Effect.gen(function* () {
      const script = scripted([tooFast(), new TransportError({ operation: "getImage", phase: "sent", reason: "ECONNRESET" })]);
      const fiber = yield* Effect.fork(withRetry(script.effect, Schedule.spaced("100 millis")));
      yield* TestClock.adjust("99 millis");
      assert.is(script.attempts(), 1);
      yield* TestClock.adjust("1 millis");
      assert.is(script.attempts(), 2);
      yield* TestClock.adjust("100 millis");
      assert.is(yield* Fiber.join(fiber), 3);
    }),
  );
});

test("the retry loop starts at the first failure: a success runs once, and the schedule is given every failure in order, the first included", async () => {
  const once = scripted([]);
  assert.is(await runTest(withRetry(once.effect, Schedule.recurs(3))), 1);
  assert.is(once.attempts(), 1);
  const seen: number[] = [];
  const script = scripted([tooFast(1), tooFast(2), tooFast(3)]);
  const schedule = Schedule.recurs(5).pipe(Schedule.tapInput((e: ApiError) => Effect.sync(() => seen.push(e._tag === "ServiceError" ? (e.retryAfterMs ?? 0) : -1))));
  await runTest(
    Effect.gen(function* () {
      const fiber = yield* Effect.fork(withRetry(script.effect, schedule));
      yield* TestClock.adjust("10 millis");
      assert.is(yield* Fiber.join(fiber), 4);
    }),
  );
  assert.equal(seen, [1, 2, 3]);
  assert.is(script.attempts(), 4);
});

test("refused, no-slot and task-rejected errors are not retried", async () => {
  for (const code of [1102, 1303, 1201]) {
    const script = scripted([new ServiceError({ operation: "listImages", code, httpStatus: 429, message: "m", requestId: "r" })]);
    const result = await runTest(Effect.either(withRetry(script.effect, Schedule.recurs(3))));
    assert.ok(Either.isLeft(result));
    assert.is(script.attempts(), 1, `code ${code}`);
  }
});

test("when the schedule ends, the last error is returned unchanged", async () => {
  const script = scripted([tooFast(), tooFast(), tooFast(), tooFast()]);
  const result = await runTest(Effect.either(withRetry(script.effect, Schedule.recurs(2))));
  assert.is(script.attempts(), 3);
  assert.ok(Either.isLeft(result) && result.left._tag === "ServiceError" && result.left.code === 1302);
});

test("beforeRetry runs before each attempt after the first, not before the first", async () => {
  let checks = 0;
  const script = scripted([tooFast(), tooFast()]);
  const check = Effect.sync(() => {
    checks += 1;
    // Each check comes just before the attempt it guards.
    assert.is(script.attempts(), checks);
  });
  const result = await runTest(withRetry(script.effect, Schedule.recurs(3), check));
  assert.is(result, 3);
  assert.is(checks, 2);
});

test("a failing beforeRetry stops the retries: nothing more is sent, the effect fails with its error", async () => {
  class Lost extends Error {
    readonly _tag = "Lost";
  }
  let checks = 0;
  const script = scripted([tooFast(), tooFast()]);
  const check = Effect.suspend(() => {
    checks += 1;
    return Effect.fail(new Lost("lock taken over"));
  });
  const result = await runTest(Effect.either(withRetry(script.effect, Schedule.recurs(3), check)));
  assert.is(script.attempts(), 1, "no attempt after the failed check");
  assert.is(checks, 1);
  assert.ok(Either.isLeft(result) && result.left instanceof Lost, `failed with the check's own error: ${JSON.stringify(result)}`);
});

test("an error of the effect's own that is no ApiError (a create's last check withholding a send) is not retried and comes out unchanged", async () => {
  class Lost extends Error {
    readonly _tag = "TransportError"; // a tag alone does not make an ApiError
  }
  let attempts = 0;
  const effect = Effect.suspend(() => {
    attempts += 1;
    return attempts === 1 ? Effect.fail<ApiError | Lost>(tooFast()) : Effect.fail(new Lost("lock taken over"));
  });
  const result = await runTest(Effect.either(withRetry(effect, Schedule.recurs(5))));
  assert.is(attempts, 2, "retried after the 1302, not after its own error");
  assert.ok(Either.isLeft(result) && result.left instanceof Lost, `failed with its own error: ${JSON.stringify(result)}`);
});

test("without a retry, beforeRetry never runs", async () => {
  let checks = 0;
  const script = scripted([]);
  const result = await runTest(withRetry(script.effect, Schedule.recurs(3), Effect.sync(() => void (checks += 1))));
  assert.is(result, 1);
  assert.is(checks, 0);
});

test("parseRetryAfter reads seconds and HTTP dates, and ignores nonsense", () => {
  const now = Date.parse("2026-01-01T00:00:00Z");
  assert.is(parseRetryAfter("2", now), 2000);
  assert.is(parseRetryAfter("0", now), 0);
  assert.is(parseRetryAfter("Thu, 01 Jan 2026 00:00:30 GMT", now), 30_000);
  assert.is(parseRetryAfter("Wed, 31 Dec 2025 23:00:00 GMT", now), 0);
  assert.is(parseRetryAfter("soon", now), undefined);
  assert.is(parseRetryAfter(null, now), undefined);
});

test.run();
