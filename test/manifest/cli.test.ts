// validate and plan as a user runs them: the built CLI, its exit codes, its --json
// output and its error report (never a stack trace).
import { test } from "uvu";
import * as assert from "uvu/assert";
import { execa } from "execa";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { tempManifest } from "./tempManifest.js";
import { copyManifests } from "../checkoutFiles.js";

const bin = fileURLToPath(new URL("../../dist/cli/bin.js", import.meta.url));
const root = fileURLToPath(new URL("../..", import.meta.url));
const invalidDir = fileURLToPath(new URL("../fixtures/manifests/invalid", import.meta.url));
const run = (args: string[], cwd = root) => execa("node", [bin, ...args], { cwd, reject: false, env: { OMNIBATCH_API_KEY: "" } });

test("validate: a valid manifest exits 0 and says how many tasks", async () => {
  const r = await run(["validate", "manifests/demo.yaml"]);
  assert.is(r.exitCode, 0, r.stderr);
  assert.match(r.stdout, "manifests/demo.yaml: valid: 5 task(s)");
});

test("validate: an invalid manifest exits 2 with file:line:col, the line, a caret and a count; no stack", async () => {
  const r = await run(["validate", "unknown-top-key.yaml"], invalidDir);
  assert.is(r.exitCode, 2);
  assert.match(r.stderr, "unknown-top-key.yaml:6:1: error: unknown key 'job' in the manifest (did you mean 'jobs'?)");
  assert.match(r.stderr, " 6 | job:\n   | ^");
  assert.match(r.stderr, "1 error, 0 warnings");
  assert.not.match(r.stderr, /\n\s+at /);
});

test("validate: the real service's image models are accepted; the spec's placeholder names are refused with the service's own as the suggestion", async () => {
  const yaml = (model: string) => `version: 1\nname: x\njobs:\n  a: { kind: image, prompt: x, model: ${model}, aspect_ratio: "1:1" }\n`;
  const good = tempManifest(yaml("kling-image-o1"));
  const v3 = tempManifest(yaml("kling-v3-omni"));
  const old = tempManifest(yaml("svc-image-o1"));
  try {
    for (const m of [good, v3]) {
      const r = await run(["validate", m.file]);
      assert.is(r.exitCode, 0, r.stderr);
      assert.match(r.stdout, "valid: 1 task(s)");
    }
    const r = await run(["validate", old.file]);
    assert.is(r.exitCode, 2);
    assert.match(r.stderr, /m\.yaml:4:39: error: model: must be one of kling-image-o1, kling-v3-omni \(got "svc-image-o1"\): did you mean kling-image-o1\?/);
    assert.match(r.stderr, "--service or OMNIBATCH_SERVICE");
    assert.match(r.stderr, "1 error, 0 warnings");
    assert.not.match(r.stderr, /\n\s+at /);
    // A deployment named otherwise: --service, or OMNIBATCH_SERVICE.
    const flagged = await run(["validate", old.file, "--service", "svc"]);
    assert.is(flagged.exitCode, 0, flagged.stderr);
    const fromEnv = await execa("node", [bin, "validate", old.file], { cwd: root, reject: false, env: { OMNIBATCH_API_KEY: "", OMNIBATCH_SERVICE: "svc" } });
    assert.is(fromEnv.exitCode, 0, fromEnv.stderr);
    const refusedThere = await run(["validate", good.file, "--service", "svc"]);
    assert.is(refusedThere.exitCode, 2);
    assert.match(refusedThere.stderr, "did you mean svc-image-o1?");
    const badName = await run(["validate", good.file, "--service", "no/such"]);
    assert.is(badName.exitCode, 2);
    assert.match(badName.stderr, "--service 'no/such' is not a service name");
  } finally {
    for (const m of [good, v3, old]) m.cleanup();
  }
});

test("validate: every problem of a file is reported in one run", async () => {
  const m = tempManifest("version: 1\nname: x\njobs:\n  a: { kind: video, prompt: x, settings: { duration: 99 } }\n  b: { kind: image, prompt: y, n: 0 }\n");
  try {
    const r = await run(["validate", m.file]);
    assert.is(r.exitCode, 2);
    assert.match(r.stderr, "2 errors, 0 warnings");
  } finally {
    m.cleanup();
  }
});

