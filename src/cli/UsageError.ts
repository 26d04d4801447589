import * as Data from "effect/Data";

/** The command line is wrong: unknown flag, missing argument, bad value. Exit 2. */
export class UsageError extends Data.TaggedError("UsageError")<{
  readonly message: string;
  readonly command?: string;
}> {}
