// Renders --help for the program and for each command from the commands' own data.

import type { Command, OptionSpec } from "./Command.js";

const formatOption = (name: string, spec: OptionSpec): [string, string] => {
  const flag = `${spec.short ? `-${spec.short}, ` : "    "}--${name}${spec.type === "string" ? ` ${spec.value ?? "VALUE"}` : ""}`;
  return [flag, spec.description];
};

const table = (rows: ReadonlyArray<[string, string]>): string => {
  const width = Math.max(0, ...rows.map(([left]) => left.length));
  return rows.map(([left, right]) => `  ${left.padEnd(width)}  ${right}`).join("\n");
};

export const programHelp = (commands: readonly { name: string; summary: string }[], version: string): string =>
  [
    `omnibatch ${version}: run batches of paid video and image generation tasks from YAML manifests.`,
    "",
    "Usage: omnibatch <command> [options]",
    "",
    "Commands:",
    table(commands.map((c) => [c.name, c.summary])),
    "",
    "Options:",
    table([
      ["-h, --help", "Show help (also: omnibatch <command> --help)."],
      ["-v, --version", "Print the version."],
    ]),
    "",
    "Environment:",
    table([
      ["OMNIBATCH_API_KEY", "The service's API key (never read from a file or a flag)."],
      ["OMNIBATCH_BASE_URL", "The service's address (default https://api-singapore.klingai.com; China: https://api-beijing.klingai.com)."],
      ["OMNIBATCH_SERVICE", "The service's name in model names and the video path (default kling)."],
    ]),
    "",
    "Exit codes: 0 done, 1 some tasks failed, 2 invalid manifest or command line,",
    "3 stopped with work pending, 4 budget reached, 5 the account refused.",
    "",
  ].join("\n");

export const commandHelp = (command: Command): string =>
  [
    `Usage: ${command.usage}`,
    "",
    command.description ?? command.summary,
    "",
    "Options:",
    table([
      ...Object.entries(command.options).map(([name, spec]) => formatOption(name, spec)),
      ["-h, --help", "Show this help."],
    ]),
    "",
  ].join("\n");
