// `omnibatch init` as a user runs it (the built CLI): what it writes, that the starter
// runs on --emulate at once, that it never overwrites (exit 2, naming the file, nothing
// written), the .gitignore lines, and that examples/github/scheduled.yml is its workflow.

import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { execa } from "execa";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { schemaPathFrom } from "../../src/cli/commands/init.js";

const bin = fileURLToPath(new URL("../../dist/cli/bin.js", import.meta.url));
const cli = (cwd: string, args: readonly string[]) => execa("node", [bin, ...args], { cwd, reject: false, all: true, extendEnv: false, env: { PATH: process.env["PATH"]! } });
const t = suite("omnibatch init");

const inTemp = async (body: (dir: string) => Promise<void>) => {
  const dir = mkdtempSync(join(tmpdir(), "omnibatch-init-"));
  try {
    await body(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
};

t("init writes the manifest, data, workflow and .gitignore; the starter is valid and runs on --emulate to exit 0 at once; the emulated files are ignored", async () => {
  await inTemp(async (dir) => {
    const r = await cli(dir, ["init"]);
    assert.is(r.exitCode, 0, r.all);
    for (const f of ["starter.yaml", "data/starter.csv", ".github/workflows/omnibatch-starter.yml", ".gitignore"]) assert.ok(existsSync(join(dir, f)), f);
    const manifest = readFileSync(join(dir, "starter.yaml"), "utf8");
    assert.ok(manifest.startsWith("# yaml-language-server: $schema=./node_modules/omnibatch/schemas/manifest.schema.json\n"), manifest.split("\n")[0]);
    assert.equal(readFileSync(join(dir, ".gitignore"), "utf8").split("\n").slice(1, 6), ["*.emulate.lock.json", "*.emulate.lock.json.*", "*.emulate.state.json", "*.emulate.state.json.*", "/outputs/"]);
    const valid = await cli(dir, ["validate", "starter.yaml"]);
    assert.is(valid.exitCode, 0, valid.all);
    const run = await cli(dir, ["run", "starter.yaml", "--emulate", "--json"]);
    assert.is(run.exitCode, 0, run.all);
    const summary = JSON.parse(run.stdout.trim().split("\n").at(-1)!);
    assert.is(summary.outcome, "done");
    assert.is(summary.created, 4, "2 stills and a clip per still");
    assert.ok(summary.outputs.startsWith(join(dir, "outputs")));
    // Everything the emulated run wrote is covered by the .gitignore lines.
    const git = (args: string[]) => execa("git", args, { cwd: dir, reject: false });
    await git(["init", "-q"]);
    const status = await git(["status", "--porcelain", "--untracked-files=all"]);
    assert.equal(status.stdout.split("\n").map((l) => l.slice(3)).sort(), [".github/workflows/omnibatch-starter.yml", ".gitignore", "data/starter.csv", "starter.yaml"]);
  });
});

t("init refuses to overwrite: exit 2 naming the file, and nothing else is written", async () => {
  await inTemp(async (dir) => {
    mkdirSync(join(dir, "batches", "data"), { recursive: true });
    writeFileSync(join(dir, "batches", "data", "starter.csv"), "mine\n");
    writeFileSync(join(dir, ".gitignore"), "node_modules/");
    const r = await cli(dir, ["init", "batches"]);
    assert.is(r.exitCode, 2);
    assert.match(r.stderr, "omnibatch: batches/data/starter.csv already exists; init never overwrites");
    assert.not.ok(existsSync(join(dir, "batches", "starter.yaml")));
    assert.not.ok(existsSync(join(dir, ".github")));
    assert.is(readFileSync(join(dir, "batches", "data", "starter.csv"), "utf8"), "mine\n");
    assert.is(readFileSync(join(dir, ".gitignore"), "utf8"), "node_modules/");
    // Elsewhere it works, and the .gitignore is added to, never rewritten.
    const other = await cli(dir, ["init", "more", "--name", "spring"]);
    assert.is(other.exitCode, 0, other.all);
    assert.is(readFileSync(join(dir, ".gitignore"), "utf8"), "node_modules/\n# omnibatch: results and reports, and what --emulate writes\n*.emulate.lock.json\n*.emulate.lock.json.*\n*.emulate.state.json\n*.emulate.state.json.*\n/more/outputs/\n");
    const again = await cli(dir, ["init", "more", "--name", "spring"]);
    assert.is(again.exitCode, 2);
    assert.match(again.stderr, "more/spring.yaml already exists");
    const bad = await cli(dir, ["init", "--name", "Bad Name"]);
    assert.is(bad.exitCode, 2);
    assert.match(bad.stderr, "--name 'Bad Name' must be lowercase letters, digits and dashes");
  });
});

t("init DIR: the manifest in DIR with a $schema path from there; the workflow at the root naming DIR/NAME.yaml; .gitignore lines added once", async () => {
  await inTemp(async (dir) => {
    const r = await cli(dir, ["init", "manifests", "--name", "spring"]);
    assert.is(r.exitCode, 0, r.all);
    assert.match(readFileSync(join(dir, "manifests", "spring.yaml"), "utf8"), /^# yaml-language-server: \$schema=\.\.\/node_modules\/omnibatch\/schemas\/manifest\.schema\.json$/m);
    // The example in this repository is exactly this workflow.
    const example = readFileSync(fileURLToPath(new URL("../../examples/github/scheduled.yml", import.meta.url)), "utf8");
    assert.is(readFileSync(join(dir, ".github", "workflows", "omnibatch-spring.yml"), "utf8"), example);
    const second = await cli(dir, ["init", "manifests", "--name", "autumn"]);
    assert.is(second.exitCode, 0, second.all);
    assert.is(readFileSync(join(dir, ".gitignore"), "utf8").match(/\/manifests\/outputs\//g)?.length, 1);
  });
});

t("schemaPathFrom: the installed package's schema when running from node_modules (not npx's cache), else the project's node_modules", () => {
  assert.is(schemaPathFrom("/p/batches", "/p", "/p/node_modules/omnibatch"), "../node_modules/omnibatch/schemas/manifest.schema.json");
  assert.is(schemaPathFrom("/p", "/p", "/p/node_modules/omnibatch"), "./node_modules/omnibatch/schemas/manifest.schema.json");
  assert.is(schemaPathFrom("/p/a/b", "/p", "/home/u/src/omnibatch"), "../../node_modules/omnibatch/schemas/manifest.schema.json");
  assert.is(schemaPathFrom("/p", "/p", "/home/u/.npm/_npx/123/node_modules/omnibatch"), "./node_modules/omnibatch/schemas/manifest.schema.json");
  assert.is(schemaPathFrom("/p/sub", "/p/sub", "/p/node_modules/omnibatch"), "../node_modules/omnibatch/schemas/manifest.schema.json");
});

t.run();
