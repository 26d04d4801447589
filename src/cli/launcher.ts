// The `omnibatch` executable as installed (package.json "bin"): bundled on its own as
// CommonJS (dist/cli/omnibatch.cjs, scripts/bundleCli.mjs), so `omnibatch --help` and
// `--version` are answered without starting Node's ES module loader or reading any other
// file of the CLI: that start cost about 20 ms of CPU above `node -e 0`, most of what
// `--help` cost (docs/benchmarks.md, "What a start loads, and why"). Everything else,
// `help <command>` included, is the ES module CLI (bin.ts), imported here unchanged with
// the same command line. The output, the exit code and the closed-pipe handling of the
// answers given here are bin.ts's and main.ts's own (test/cli/help.test.ts compares them).
// Before any command is loaded it sets how V8 grows its heap (runHeap.ts): a run's peak
// memory is mostly garbage V8 lets accumulate in proportion to what is live.

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { CLOSED_PIPE_EXIT, guardClosedOutput } from "./closedOutput.js";
import { commandIndex } from "./commandIndex.js";
import { ExitCode } from "../exit/ExitCode.js";
import { programHelp } from "./help.js";

/** What main.ts answers without loading a command, or undefined for everything else. */
const quickAnswer = (argv: readonly string[]): (() => string) | undefined => {
  const [first, second] = argv;
  // As main.ts: `help` with no known command's name is the program's help.
  if (first === undefined || first === "-h" || first === "--help" || (first === "help" && !commandIndex.some((c) => c.name === second))) {
    return () => programHelp(commandIndex, version());
  }
  if (first === "-v" || first === "--version") return () => `${version()}\n`;
  return undefined;
};

/** The package's version, from the package.json two levels up (dist/cli/ -> the package), as main.ts reads it. */
const version = (): string => (JSON.parse(readFileSync(join(__dirname, "..", "..", "package.json"), "utf8")) as { version: string }).version;

const answer = quickAnswer(process.argv.slice(2));
if (answer) {
  const output = guardClosedOutput([process.stdout, process.stderr]);
  process.stdout.write(answer());
  process.exitCode = output.closed() ? CLOSED_PIPE_EXIT : ExitCode.Ok;
} else {
  // V8's heap grows at most 1.5 times what is live between full collections (runHeap.ts;
  // imported here, not above: node:v8 costs about 2 ms a `--help` need not pay). The ES
  // module CLI reads process.argv itself.
  void import("./runHeap.js").then((heap) => {
    heap.applyRunHeapSettings();
    return import("./bin.js");
  });
}
