// Following: asks the service about the tasks in flight (a Poll effect) and listens for
// callback cues. Both only report what they heard (Polled, PollFailed, Callback); what it
// means for each task is decided by the state machine (followAnswers.ts).

import { Clock, Effect, Queue } from "effect";
import { classify } from "../api/classify.js";
import type { CallbackFeed, CallbackObservation } from "../callbacks/CallbackListener.js";
import type { ProductKind } from "../policy/Policy.js";
import type { Asked, EngineEvent } from "./EngineEvent.js";
import type { KindAdapter } from "./ServiceKinds.js";

/** One poll of the kind's tasks in flight, as the event it ends in. */
export const poll = (adapter: KindAdapter, kind: ProductKind, tasks: readonly Asked[]): Effect.Effect<EngineEvent> =>
  Effect.gen(function* () {
    const result = yield* Effect.either(adapter.byId(tasks));
    const now = yield* Clock.currentTimeMillis;
    if (result._tag === "Left") {
      return { _tag: "PollFailed", now, kind, message: result.left.message, refused: classify(result.left) === "refused" } as const;
    }
    return { _tag: "Polled", now, asked: tasks, views: result.right } as const;
  });

/** Puts every callback observation into `inbox`, and tells `onDrop` why one was dropped, until the scope closes. */
export const listen = <A>(feed: CallbackFeed, inbox: Queue.Queue<A>, wrap: (observation: CallbackObservation) => A, onDrop?: (reason: string) => void) =>
  Effect.gen(function* () {
    const unsubscribe = feed.subscribe((observation) => Queue.unsafeOffer(inbox, wrap(observation)), onDrop);
    yield* Effect.addFinalizer(() => Effect.sync(unsubscribe));
  });
