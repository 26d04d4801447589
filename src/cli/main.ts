// The CLI entry: parses the command line, runs one command, and maps how it ended to
// an exit code (ExitCode.ts). A problem the user can fix is printed as one clear
// message; only a bug prints a stack trace.

import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import type { Command, CommandIO, ParsedArgs } from "./Command.js";
import { commands } from "./commands.js";
import { ExitCode, exitCodeFor, isUserFacing } from "./ExitCode.js";
import { commandHelp, programHelp } from "./help.js";
import { UsageError } from "./UsageError.js";
import { annotateFailure } from "./ciAnnotations.js";

const version = (): string => {
  const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as {
    version: string;
  };
  return pkg.version;
};

const parseCommandArgs = (command: Command, argv: readonly string[]): ParsedArgs | "help" => {
  const options: Record<string, { type: "string" | "boolean"; short?: string; multiple?: boolean }> = {
    help: { type: "boolean", short: "h" },
  };
  for (const [name, spec] of Object.entries(command.options)) {
    options[name] = {
      type: spec.type,
      ...(spec.short ? { short: spec.short } : {}),
      ...(spec.multiple ? { multiple: true } : {}),
    };
  }
  let parsed;
  try {
    parsed = parseArgs({ args: [...argv], options, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError({
      command: command.name,
      message: `${(error as Error).message.replace(/\. To specify a positional argument.*$/s, "")}. See 'omnibatch ${command.name} --help'.`,
    });
  }
  if (parsed.values.help) return "help";
  const { min, max, name } = command.positionals;
  if (parsed.positionals.length < min) {
    throw new UsageError({
      command: command.name,
      message: `missing ${name}. Usage: ${command.usage}`,
    });
  }
  if (parsed.positionals.length > max) {
    throw new UsageError({
      command: command.name,
      message: `unexpected argument '${parsed.positionals[max]}'. Usage: ${command.usage}`,
    });
  }
  return { values: parsed.values as ParsedArgs["values"], positionals: parsed.positionals };
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
      throw new UsageError({
        message: `unknown command '${first}'. Commands: ${commands.map((c) => c.name).join(", ")}. See 'omnibatch --help'.`,
      });
    }
    const command = await entry.load();
    const args = parseCommandArgs(command, rest);
    if (args === "help") {
      io.stdout.write(commandHelp(command));
      return ExitCode.Ok;
    }
    return await command.run(args, io);
  } catch (error) {
    return reportFailure(error, io);
  }
};

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
