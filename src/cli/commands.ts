// The command registry: every command of the CLI, in the order help lists them.
// A command not built yet is simply absent.

import type { Command } from "./Command.js";
import { emulatorCommand } from "./commands/emulator.js";
import { planCommand } from "./commands/plan.js";
import { reportCommand } from "./commands/report.js";
import { runCommand } from "./commands/run.js";
import { statusCommand } from "./commands/status.js";
import { validateCommand } from "./commands/validate.js";

export const commands: readonly Command[] = [validateCommand, planCommand, runCommand, statusCommand, reportCommand, emulatorCommand];
