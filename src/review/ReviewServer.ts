// The review page's server (issue 12): not written yet.

import type { CommandIO } from "../cli/Command.js";
import { UsageError } from "../cli/UsageError.js";
import type { ExitCode } from "../cli/ExitCode.js";
import type { ReviewSession } from "./reviewSession.js";

export interface ServeOptions {
  readonly io: CommandIO;
  readonly port?: string;
  readonly host?: string;
}

export const serveReview = async (_session: ReviewSession, _options: ServeOptions): Promise<ExitCode> => {
  throw new UsageError({ command: "review", message: "give --approve, --reject or --list" });
};
