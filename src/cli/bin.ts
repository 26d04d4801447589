#!/usr/bin/env node
// The `omnibatch` executable. Its output may be read by a process that stops reading
// (`| head`): that is handled here, once, for every command (closedOutput.ts).
import { CLOSED_PIPE_EXIT, guardClosedOutput } from "./closedOutput.js";
import { main } from "./main.js";

const output = guardClosedOutput([process.stdout, process.stderr]);
const code = await main(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  stdin: process.stdin,
  env: process.env,
  cwd: process.cwd(),
  outputClosed: output.signal,
});
process.exitCode = output.closed() ? CLOSED_PIPE_EXIT : code;
// The last lines (a run's summary) may be written just before the end: their write error
// arrives after the command returned, and still makes this a closed pipe's exit.
process.once("exit", () => {
  if (output.closed()) process.exitCode = CLOSED_PIPE_EXIT;
});
