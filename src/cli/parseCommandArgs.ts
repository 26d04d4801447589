// Turns a command's arguments into parsed values, or a UsageError that says what is
// wrong and where to look. Apart from main.ts so `--help` does not load it (UsageError
// brings effect/Data, about 50 ms of a start).

import { parseArgs } from "node:util";
import type { Command, ParsedArgs } from "./Command.js";
import { UsageError } from "./UsageError.js";

export { UsageError };

export const parseCommandArgs = (command: Command, argv: readonly string[]): ParsedArgs | "help" => {
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
