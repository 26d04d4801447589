// The command registry: every command of the CLI, in the order help lists them.
// Entries are light: a command's module (and the libraries it pulls in: the engine,
// the emulator, ajv) is imported only when that command runs, so `--help` and
// `--version` start fast. test/cli/help.test.ts checks names and summaries agree.

import type { Command } from "./Command.js";

export interface CommandEntry {
  readonly name: string;
  /** One line for the command list; the same as the command's own `summary`. */
  readonly summary: string;
  readonly load: () => Promise<Command>;
}

export const commands: readonly CommandEntry[] = [
  {
    name: "init",
    summary: "Scaffold a starter: manifest, data file, scheduled GitHub workflow, .gitignore lines.",
    load: async () => (await import("./commands/init.js")).initCommand,
  },
  {
    name: "validate",
    summary: "Check a manifest: schema, templates, matrix, every spec rule, local files.",
    load: async () => (await import("./commands/validate.js")).validateCommand,
  },
  {
    name: "plan",
    summary: "Show what a run would create, compared with the lockfile, and its estimated cost.",
    load: async () => (await import("./commands/plan.js")).planCommand,
  },
  {
    name: "run",
    summary: "Submit, follow, download and report until done, the time limit or the budget.",
    load: async () => (await import("./commands/run.js")).runCommand,
  },
  {
    name: "pull",
    summary: "Copy results from the outputs store (s3://...) to a local folder, verified by sha256.",
    load: async () => (await import("./commands/pull.js")).pullCommand,
  },
  {
    name: "status",
    summary: "Show the lockfile's view: counts per job and state, in flight, failures.",
    load: async () => (await import("./commands/status.js")).statusCommand,
  },
  {
    name: "review",
    summary: "Approve or reject the outputs of jobs marked review: a local page, or --approve/--reject/--list.",
    load: async () => (await import("./commands/review.js")).reviewCommand,
  },
  {
    name: "report",
    summary: "Write the reports again from the lockfile (report.html, results.jsonl, billing.*).",
    load: async () => (await import("./commands/report.js")).reportCommand,
  },
  {
    name: "prune",
    summary: "Remove superseded and orphaned tasks' files and records (shows them; --yes removes).",
    load: async () => (await import("./commands/prune.js")).pruneCommand,
  },
  {
    name: "emulator",
    summary: "Serve a local emulator of the generation service (free dry runs, CI).",
    load: async () => (await import("./commands/emulator.js")).emulatorCommand,
  },
];
