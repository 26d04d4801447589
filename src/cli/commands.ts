// The command registry: every command of the CLI, in the order help lists them.
// A command not built yet is simply absent.

import type { Command } from "./Command.js";

export const commands: readonly Command[] = [];
