// One decision at a time on a review file, across processes: the page's server, a second
// page, `review --approve/--reject` in a terminal. Each read-modify-write of the file
// happens under a lock, so no decision made meanwhile is lost (read, then written over).
// The lock is the run lock's mechanism (src/state/RunLock.ts: a folder made with mkdir,
// its owner file, a heartbeat, the takeover of one a killed process left) on
// `M.review.yaml.running`, held for the milliseconds of one decision.

import { Cause, Effect, Exit } from "effect";
import { reviewFileLockPolicy } from "../policy/Policy.js";
import { LockfileBusy } from "../state/LockfileError.js";
import { acquireRunLock, runLockPathOf } from "../state/RunLock.js";

/** Runs `work` holding the review file's lock; waits for a busy one (Policy.ts `reviewFileLockPolicy`). */
export const withReviewFileLock = async <A>(reviewFile: string, work: () => Promise<A>): Promise<A> => {
  const held = Effect.scoped(
    Effect.gen(function* () {
      yield* acquireRunLock(reviewFile, { staleMs: reviewFileLockPolicy.staleMs }).pipe(
        Effect.retry({ schedule: reviewFileLockPolicy.wait, while: (e) => e._tag === "LockfileBusy" }),
        Effect.mapError((e) =>
          e._tag !== "LockfileBusy"
            ? e
            : new LockfileBusy({
                path: reviewFile,
                holder: e.holder,
                message:
                  `the review file ${reviewFile} is being written by another 'omnibatch review' (lock folder ${runLockPathOf(reviewFile)}); ` +
                  "nothing was decided: try again (a lock left by a killed process is taken over by itself)",
              }),
        ),
      );
      return yield* Effect.tryPromise({ try: work, catch: (error) => error });
    }),
  );
  const exit = await Effect.runPromiseExit(held);
  if (Exit.isSuccess(exit)) return exit.value;
  throw Cause.squash(exit.cause);
};
