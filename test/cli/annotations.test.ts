// With GITHUB_ACTIONS=true the CLI also prints manifest problems and warnings and
// lockfile problems as workflow annotations (on stderr, so --json stdout stays clean);
// without it, none.

import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { execa } from "execa";
import { suite } from "uvu";
import * as assert from "uvu/assert";

const bin = fileURLToPath(new URL("../../dist/cli/bin.js", import.meta.url));
const t = suite("CLI annotations");

const manifest = (prompt: string) => `version: 1
name: ann
outputs: out
jobs:
  stills:
    kind: image
    matrix:
      subject: [apple, boat]
    prompt: ${prompt}
`;

const withDir = async (body: (dir: string) => Promise<void>) => {
  const dir = mkdtempSync(join(tmpdir(), "omnibatch-ann-"));
  try {
    await body(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
};

const cli = (dir: string, args: string[], github: boolean) =>
  execa("node", [bin, ...args], { cwd: dir, reject: false, extendEnv: false, env: { PATH: process.env["PATH"]!, ...(github ? { GITHUB_ACTIONS: "true", GITHUB_WORKSPACE: dir } : {}) } });

const annotations = (text: string) => text.split("\n").filter((l) => l.startsWith("::"));

t("validate and plan --json: each manifest problem an error annotation at its line on stderr, stdout only JSON; none outside GitHub Actions", async () => {
  await withDir(async (dir) => {
    writeFileSync(join(dir, "m.yaml"), manifest("3"));
    const plain = await cli(dir, ["validate", "m.yaml"], false);
    assert.is(plain.exitCode, 2);
    assert.equal(annotations(plain.stderr + plain.stdout), []);
    const gh = await cli(dir, ["validate", "m.yaml"], true);
    assert.is(gh.exitCode, 2);
    assert.equal(annotations(gh.stderr), ["::error file=m.yaml,line=9,col=13,title=omnibatch%3A manifest::jobs.stills.prompt must be a string"]);
    const json = await cli(dir, ["plan", "m.yaml", "--json"], true);
    assert.is(json.exitCode, 2);
    assert.is(JSON.parse(json.stdout).valid, false);
    assert.equal(annotations(json.stderr), annotations(gh.stderr));
  });
});

t("a damaged lockfile is an error annotation on the lockfile", async () => {
  await withDir(async (dir) => {
    writeFileSync(join(dir, "m.yaml"), manifest('"a {{ subject }}"'));
    writeFileSync(join(dir, "m.lock.json"), "{ not json");
    const r = await cli(dir, ["plan", "m.yaml"], true);
    assert.is(r.exitCode, 2);
    const lines = annotations(r.stderr);
    assert.is(lines.length, 1, r.stderr);
    assert.ok(lines[0]!.startsWith("::error file=m.lock.json,title=omnibatch%3A lockfile::lockfile "), lines[0]);
    assert.not.match(lines[0]!.split("::").at(-1)!, /[\r\n]/);
  });
});

t.run();
