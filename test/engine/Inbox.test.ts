// The controller's inbox (src/engine/Inbox.ts): messages come out in the order they
// went in, across the emptying that resets its storage; a wait ends at the first message
// or at the time asked, on Effect's clock (TestClock here, so nothing sleeps for real);
// an alarm already set at or before the time asked serves a later wait, so the loop does
// not fork a sleeping fiber per wait; an alarm that fired is forgotten.

import { Effect, Fiber, FiberSet, TestClock, TestContext } from "effect";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { Inbox } from "../../src/engine/Inbox.js";

const t = suite("engine inbox");

const run = <A>(body: (inbox: Inbox<string>, sleepers: FiberSet.FiberSet<void, never>) => Effect.Effect<A>) =>
  Effect.runPromise(
    Effect.scoped(Effect.flatMap(FiberSet.make<void, never>(), (sleepers) => body(new Inbox<string>(sleepers), sleepers))).pipe(
      Effect.provide(TestContext.TestContext),
    ),
  );

/** Whether `fiber` has ended, without waiting for it. */
const ended = (fiber: Fiber.RuntimeFiber<void>) => Effect.map(Fiber.poll(fiber), (exit) => exit._tag === "Some");

t("messages come out in the order offered, also after the inbox emptied and filled again", async () => {
  await run((inbox) =>
    Effect.sync(() => {
      const out: string[] = [];
      for (const m of ["a", "b", "c"]) inbox.offer(m);
      assert.is(inbox.size, 3);
      out.push(inbox.take()!, inbox.take()!);
      inbox.offer("d");
      for (let m = inbox.take(); m !== undefined; m = inbox.take()) out.push(m);
      assert.is(inbox.size, 0);
      assert.is(inbox.take(), undefined);
      for (let i = 0; i < 1000; i++) inbox.offer(`x${i}`);
      for (let i = 0; i < 1000; i++) assert.is(inbox.take(), `x${i}`);
      assert.equal(out, ["a", "b", "c", "d"]);
    }),
  );
});

t("a wait returns at once when a message waits or the time asked has come", async () => {
  await run((inbox, sleepers) =>
    Effect.gen(function* () {
      inbox.offer("m");
      yield* inbox.waitUntil(10_000, 0);
      assert.is(inbox.take(), "m");
      yield* inbox.waitUntil(5, 5);
      assert.is(yield* FiberSet.size(sleepers), 0, "no alarm was set for a wait that did not wait");
    }),
  );
});

t("a wait ends at the first message, before its time", async () => {
  await run((inbox) =>
    Effect.gen(function* () {
      const waiting = yield* Effect.fork(inbox.waitUntil(60_000, 0));
      yield* TestClock.adjust("1 millis");
      assert.not.ok(yield* ended(waiting), "still waiting with no message");
      inbox.offer("answer");
      yield* Fiber.join(waiting);
      assert.is(inbox.take(), "answer");
    }),
  );
});

t("a wait with no message ends at its time, not before", async () => {
  await run((inbox, sleepers) =>
    Effect.gen(function* () {
      const waiting = yield* Effect.fork(inbox.waitUntil(1_000, 0));
      yield* TestClock.adjust("999 millis");
      assert.not.ok(yield* ended(waiting), "woke before its time");
      yield* TestClock.adjust("1 millis");
      yield* Fiber.join(waiting);
      assert.is(inbox.size, 0);
      assert.is(yield* FiberSet.size(sleepers), 0, "the alarm that fired is gone");
    }),
  );
});

t("an alarm set at or before the time asked serves the next wait; an earlier time sets a new one", async () => {
  await run((inbox, sleepers) =>
    Effect.gen(function* () {
      // Wait until 100, woken by a message at once: the alarm for 100 stays set.
      const first = yield* Effect.fork(inbox.waitUntil(100, 0));
      yield* Effect.yieldNow();
      inbox.offer("m");
      yield* Fiber.join(first);
      inbox.take();
      assert.is(yield* FiberSet.size(sleepers), 1);
      // A wait until 200 is served by the alarm at 100 (wakes early; the loop looks again).
      const second = yield* Effect.fork(inbox.waitUntil(200, 0));
      yield* Effect.yieldNow();
      assert.is(yield* FiberSet.size(sleepers), 1, "no second alarm for a later time");
      yield* TestClock.adjust("100 millis");
      yield* Fiber.join(second);
      assert.is(yield* FiberSet.size(sleepers), 0);
      // A wait until 150 (now 100) sets its own alarm, since none is set at or before it.
      const third = yield* Effect.fork(inbox.waitUntil(150, 100));
      yield* Effect.yieldNow();
      assert.is(yield* FiberSet.size(sleepers), 1);
      yield* TestClock.adjust("49 millis");
      assert.not.ok(yield* ended(third));
      yield* TestClock.adjust("1 millis");
      yield* Fiber.join(third);
    }),
  );
});

t("a wait interrupted (the loop stopped) leaves no waiter behind: a later message is kept for the next take", async () => {
  await run((inbox) =>
    Effect.gen(function* () {
      const waiting = yield* Effect.fork(inbox.waitUntil(60_000, 0));
      yield* Effect.yieldNow();
      yield* Fiber.interrupt(waiting);
      inbox.offer("late");
      assert.is(inbox.size, 1);
      yield* inbox.waitUntil(60_000, 0);
      assert.is(inbox.take(), "late");
    }),
  );
});

t.run();
