// The exit codes of the product contract, and the one place that decides which
// failure maps to which code. Every error a user can act on carries a `_tag`; the
// table below turns tags into codes. Anything else is a bug (exit 70, with a stack).
// Ground (src/README.md): the engine's summary, the CLI and the review page all take their
// codes from here, so no layer reaches up to the command line for them.

export const ExitCode = {
  /** All done. */
  Ok: 0,
  /** Some tasks ended failed. */
  TasksFailed: 1,
  /** The manifest or the command line is invalid; nothing was sent. */
  Invalid: 2,
  /** Stopped with work pending (time limit, interrupt): run again to continue. */
  Pending: 3,
  /** The budget stopped submission. */
  Budget: 4,
  /**
   * The service refused (authentication, balance, permission, no such API or model: a wrong
   * address or service name), nothing answers at its address, or the service answered a
   * charge that cannot be true; nothing more was submitted.
   */
  Refused: 5,
  /** Results the lockfile records are lost: not here, not in a store, deleted at the service (issue 16). */
  ResultsLost: 6,
  /** A bug in omnibatch itself (EX_SOFTWARE); reported with a stack trace. */
  Internal: 70,
  /** Nobody reads the output any more (a closed pipe: `| head`): 128 + SIGPIPE, as a shell reports it (closedOutput.ts). */
  ClosedPipe: 141,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/**
 * Error tags (the `_tag` of a Data.TaggedError, or of a plain object) that a user can
 * act on, and the exit code each ends the process with. A tag not listed here is a bug.
 * A run that ends (done, failed, pending, budget, refused) is not an error: its code is
 * `exitCodeByOutcome` below.
 */
const exitCodeByTag: Record<string, ExitCode> = {
  UsageError: ExitCode.Invalid,
  ManifestInvalid: ExitCode.Invalid,
  ServiceNameInvalid: ExitCode.Invalid,
  LockfileInvalid: ExitCode.Invalid,
  LockfileBusy: ExitCode.Invalid,
  LockfileWriteError: ExitCode.Invalid,
  LockfileMissing: ExitCode.Invalid,
  EmulatorConfigInvalid: ExitCode.Invalid,
  // Saved plans (run --plan): unreadable, or the manifest or lockfile changed since.
  PlanInvalid: ExitCode.Invalid,
  PlanStale: ExitCode.Invalid,
  MissingApiKey: ExitCode.Invalid,
  // The review file (src/review/) does not match its schema: fix it or delete it.
  ReviewFileInvalid: ExitCode.Invalid,
  ClientConfigInvalid: ExitCode.Invalid,
  // Start-up checks (src/run/startChecks.ts): found before anything is sent.
  FolderNotWritable: ExitCode.Invalid,
  OutputsFolderUnsafe: ExitCode.Invalid,
  // The lockfile names another service (region): refused before anything is sent.
  ServiceChanged: ExitCode.Invalid,
  // The outputs store (s3://...) cannot be listed: found before anything is sent.
  StoreUnavailable: ExitCode.Invalid,
  // The lockfile could not be written (disk full, lock taken over) after creates were
  // sent: paid work exists at the service, so never "nothing was sent" (2). The next run
  // finds every task whose create was sent (its intent was flushed first) by lookup.
  LockfileWriteAfterSend: ExitCode.Pending,
  // The run lock was lost mid-run: stopped at once; the next run resumes (by lookup).
  RunLockLost: ExitCode.Pending,
  // Nothing answers at the service's address and the run has nothing there (run/reachCheck.ts):
  // stopped at once, nothing sent; the address (or the network) is to check, as for a refusal.
  ServiceUnreachable: ExitCode.Refused,
  // An answer that holds for every request (no such API, the key refused: api/refusal.ts), as `doctor` reports it.
  ServiceRefused: ExitCode.Refused,
  // `doctor`: the manifest names a model the service (by its configured name) does not have.
  ModelNotOffered: ExitCode.Invalid,
};

export interface UserFacing {
  readonly _tag: string;
  readonly message: string;
}

export const isUserFacing = (error: unknown): error is UserFacing =>
  typeof error === "object" &&
  error !== null &&
  typeof (error as { _tag?: unknown })._tag === "string" &&
  (error as { _tag: string })._tag in exitCodeByTag;

export const exitCodeFor = (error: unknown): ExitCode =>
  isUserFacing(error) ? exitCodeByTag[error._tag]! : ExitCode.Internal;

/** The exit code a run ends with, by its outcome (RunSummary.outcome). */
export const exitCodeByOutcome = {
  done: ExitCode.Ok,
  failed: ExitCode.TasksFailed,
  pending: ExitCode.Pending,
  // Done all it can while outputs await review: a person is needed, then a new run (3, as
  // for any run that has work left; CI can tell it apart by the summary's outcome).
  review: ExitCode.Pending,
  budget: ExitCode.Budget,
  refused: ExitCode.Refused,
  // The service answered a charge that cannot be true: refused, nothing more submitted.
  charge: ExitCode.Refused,
  lost: ExitCode.ResultsLost,
} as const;
