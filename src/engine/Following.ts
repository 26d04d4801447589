// Following: asks the service about the tasks in flight (a Poll effect) and listens for
// callback cues. Both only report what they heard (Polled, PollFailed, Callback); what it
// means for each task is decided by the state machine (followAnswers.ts).

import { Clock, Effect } from "effect";
import { classify } from "../api/classify.js";
import { refusalLine } from "../api/refusal.js";
import type { CallbackFeed, CallbackObservation } from "../callbacks/CallbackListener.js";
import type { TaskView } from "../protocol/TaskView.js";
import type { EngineEffect, EngineEvent } from "./EngineEvent.js";
import type { KindAdapter } from "./ServiceKinds.js";

/**
 * One poll, as the event it ends in: the kind's tasks in flight by id, and the "outcome
 * unknown" ones by external id (batched like every lookup).
 */
export const poll = (adapter: KindAdapter, order: Extract<EngineEffect, { _tag: "Poll" }>, address = ""): Effect.Effect<EngineEvent> =>
  Effect.gen(function* () {
    const { kind, tasks, lookups } = order;
    const marks = new Map(lookups.map((l) => [l.id, l.watermark] as const));
    const result = yield* Effect.either(
      Effect.all([
        tasks.length > 0 ? adapter.byId(tasks) : Effect.succeed({ views: [], odd: [] }),
        lookups.length > 0 ? adapter.byExternalId(
              lookups.map((l) => l.id),
              (id) => marks.get(id) ?? false,
            ) : Effect.succeed(new Map<string, TaskView>()),
      ]),
    );
    const now = yield* Clock.currentTimeMillis;
    if (result._tag === "Left") {
      const refused = classify(result.left) === "refused";
      return { _tag: "PollFailed", now, kind, message: refused ? refusalLine(result.left, { address }) : result.left.message, refused } as const;
    }
    const [followed, found] = result.right;
    return {
      _tag: "Polled",
      now,
      asked: tasks,
      views: followed.views,
      odd: followed.odd,
      ...(lookups.length > 0 ? { lookedUp: { ids: lookups.map((l) => l.id), found, startedAt: order.at } } : {}),
    } as const;
  });

/** Hands every callback observation to `offer` (the controller's inbox), and tells `onDrop` why one was dropped, until the scope closes. */
export const listen = (feed: CallbackFeed, offer: (observation: CallbackObservation) => void, onDrop?: (reason: string) => void) =>
  Effect.gen(function* () {
    const unsubscribe = feed.subscribe(offer, onDrop);
    yield* Effect.addFinalizer(() => Effect.sync(unsubscribe));
  });
