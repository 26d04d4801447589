// The one user-facing error of the emulator: a configuration (flags, config file,
// elements file or runtime patch) that cannot be used. Exit code 2 in the CLI.

import { Data } from "effect";

export class EmulatorConfigInvalid extends Data.TaggedError("EmulatorConfigInvalid")<{
  readonly message: string;
  readonly problems: readonly string[];
}> {}

export const configInvalid = (where: string, problems: readonly string[]): EmulatorConfigInvalid =>
  new EmulatorConfigInvalid({
    message: `invalid emulator configuration (${where}):\n${problems.map((p) => `  - ${p}`).join("\n")}`,
    problems,
  });
