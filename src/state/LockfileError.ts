// The ways reading, locking and writing a lockfile can fail, as values a person can act
// on. LockfileInvalid and LockfileBusy end the process with exit 2 (src/exit/ExitCode.ts).

import * as Data from "effect/Data";

/** The lockfile (or its journal) cannot be read or does not match the schema. The file is kept untouched. */
export class LockfileInvalid extends Data.TaggedError("LockfileInvalid")<{
  readonly path: string;
  /** What is wrong, e.g. "not JSON: Unexpected token at position 12" or "/tasks/x/state: must be one of ...". */
  readonly problem: string;
  readonly message: string;
}> {}

/** There is no lockfile where the manifest says (nothing has run yet, or it was moved). */
export class LockfileMissing extends Data.TaggedError("LockfileMissing")<{
  readonly path: string;
  readonly message: string;
}> {}

/** Another run holds the lockfile's run lock. */
export class LockfileBusy extends Data.TaggedError("LockfileBusy")<{
  readonly path: string;
  readonly holder: { readonly pid: number; readonly host: string; readonly started: number } | undefined;
  readonly message: string;
}> {}

/**
 * Writing the lockfile or its journal failed (disk full, permissions, lock lost).
 * `lockLost`: refused because the run lock is no longer provably ours (the engine ends
 * such a run as RunLockLost, exit 3, like the heartbeat noticing it first).
 */
export class LockfileWriteError extends Data.TaggedError("LockfileWriteError")<{
  readonly path: string;
  readonly cause: unknown;
  readonly message: string;
  readonly lockLost?: boolean;
}> {}

/**
 * Writing the lockfile failed after this run sent creates (disk full, lock taken over):
 * paid work exists at the service. Exit 3, never 2: the next run (once the cause is
 * fixed) finds every task whose create was sent by looking it up, since each create's
 * intent was flushed before it was sent.
 */
export class LockfileWriteAfterSend extends Data.TaggedError("LockfileWriteAfterSend")<{
  readonly path: string;
  readonly cause: unknown;
  readonly message: string;
}> {}

/**
 * The run lock was taken over by another run, or this run stalled past its stale limit
 * (frozen, suspended) so another may be taking it over: the run stops at once, writing
 * nothing more. Exit 3: every create it sent had its intent flushed first, so the next
 * run finds those tasks by lookup; nothing is paid twice.
 */
export class RunLockLost extends Data.TaggedError("RunLockLost")<{
  readonly path: string;
  readonly message: string;
}> {}

export const runLockLost = (path: string): RunLockLost =>
  new RunLockLost({
    path,
    message:
      `the run lock of ${path} was taken over by another run, or this run stalled past the lock's stale limit ` +
      `(frozen, suspended) so another run may be taking it over: stopped at once, writing and sending nothing more, ` +
      `so the two runs never overwrite each other or pay twice. Tasks this run created are found by lookup ` +
      `(external_task_id) on the next run: run the same command again once the other run has ended.`,
  });

/** The LockfileWriteAfterSend for `error`, raised after creates were sent. */
export const afterSend = (error: LockfileWriteError): LockfileWriteAfterSend =>
  new LockfileWriteAfterSend({
    path: error.path,
    cause: error.cause,
    message:
      `${error.message}\nCreates were already sent, so tasks may exist (and be paid for) at the service. ` +
      `Fix the cause and run again: the next run looks up every task whose create may have been sent, by external_task_id, and downloads its result; nothing is paid twice.`,
  });

export type LockfileError = LockfileInvalid | LockfileBusy | LockfileWriteError;

/** Builds a LockfileInvalid whose message says where, what, that the file was kept, and how to recover. */
export const lockfileInvalid = (path: string, problem: string): LockfileInvalid =>
  new LockfileInvalid({
    path,
    problem,
    message:
      `lockfile ${path} is damaged: ${problem}.\n` +
      `The file was kept untouched. To recover, restore it (e.g. 'git checkout -- ${path}'), ` +
      `or move it aside ('mv ${path} ${path}.damaged'): the next run then finds the tasks it ` +
      `already created by looking them up at the service by external_task_id, so nothing is paid twice.`,
  });
