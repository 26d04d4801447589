// The library's public entry. Each module adds what it offers to programs that embed
// omnibatch instead of running the CLI.
export { ExitCode } from "./cli/ExitCode.js";
export { main as runCli } from "./cli/main.js";
