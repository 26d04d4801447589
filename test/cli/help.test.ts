// The CLI as a user runs it: the built binary, its help, version and exit codes.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { execa } from "execa";
import { accessSync, constants, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const bin = fileURLToPath(new URL("../../dist/cli/bin.js", import.meta.url));
const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string; bin: { omnibatch: string } };
/** What `omnibatch` runs once installed: the launcher (src/cli/launcher.ts, bundled as CommonJS). */
const installed = fileURLToPath(new URL(`../../${pkg.bin.omnibatch}`, import.meta.url));

test("--version prints the package version and exits 0", async () => {
  const r = await execa("node", [bin, "--version"], { reject: false });
  assert.is(r.exitCode, 0);
  assert.is(r.stdout.trim(), pkg.version);
});

test("the built binary is executable and runs by itself (npx reuses a cached link to it without setting its mode)", async () => {
  accessSync(bin, constants.X_OK);
  const r = await execa(bin, ["--version"], { reject: false });
  assert.is(r.exitCode, 0, r.stderr);
  assert.is(r.stdout.trim(), pkg.version);
});

test("--help lists the exit codes and the API key variable", async () => {
  const r = await execa("node", [bin, "--help"], { reject: false });
  assert.is(r.exitCode, 0);
  assert.match(r.stdout, "Usage: omnibatch <command>");
  assert.match(r.stdout, "OMNIBATCH_API_KEY");
  assert.match(r.stdout, "5 the account refused");
});

test("an unknown command exits 2 with a one-line message and no stack trace", async () => {
  const r = await execa("node", [bin, "frobnicate"], { reject: false });
  assert.is(r.exitCode, 2);
  assert.match(r.stderr, "unknown command 'frobnicate'");
  assert.not.match(r.stderr, /\n\s+at /);
});

test("every registered command loads, and its name and summary match the registry (and the index the launcher prints)", async () => {
  const { commandIndex } = await import("../../src/cli/commandIndex.js");
  const { commands } = await import("../../src/cli/commands.js");
  assert.ok(commands.length >= 6);
  assert.equal(commands.map((c) => [c.name, c.summary]), commandIndex.map((c) => [c.name, c.summary]));
  for (const entry of commands) {
    const command = await entry.load();
    assert.is(command.name, entry.name);
    assert.is(command.summary, entry.summary);
  }
});

test("each command's --help exits 0 and shows its usage line", async () => {
  const { commands } = await import("../../src/cli/commands.js");
  for (const entry of commands) {
    const r = await execa("node", [bin, entry.name, "--help"], { reject: false });
    assert.is(r.exitCode, 0, entry.name);
    assert.match(r.stdout, `Usage: omnibatch ${entry.name}`);
  }
});

test("the installed executable answers --help, -h, no arguments, `help`, `help <not a command>`, --version and -v exactly as bin.js does", async () => {
  assert.is.not(installed, bin, "package.json names the launcher, not bin.js");
  accessSync(installed, constants.X_OK);
  for (const args of [["--help"], ["-h"], [], ["help"], ["help", "frobnicate"], ["--version"], ["-v"]]) {
    const viaBin = await execa("node", [bin, ...args], { reject: false, stripFinalNewline: false });
    const viaLauncher = await execa(installed, args, { reject: false, stripFinalNewline: false });
    assert.is(viaLauncher.exitCode, viaBin.exitCode, args.join(" "));
    assert.is(viaLauncher.exitCode, 0, args.join(" "));
    assert.is(viaLauncher.stdout, viaBin.stdout, `stdout of ${args.join(" ") || "(no arguments)"}`);
    assert.is(viaLauncher.stderr, viaBin.stderr, `stderr of ${args.join(" ") || "(no arguments)"}`);
    assert.ok(viaLauncher.stdout.length > 0);
  }
});

test("the installed executable hands every other command line to bin.js unchanged: a command's help, `help <command>`, a wrong command line", async () => {
  for (const [args, code] of [[["validate", "--help"], 0], [["help", "run"], 0], [["frobnicate"], 2], [["validate"], 2]] as const) {
    const viaBin = await execa("node", [bin, ...args], { reject: false });
    const viaLauncher = await execa(installed, [...args], { reject: false });
    assert.is(viaLauncher.exitCode, code, `${args.join(" ")}: ${viaLauncher.stderr}`);
    assert.is(viaLauncher.stdout, viaBin.stdout, args.join(" "));
    assert.is(viaLauncher.stderr, viaBin.stderr, args.join(" "));
  }
});

test.run();
