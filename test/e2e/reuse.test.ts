// Never pay twice across manifests (issue 31), through the built CLI on `--emulate` (the
// emulator over loopback HTTP): the demo run once, then copies of it under other names
// and with a job renamed pay nothing for what was paid (plan says reused, with the source,
// before the run); reuse: false, --no-reuse and take: 2 create; a damaged lockfile beside
// them is skipped with one warning; a source file with other bytes than recorded is not used.

import { readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { createHash } from "node:crypto";
import { join } from "node:path";
import { execa } from "execa";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { readLockFile } from "../../src/state/readLockFile.js";
import { bin } from "./runFixture.js";
import { demoCopy } from "../checkoutFiles.js";

const t = suite("reuse across manifests");

const cli = (dir: string, args: readonly string[]) =>
  execa("node", [bin, ...args], { cwd: dir, reject: false, all: true, extendEnv: false, env: { PATH: process.env["PATH"] ?? "" }, timeout: 120_000 });

const summaryOf = (stdout: string) => JSON.parse(stdout.trim().split("\n").at(-1)!) as { created: number; outcome: string; spendThisRun: Record<string, string> };

const sha = (file: string) => createHash("sha256").update(readFileSync(file)).digest("hex");

let dir = "";
const demo = () => readFileSync(join(dir, "manifests/demo.yaml"), "utf8");
/** The demo under another name (and its own outputs folder), with `edit` applied. */
const variant = (name: string, edit: (text: string) => string = (x) => x) => {
  const text = edit(demo().replace(/^name: demo$/m, `name: ${name}`).replace("outputs: ../outputs/demo", `outputs: ../outputs/${name}`));
  assert.match(text, `name: ${name}`);
  writeFileSync(join(dir, "manifests", `${name}.yaml`), text);
  return `manifests/${name}.yaml`;
};
const lockOf = async (name: string) => (await readLockFile(join(dir, `manifests/${name}.emulate.lock.json`)))!;
/** Records created at the service (not reused), per job. */
const createdPerJob = async (name: string) => {
  const out: Record<string, number> = {};
  for (const x of Object.values((await lockOf(name)).tasks)) if (x.reused_from === undefined) out[x.job] = (out[x.job] ?? 0) + 1;
  return out;
};

t.before(async () => {
  dir = demoCopy("omnibatch-reuse-");
  const first = await cli(dir, ["run", "manifests/demo.yaml", "--emulate", "--json"]);
  assert.is(first.exitCode, 0, first.all);
  assert.is(summaryOf(first.stdout).created, 10);
});
t.after(() => rmSync(dir, { recursive: true, force: true }));

t("the demo under another name: plan says reused with the source, the run creates nothing, the files are there with their recorded sha256, billing counts each charge once", async () => {
  const m = variant("demo2");
  const plan = await cli(dir, ["plan", m, "--emulate"]);
  assert.is(plan.exitCode, 0, plan.all);
  assert.match(plan.stdout, /= demo2-keyframes-\S+ +keyframes\/A-1_studio +\(reused: same request as demo\.yaml keyframes product=A-1 style=studio, paid \d{4}-\d\d-\d\d\)/);
  assert.match(plan.stdout, "reused 10:");
  assert.match(plan.stdout, /clips.*reused: same request as demo\.yaml clips/);
  const run = await cli(dir, ["run", m, "--emulate", "--json"]);
  assert.is(run.exitCode, 0, run.all);
  const s = summaryOf(run.stdout);
  assert.is(s.outcome, "done");
  assert.is(s.created, 0, "nothing paid again, the clips over the reused keyframes included");
  const lock = await lockOf("demo2");
  const source = await lockOf("demo");
  assert.is(Object.keys(lock.tasks).length, 10);
  for (const [id, x] of Object.entries(lock.tasks)) {
    assert.is(x.state, "downloaded", id);
    assert.equal(x.billing, [], "no charge of its own");
    assert.ok(x.reused_from, id);
    const from = source.tasks[x.reused_from.id]!;
    assert.ok(from, `its source ${x.reused_from.id} is in demo's lockfile`);
    assert.is(x.reused_from.lockfile, "demo.emulate.lock.json");
    assert.is(x.request_hash, from.request_hash, "the same request");
    for (const o of x.outputs.filter((o) => o.path)) assert.is(sha(join(dir, "outputs/demo2-emulated", o.path!)), o.sha256, o.path);
  }
  const billing = JSON.parse(readFileSync(join(dir, "outputs/demo2-emulated/billing.json"), "utf8")) as {
    cash: { charged: string }[];
    reused?: { tasks: number; paidBefore: Record<string, string> };
  };
  assert.ok(billing.cash.every((c) => Number(c.charged) === 0), "the reused results are not charged again in this manifest's billing");
  assert.is(billing.reused?.tasks, 10);
  assert.is(Number(billing.reused?.paidBefore["USD"]), 1.52, "what they cost when paid, listed apart");
  const md = readFileSync(join(dir, "outputs/demo2-emulated/billing.md"), "utf8");
  assert.match(md, "## Reused results");
  assert.match(md, /10 task\(s\) reused .*no charge here \(not counted above\); their sources cost USD 1\.520? when paid/);
  assert.match(md, "Nothing was charged to a balance.");
  // A second run: nothing to do.
  const again = await cli(dir, ["run", m, "--emulate", "--json"]);
  assert.is(summaryOf(again.stdout).created, 0);
});

t("reuse: false on the manifest, --no-reuse, take: 2 each create", async () => {
  const off = variant("demo3", (x) => x.replace("concurrency: 3", "concurrency: 3\nreuse: false"));
  const offPlan = await cli(dir, ["plan", off, "--emulate"]);
  assert.not.match(offPlan.stdout, "reused");
  assert.is(summaryOf((await cli(dir, ["run", off, "--emulate", "--json"])).stdout).created, 10);

  const flag = variant("demo4");
  assert.not.match((await cli(dir, ["plan", flag, "--emulate", "--no-reuse"])).stdout, "reused 10");
  assert.is(summaryOf((await cli(dir, ["run", flag, "--emulate", "--json", "--no-reuse"])).stdout).created, 10);

  const take = variant("demo5", (x) => x.replace("  keyframes:\n    kind: image\n", "  keyframes:\n    kind: image\n    take: 2\n"));
  const run = await cli(dir, ["run", take, "--emulate", "--json"]);
  assert.is(run.exitCode, 0, run.all);
  // take: 2 asks for takes 1 and 2: take 1 is the demo's request (reused), take 2 is new.
  const made = await createdPerJob("demo5");
  assert.is(made["keyframes"], 5, "the five second takes are created");
  assert.ok(Object.values((await lockOf("demo5")).tasks).some((x) => x.job === "keyframes" && x.take === 1 && x.reused_from), "take 1 is reused");
});

t("reuse: false on a job: that job's tasks are created", async () => {
  const m = variant("demo6", (x) => x.replace("  keyframes:\n    kind: image\n", "  keyframes:\n    kind: image\n    reuse: false\n"));
  const run = await cli(dir, ["run", m, "--emulate", "--json"]);
  assert.is(run.exitCode, 0, run.all);
  assert.is((await createdPerJob("demo6"))["keyframes"], 5);
});

t("the demo split in two files (studio stills and street stills): each pays 0 for what was paid, and plan says reused with the source first", async () => {
  const studio = variant("demo-studio", (x) => x.replace("style: [studio, street]", "style: [studio]").replace(/\n      exclude:\n        - \{ product: \{ sku: C-3 \}, style: street \}/, ""));
  const street = variant("demo-street", (x) => x.replace("style: [studio, street]", "style: [street]"));
  for (const [m, tasks] of [[studio, 6], [street, 4]] as const) {
    const plan = await cli(dir, ["plan", m, "--emulate"]);
    assert.is(plan.exitCode, 0, plan.all);
    assert.match(plan.stdout, `reused ${tasks}:`);
    // The source is the most recently paid of the same request: the demo, or a copy above that paid again (reuse off).
    assert.match(plan.stdout, /\(reused: same request as demo\d?\.yaml keyframes product=A-1 style=(studio|street), paid \d{4}-\d\d-\d\d\)/);
    const run = await cli(dir, ["run", m, "--emulate", "--json"]);
    assert.is(run.exitCode, 0, run.all);
    assert.is(summaryOf(run.stdout).created, 0, `${m}: nothing paid again`);
  }
  const studioLock = Object.values((await lockOf("demo-studio")).tasks);
  const streetLock = Object.values((await lockOf("demo-street")).tasks);
  assert.is(studioLock.length, 6);
  assert.is(streetLock.length, 4);
  assert.ok([...studioLock, ...streetLock].every((x) => x.state === "downloaded" && /^demo\d?\.emulate\.lock\.json$/.test(x.reused_from?.lockfile ?? "")), "every task from a paid copy of the demo");
  assert.ok(studioLock.every((x) => JSON.stringify(x.vars).includes('"studio"')), "studio's tasks are the studio stills and their clips");
  assert.ok(streetLock.every((x) => JSON.stringify(x.vars).includes('"street"')), "street's tasks are the street stills and their clips");
  // Gone again, so the tests below see the sources they set up and no more.
  for (const name of ["demo-studio", "demo-street"]) {
    for (const f of [`manifests/${name}.yaml`, `manifests/${name}.emulate.lock.json`, `outputs/${name}-emulated`]) rmSync(join(dir, f), { recursive: true, force: true });
  }
});

t("a damaged lockfile beside them is skipped with one warning naming it; the rest is reused", async () => {
  const broken = join(dir, "manifests/broken.emulate.lock.json");
  writeFileSync(broken, '{"lockfile_version":3,"name":"broken"}\n\n{"id":"nope"}\n');
  try {
    const m = variant("demo7");
    const plan = await cli(dir, ["plan", m, "--emulate"]);
    assert.is(plan.exitCode, 0, plan.all);
    assert.is(plan.stderr.split("\n").filter((l) => l.includes("broken.emulate.lock.json")).length, 1, plan.stderr);
    assert.match(plan.stderr, "reuse: skipped");
    assert.match(plan.stdout, "reused 10:");
  } finally {
    rmSync(broken);
  }
});

t("a source file with other bytes than its record is not used: that task is created", async () => {
  const lock = await lockOf("demo");
  const [id, still] = Object.entries(lock.tasks).find(([, x]) => x.job === "keyframes" && x.dir === "keyframes/A-1_studio")!;
  const file = join(dir, "outputs/demo-emulated", still.outputs[0]!.path!);
  // A new file (its own inode): the copies other manifests hold keep their bytes.
  writeFileSync(`${file}.new`, Buffer.concat([readFileSync(file), Buffer.from("changed")]));
  renameSync(`${file}.new`, file);
  // Every other paid or reused copy of that still is removed (demo3 and demo4 paid for the same request again).
  for (const other of ["demo2", "demo3", "demo4", "demo5", "demo6", "demo7"]) rmSync(join(dir, `outputs/${other}-emulated/keyframes/A-1_studio`), { recursive: true, force: true });
  const m = variant("demo8");
  const plan = await cli(dir, ["plan", m, "--emulate"]);
  assert.match(plan.stdout, /\+ demo8-keyframes-\S+ +keyframes\/A-1_studio.*not reused \((other bytes|files gone)\)/);
  const run = await cli(dir, ["run", m, "--emulate", "--json"]);
  assert.is(run.exitCode, 0, run.all);
  const made = Object.entries((await lockOf("demo8")).tasks).filter(([, x]) => x.job === "keyframes" && !x.reused_from);
  assert.is(made.length, 1, "only the changed one is created");
  assert.is(made[0]![1].dir, "keyframes/A-1_studio");
  assert.ok(id);
});

t("a job renamed in the same manifest: its own lockfile's results are reused, the old records superseded", async () => {
  const file = join(dir, "manifests/demo.yaml");
  writeFileSync(file, demo().replace("\n  keyframes:\n", "\n  stills:\n").replace("for_each: keyframes.outputs", "for_each: stills.outputs"));
  const plan = await cli(dir, ["plan", "manifests/demo.yaml", "--emulate"]);
  assert.match(plan.stdout, /= demo-stills-\S+ +stills\/B-2_street +\(reused: same request as demo\.yaml keyframes/);
  const run = await cli(dir, ["run", "manifests/demo.yaml", "--emulate", "--json"]);
  assert.is(run.exitCode, 0, run.all);
  // A-1 studio's file here was changed above: that still comes from demo8 (which paid for the same request), or is created.
  const s = summaryOf(run.stdout);
  assert.ok(s.created <= 2, `created ${s.created}`);
  const lock = await lockOf("demo");
  const stills = Object.values(lock.tasks).filter((x) => x.job === "stills");
  assert.is(stills.length, 5);
  assert.ok(stills.filter((x) => x.reused_from?.lockfile === "demo.emulate.lock.json").length >= 4, "from its own lockfile");
  assert.is(Object.values(lock.tasks).filter((x) => x.job === "keyframes").length, 5, "the old records stay as history");
});

t.run();
