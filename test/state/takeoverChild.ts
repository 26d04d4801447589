// A run taking a stale run lock over in its own process, for runLockFrozenTaker.test.ts:
// it stops itself (SIGSTOP) at the named step of its takeover, and once thawed prints
// one JSON line: whether it holds the lock, and if so whether the lock confirms as its.

import { Effect, Exit, Scope } from "effect";
import { acquireRunLock } from "../../src/state/RunLock.js";

const [lockfile, staleMs, freezeAt] = process.argv.slice(2);
const scope = await Effect.runPromise(Scope.make());
const exit = await Effect.runPromiseExit(
  Scope.extend(
    acquireRunLock(lockfile!, {
      staleMs: Number(staleMs),
      heartbeatMs: 600_000,
      onTakeoverStep: (step) => {
        if (step !== freezeAt) return;
        // A pipe's write is synchronous on Linux: the line is out before the process stops.
        process.stdout.write("frozen\n");
        process.kill(process.pid, "SIGSTOP");
      },
    }),
    scope,
  ),
);
if (Exit.isSuccess(exit)) {
  console.log(JSON.stringify({ held: true, token: exit.value.holder.token, confirmed: await exit.value.confirm() }));
} else {
  const error = exit.cause._tag === "Fail" ? (exit.cause.error as { _tag?: string }) : undefined;
  console.log(JSON.stringify({ held: false, error: error?._tag ?? String(exit.cause) }));
}
await Effect.runPromise(Scope.close(scope, Exit.void));
