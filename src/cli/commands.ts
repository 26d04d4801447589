// The command registry: every command of the CLI, in the order help lists them (the names
// and summaries are commandIndex.ts).
// Entries are light: a command's module (and the libraries it pulls in: the engine,
// the emulator, ajv) is imported only when that command runs, so `--help` and
// `--version` start fast. test/cli/help.test.ts checks names and summaries agree.

import type { Command } from "./Command.js";
import { commandIndex, type CommandName } from "./commandIndex.js";

export interface CommandEntry {
  readonly name: string;
  /** One line for the command list; the same as the command's own `summary`. */
  readonly summary: string;
  readonly load: () => Promise<Command>;
}

/** How each command's module is loaded: only when that command runs. */
const loaders: Record<CommandName, () => Promise<Command>> = {
  init: async () => (await import("./commands/init.js")).initCommand,
  validate: async () => (await import("./commands/validate.js")).validateCommand,
  plan: async () => (await import("./commands/plan.js")).planCommand,
  doctor: async () => (await import("./commands/doctor.js")).doctorCommand,
  run: async () => (await import("./commands/run.js")).runCommand,
  pull: async () => (await import("./commands/pull.js")).pullCommand,
  status: async () => (await import("./commands/status.js")).statusCommand,
  review: async () => (await import("./commands/review.js")).reviewCommand,
  report: async () => (await import("./commands/report.js")).reportCommand,
  verify: async () => (await import("./commands/verify.js")).verifyCommand,
  prune: async () => (await import("./commands/prune.js")).pruneCommand,
  emulator: async () => (await import("./commands/emulator.js")).emulatorCommand,
};

export const commands: readonly CommandEntry[] = commandIndex.map((c) => ({ name: c.name, summary: c.summary, load: loaders[c.name] }));