test("validate --json prints only data on stdout, for valid and invalid manifests", async () => {
  const ok = await run(["validate", "manifests/demo.yaml", "--json"]);
  assert.is(ok.exitCode, 0);
  const data = JSON.parse(ok.stdout) as { valid: boolean; tasks: number; jobs: { id: string; expected_tasks?: number }[] };
  assert.is(data.valid, true);
  assert.is(data.tasks, 5);
  assert.is(data.jobs.find((j) => j.id === "clips")!.expected_tasks, 5);
  const bad = await run(["validate", "csv-ragged.yaml", "--json"], invalidDir);
  assert.is(bad.exitCode, 2);
  const report = JSON.parse(bad.stdout) as { valid: boolean; diagnostics: { file: string; line: number; col: number }[] };
  assert.is(report.valid, false);
  assert.equal([report.diagnostics[0]!.file, report.diagnostics[0]!.line, report.diagnostics[0]!.col], ["data/ragged.csv", 3, 1]);
});

test("validate: a missing manifest file exits 2 without a stack trace", async () => {
  const r = await run(["validate", "no/such/file.yaml"]);
  assert.is(r.exitCode, 2);
  assert.match(r.stderr, "does not exist");
  assert.not.match(r.stderr, /\n\s+at /);
});

test("validate without a manifest argument is a usage error (exit 2)", async () => {
  const r = await run(["validate"]);
  assert.is(r.exitCode, 2);
  assert.match(r.stderr, "missing manifest");
});

test("plan: without a lockfile everything is + and downstream jobs wait, with an estimate", async () => {
  const r = await run(["plan", "manifests/demo.yaml"]);
  assert.is(r.exitCode, 0, r.stderr);
  assert.match(r.stdout, /\+ demo-keyframes-[a-z2-7]{20}  keyframes\/A-1_studio/);
  assert.match(r.stdout, "… 5 task(s) of clips");
  assert.match(r.stdout, /total\s+5\s+0\s+0\s+0\s+5/);
  assert.match(r.stdout, "estimated cost of the 5 task(s) to create: 0.1 USD");
  assert.match(r.stdout, "estimated cost of the 5 waiting downstream task(s): 1.75 USD");
});

test("plan --json: entries, counts per job and total, estimate per currency; = for a done task", async () => {
  const m = tempManifest("version: 1\nname: pj\nprices: { image: { \"1k\": 0.5 } }\njobs:\n  a:\n    kind: image\n    matrix: { c: [red, blue] }\n    prompt: \"{{ c }}\"\n");
  try {
    const first = JSON.parse((await run(["plan", m.file, "--json"])).stdout) as {
      entries: { mark: string; id: string; dir: string; task?: unknown }[];
      total: Record<string, number>;
      estimate: Record<string, string>;
    };
    assert.is(first.entries.length, 2);
    assert.is(first.entries[0]!.task, undefined, "no requests in the JSON");
    assert.equal(first.estimate, { USD: "1" });
    const done = first.entries[0]!;
    const lock = {
      lockfile_version: 1,
      name: "pj",
      tasks: {
        [done.id]: { job: "a", kind: "image", vars: { c: "red" }, dir: done.dir, request_hash: "x".repeat(64), take: 1, attempt: 1, state: "downloaded", updated_at: 1, outputs: [], billing: [] },
      },
    };
    writeFileSync(join(m.dir, "m.lock.json"), JSON.stringify(lock));
    const r = await run(["plan", m.file, "--json"]);
    assert.is(r.exitCode, 0, r.stderr);
    const second = JSON.parse(r.stdout) as { entries: { mark: string }[]; total: Record<string, number> };
    assert.is(second.total["="], 1);
    assert.is(second.total["+"], 1);
  } finally {
    m.cleanup();
  }
});

test("plan: an invalid manifest exits 2 like validate", async () => {
  const r = await run(["plan", "for-each-cycle.yaml"], invalidDir);
  assert.is(r.exitCode, 2);
  assert.match(r.stderr, "cycle through for_each");
});

