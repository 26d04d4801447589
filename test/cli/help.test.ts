// The CLI as a user runs it: the built binary, its help, version and exit codes.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { execa } from "execa";
import { accessSync, constants, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const bin = fileURLToPath(new URL("../../dist/cli/bin.js", import.meta.url));
const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string };

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

test("every registered command loads, and its name and summary match the registry", async () => {
  const { commands } = await import("../../src/cli/commands.js");
  assert.ok(commands.length >= 6);
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

test.run();
