// The CLI entry: parses the command line, runs one command, and maps how it ended to
// an exit code (src/exit/ExitCode.ts). A problem the user can fix is printed as one clear
// message; only a bug prints a stack trace. What a start loads is kept small: `--help`
// and `--version` load this file, the command list, the help text and the argument
// parser (node:util's parseArgs) only; a command's module (and yaml, Effect, the
// engine, ...) is imported when that command runs, and UsageError (which brings
// effect/Data, the core of Effect) only when the command line is wrong.

import { readFileSync } from "node:fs";
import type { CommandIO } from "./Command.js";
import { commands } from "./commands.js";
import { ExitCode, exitCodeFor, isUserFacing } from "../exit/ExitCode.js";
import { commandHelp, programHelp } from "./help.js";
import { annotateFailure } from "./ciAnnotations.js";
import { parseCommandArgs } from "./parseCommandArgs.js";

const version = (): string => {
  const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as {
    version: string;
  };
  return pkg.version;
};

export const main = async (argv: readonly string[], io: CommandIO): Promise<ExitCode> => {
  const [first, ...rest] = argv;
  if (first === undefined || first === "-h" || first === "--help" || first === "help") {
    const entry = first === "help" ? commands.find((c) => c.name === rest[0]) : undefined;
    io.stdout.write(entry ? commandHelp(await entry.load()) : programHelp(commands, version()));
    return ExitCode.Ok;
  }
  if (first === "-v" || first === "--version") {
    io.stdout.write(`${version()}\n`);
    return ExitCode.Ok;
  }
  const entry = commands.find((c) => c.name === first);
  try {
    if (!entry) {
      throw await usageError({
        message: `unknown command '${first}'. Commands: ${commands.map((c) => c.name).join(", ")}. See 'omnibatch --help'.`,
      });
    }
    const command = await entry.load();
    const args = parseCommandArgs(command, rest);
    if (args === "help") {
      io.stdout.write(commandHelp(command));
      return ExitCode.Ok;
    }
    if ("message" in args) throw await usageError(args);
    return await command.run(args, io);
  } catch (error) {
    return reportFailure(error, io);
  }
};

/** A wrong command line as the error it ends in (exit 2); UsageError is loaded only then. */
const usageError = async (problem: { readonly message: string; readonly command?: string }): Promise<Error> =>
  new (await import("./UsageError.js")).UsageError(problem);

/** Prints how a command failed and returns its exit code. */
export const reportFailure = (error: unknown, io: CommandIO): ExitCode => {
  if (isUserFacing(error)) {
    io.stderr.write(`omnibatch: ${error.message}\n`);
    annotateFailure(error, io);
  } else {
    io.stderr.write(
      `omnibatch: internal error (this is a bug in omnibatch, please report it):\n${
        error instanceof Error ? (error.stack ?? error.message) : String(error)
      }\n`,
    );
  }
  return exitCodeFor(error);
};
