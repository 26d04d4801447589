// status and report as a user runs them: the built CLI (npm run build first) on a
// fixture lockfile in a temp folder, with no API key and no network.

import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { execa } from "execa";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { stableJson } from "../../src/state/stableJson.js";
import { fixtureLock } from "./fixtureLock.js";

const bin = fileURLToPath(new URL("../../dist/cli/bin.js", import.meta.url));
const MANIFEST = `version: 1
name: spring
outputs: out/spring
jobs:
  keyframes:
    kind: image
    prompt: "a chair in a studio"
`;

const dirs: string[] = [];
const project = async (lock: string | null = stableJson(fixtureLock)) => {
  const dir = await mkdtemp(join(tmpdir(), "omnibatch-cli-report-"));
  dirs.push(dir);
  await writeFile(join(dir, "spring.yaml"), MANIFEST);
  if (lock !== null) await writeFile(join(dir, "spring.lock.json"), lock);
  return dir;
};
test.after(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

const omnibatch = (cwd: string, args: string[], env: Record<string, string> = {}) =>
  execa(process.execPath, [bin, ...args], { cwd, reject: false, env: { OMNIBATCH_API_KEY: "", ...env }, extendEnv: false });

test("report writes the four reports into the outputs folder and says where they are", async () => {
  const dir = await project();
  const summary = join(dir, "summary.md");
  const r = await omnibatch(dir, ["report", "spring.yaml"], { GITHUB_STEP_SUMMARY: summary });
  assert.is(r.exitCode, 0, r.stderr);
  for (const f of ["results.jsonl", "billing.csv", "billing.json", "billing.md"]) {
    assert.ok(r.stdout.includes(join("out", "spring", f)), r.stdout);
  }
  const billing = JSON.parse(await readFile(join(dir, "out", "spring", "billing.json"), "utf8"));
  assert.equal(
    billing.cash.map((c: { currency: string; cash_type: string; charged: string }) => `${c.currency}/${c.cash_type}=${c.charged}`),
    ["CNY/balance=1.05", "USD/balance=1.0", "USD/test_balance=5.5"],
  );
  assert.is((await readFile(join(dir, "out", "spring", "results.jsonl"), "utf8")).trimEnd().split("\n").length, 10);
  assert.match(await readFile(summary, "utf8"), /# omnibatch billing: spring/);
  assert.is(await readFile(join(dir, "spring.lock.json"), "utf8"), stableJson(fixtureLock), "the lockfile is not touched");
});

test("report --json prints the files and the summary as one JSON object", async () => {
  const dir = await project();
  const r = await omnibatch(dir, ["report", "spring.yaml", "--json"]);
  assert.is(r.exitCode, 0, r.stderr);
  const out = JSON.parse(r.stdout);
  assert.is(out.files.length, 5);
  assert.is(out.summary.tasks, 10);
  assert.is(out.summary.states.failed, 1);
});

test("status shows counts per job, in flight with ages, failures with reasons and no run in progress", async () => {
  const dir = await project();
  const r = await omnibatch(dir, ["status", "spring.yaml"]);
  assert.is(r.exitCode, 0, r.stderr);
  assert.match(r.stdout, /^spring: 10 tasks in spring\.lock\.json/);
  assert.match(r.stdout, /No run in progress\./);
  assert.match(r.stdout, /clips\s+6\s+4\s+2\s+0\s+0/);
  assert.match(r.stdout, /keyframes\s+4\s+2\s+0\s+0\s+2/);
  assert.match(r.stdout, /In flight \(2\), oldest first:\n  spring-clips-j  succeeded  t-j  \d+d \d\dh\n  spring-clips-i  processing  t-i/);
  assert.match(r.stdout, /Failed \(2\), by reason:\n  content risk \| prompt, rejected \(code 1301\): 1 task\(s\)\n    keyframes \(no matrix\)  spring-keyframes-g/);
  assert.match(r.stdout, /bad resolution \(code 1201\): 1 task\(s\)\n    keyframes \(no matrix\)  spring-keyframes-h  \(rejected, nothing was created; the next run sends it again\)/);
  assert.match(r.stdout, /Spent: CNY 1\.05; USD 1\.00; USD 5\.50 \(test_balance\); 2\.5 image units; 3 video units/);
});

test("status --json reports whether a run holds the lockfile", async () => {
  const dir = await project();
  await mkdir(join(dir, "spring.lock.json.running"));
  await writeFile(join(dir, "spring.lock.json.running", "owner.json"), JSON.stringify({ pid: process.pid, host: "elsewhere", started: 1_700_000_000_000, token: "x" }));
  const r = await omnibatch(dir, ["status", "spring.yaml", "--json"]);
  assert.is(r.exitCode, 0, r.stderr);
  const view = JSON.parse(r.stdout);
  assert.equal(view.run, { pid: process.pid, host: "elsewhere", started: "2023-11-14T22:13:20.000Z", heartbeat: view.run.heartbeat, stale: false });
  assert.is(view.tasks, 10);
  assert.is(view.in_flight.length, 2);
  assert.equal(view.failed.map((f: { id: string }) => f.id), ["spring-keyframes-g", "spring-keyframes-h"]);
});

test("status still shows the lockfile when the manifest has errors, with a note", async () => {
  const dir = await project();
  await writeFile(join(dir, "spring.yaml"), `${MANIFEST}    bogus_field: 1\n`);
  const r = await omnibatch(dir, ["status", "spring.yaml"]);
  assert.is(r.exitCode, 0, r.stderr);
  assert.is(r.stderr, "omnibatch: note: spring.yaml has errors (see 'omnibatch validate spring.yaml'); showing its lockfile anyway.");
  assert.match(r.stdout, /^spring: 10 tasks in spring\.lock\.json/);
});

test("status of a manifest that does not exist exits 2 saying so", async () => {
  const dir = await project();
  const r = await omnibatch(dir, ["status", "nope.yaml"]);
  assert.is(r.exitCode, 2);
  assert.match(r.stderr, /nope\.yaml.*does not exist/s);
});

test("status and report exit 2 with a clear message when there is no lockfile", async () => {
  const dir = await project(null);
  for (const command of ["status", "report"]) {
    const r = await omnibatch(dir, [command, "spring.yaml"]);
    assert.is(r.exitCode, 2);
    assert.is(r.stderr, "omnibatch: no lockfile at spring.lock.json: nothing has run for this manifest yet (or the lockfile was moved). Run 'omnibatch run spring.yaml' first.");
    assert.is(r.stdout, "");
  }
});

test("a damaged lockfile: exit 2, the path and position in the message, no stack, the file kept", async () => {
  const damaged = stableJson(fixtureLock).slice(0, 500);
  const dir = await project(damaged);
  for (const command of ["status", "report"]) {
    const r = await omnibatch(dir, [command, "spring.yaml"]);
    assert.is(r.exitCode, 2);
    assert.match(r.stderr, new RegExp(`lockfile ${join(dir, "spring.lock.json").replace(/[.\\]/g, "\\$&")} is damaged: not valid JSON`));
    assert.match(r.stderr, /kept untouched/);
    assert.not.match(r.stderr, /\n\s+at /);
  }
  assert.is(await readFile(join(dir, "spring.lock.json"), "utf8"), damaged);
});

test.run();
