// A command is data (name, help, options) plus a handler that turns parsed arguments
// into a call of the library and an exit code. Commands hold no business logic.

import type { ExitCode } from "../exit/ExitCode.js";

export interface OptionSpec {
  readonly type: "string" | "boolean";
  readonly short?: string;
  /** Shown in --help. */
  readonly description: string;
  /** Placeholder for the value in --help, e.g. "URL". */
  readonly value?: string;
  readonly multiple?: boolean;
}

export interface CommandIO {
  readonly stdout: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
  readonly stderr: NodeJS.WritableStream & { isTTY?: boolean };
  /** Where a question's answer comes from (run's confirmation); absent in library use. */
  readonly stdin?: NodeJS.ReadableStream & { isTTY?: boolean };
  readonly env: NodeJS.ProcessEnv;
  readonly cwd: string;
  /**
   * Aborted when stdout or stderr can no longer be written to (the reader went away:
   * `| head`); set by the executable (bin.ts). A long command stops as on Ctrl-C.
   */
  readonly outputClosed?: AbortSignal;
}

export interface ParsedArgs {
  readonly values: Record<string, string | boolean | string[] | undefined>;
  readonly positionals: readonly string[];
}

export interface Command {
  readonly name: string;
  /** One line, shown in the command list. */
  readonly summary: string;
  /** e.g. "omnibatch validate <manifest.yaml> [options]" */
  readonly usage: string;
  /** Longer help text shown by `omnibatch <command> --help`. */
  readonly description?: string;
  readonly options: Readonly<Record<string, OptionSpec>>;
  /** Number of positional arguments accepted. */
  readonly positionals: { readonly min: number; readonly max: number; readonly name: string };
  readonly run: (args: ParsedArgs, io: CommandIO) => Promise<ExitCode>;
}

export const defineCommand = (command: Command): Command => command;
