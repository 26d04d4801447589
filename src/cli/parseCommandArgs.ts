// Turns a command's arguments into parsed values, or says what is wrong and where to look
// (main.ts makes that a UsageError, exit 2). It returns the problem rather than throwing
// the UsageError itself so that a start whose command line is right never loads
// UsageError, which brings effect/Data and with it the core of Effect (about 45 modules).

import { parseArgs } from "node:util";
import type { Command, ParsedArgs } from "./Command.js";

/** What is wrong with a command line, in the words UsageError prints. */
export interface CommandLineProblem {
  readonly command: string;
  readonly message: string;
}

export const parseCommandArgs = (command: Command, argv: readonly string[]): ParsedArgs | "help" | CommandLineProblem => {
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
    return {
      command: command.name,
      message: `${(error as Error).message.replace(/\. To specify a positional argument.*$/s, "")}. See 'omnibatch ${command.name} --help'.`,
    };
  }
  if (parsed.values.help) return "help";
  const { min, max, name } = command.positionals;
  if (parsed.positionals.length < min) {
    return { command: command.name, message: `missing ${name}. Usage: ${command.usage}` };
  }
  if (parsed.positionals.length > max) {
    return { command: command.name, message: `unexpected argument '${parsed.positionals[max]}'. Usage: ${command.usage}` };
  }
  return { values: parsed.values as ParsedArgs["values"], positionals: parsed.positionals };
};