test("after the demo ran on the emulator, plan --emulate shows every task done, and a changed clip prompt as ~", async () => {
  const dir = mkdtempSync(join(tmpdir(), "omnibatch-demo-plan-"));
  try {
    copyManifests(dir);
    const ran = await execa("node", [bin, "run", "manifests/demo.yaml", "--emulate", "--quiet"], { cwd: dir, reject: false, timeout: 120_000 });
    assert.is(ran.exitCode, 0, ran.stderr);
    const real = JSON.parse((await run(["plan", "manifests/demo.yaml", "--json"], dir)).stdout) as { total: Record<string, number> };
    assert.is(real.total["+"], 5, "an emulated run leaves the real lockfile alone");
    const after = JSON.parse((await run(["plan", "manifests/demo.yaml", "--emulate", "--json"], dir)).stdout) as { total: Record<string, number> };
    assert.equal([after.total["="], after.total["+"], after.total["~"], after.total["…"]], [10, 0, 0, 0]);
    const nothing = await run(["plan", "manifests/demo.yaml", "--emulate"], dir);
    assert.match(nothing.stdout, "No changes: all 10 task(s) are done or in flight; a run would create nothing.");
    assert.match(nothing.stdout, /budget 5 USD: [0-9.]+ spent \(every charge in the lockfile counts\); nothing left to create/);
    const file = join(dir, "manifests/demo.yaml");
    writeFileSync(file, readFileSync(file, "utf8").replace("soft camera move", "slow dolly in"));
    const changed = JSON.parse((await run(["plan", "manifests/demo.yaml", "--emulate", "--json"], dir)).stdout) as { jobs: Record<string, Record<string, number>> };
    assert.equal([changed.jobs.keyframes!["="], changed.jobs.clips!["~"]], [5, 5]);
    // As a change set: the unchanged are counted, the changes listed; --all lists everything.
    const text = await run(["plan", "manifests/demo.yaml", "--emulate"], dir);
    assert.is(text.exitCode, 0, text.stderr);
    assert.match(text.stdout, "keyframes:\n  = 5 unchanged\n");
    assert.not.match(text.stdout, /= demo-keyframes-/);
    assert.is(text.stdout.match(/~ demo-clips-[a-z2-7]{20}/g)?.length, 5);
    assert.match(text.stdout, /budget 5 USD: [0-9.]+ spent \(every charge in the lockfile counts\), 1\.75 estimated for 5 task\(s\) left: everything left fits/);
    const all = await run(["plan", "manifests/demo.yaml", "--emulate", "--all"], dir);
    assert.is(all.stdout.match(/= demo-keyframes-[a-z2-7]{20}  keyframes\/[A-C]-\d_(studio|street)  \(downloaded\)/g)?.length, 5);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("plan against a small budget says how many tasks would not be made; validate warns about tasks without a price", async () => {
  const demo = readFileSync(join(root, "manifests/demo.yaml"), "utf8");
  const dir = mkdtempSync(join(tmpdir(), "omnibatch-budget-plan-"));
  try {
    copyManifests(dir);
    const file = join(dir, "manifests/demo.yaml");
    writeFileSync(file, demo.replace("budget: { max: 5,", "budget: { max: 0.5,"));
    const r = await run(["plan", "manifests/demo.yaml"], dir);
    assert.is(r.exitCode, 0, r.stderr);
    // 0.5 - 5 keyframes at 0.02 = 0.4 left; a clip is 0.35: one fits, four do not.
    assert.match(r.stdout, "budget 0.5 USD: 0 spent (every charge in the lockfile counts), 1.85 estimated for 10 task(s) left: about 4 clips task(s) would not be made");
    writeFileSync(file, demo.replace('"720p": 0.07, ', ""));
    const v = await run(["validate", "manifests/demo.yaml"], dir);
    assert.is(v.exitCode, 0, v.stderr);
    assert.match(v.stderr, /demo\.yaml:\d+:3: warning: a budget is set, but job 'clips' has no price for its kind and resolution/);
    const p = await run(["plan", "manifests/demo.yaml"], dir);
    assert.match(p.stdout, "not counted: 5 clips task(s) have no price in the manifest's prices");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
