// What the CLI does when the reader of its output goes away (`omnibatch run ... | head -3`,
// a closed terminal): every later write to that stream would fail with EPIPE, and an
// unhandled stream error kills the process with a stack trace, wherever the write was (a
// progress timer, the summary). The executable (bin.ts) guards stdout and stderr here,
// once: the first failure is taken as "nobody reads any more": later writes are dropped,
// the command is told (a run stops as on Ctrl-C: the lockfile written, the run lock
// released), and the process exits with 141, the status a shell shows for a program
// ended by a closed pipe (128 + SIGPIPE).

import { ExitCode } from "../exit/ExitCode.js";

/** 128 + SIGPIPE (13): what a shell reports for a writer whose pipe closed. */
export const CLOSED_PIPE_EXIT = ExitCode.ClosedPipe;

export interface ClosedOutput {
  /** Aborted once stdout or stderr cannot be written to any more. */
  readonly signal: AbortSignal;
  /** Whether it happened. */
  readonly closed: () => boolean;
}

/**
 * Listens for write errors on the given streams (an error listener also keeps Node from
 * turning them into a crash). A stream whose reader went away fails every later write
 * too (EPIPE, then ERR_STREAM_DESTROYED): all are swallowed, the first one aborts.
 */
export const guardClosedOutput = (streams: readonly NodeJS.WritableStream[]): ClosedOutput => {
  const controller = new AbortController();
  const onError = () => {
    if (!controller.signal.aborted) controller.abort();
  };
  for (const s of streams) s.on("error", onError);
  return { signal: controller.signal, closed: () => controller.signal.aborted };
};
