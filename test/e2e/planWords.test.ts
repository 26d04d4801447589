// Plan and status say reuse in words (issue 31), through the built CLI on `--emulate`:
// after the demo ran, a rename of `name` (or of a job) shows each changed task (`~`, reuse off) with the
// rename as its reason, an input photo with other bytes names that input, a changed setting
// names the field; a part chosen with --only / --where still shows its reused tasks as `=`
// with their source (and the run of that part creates nothing); status counts the reused
// tasks apart, in its text and its JSON.

import { copyFileSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { execa } from "execa";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { bin } from "./runFixture.js";
import { demoCopy } from "../checkoutFiles.js";

const t = suite("plan and status say reuse in words");

const cli = (dir: string, args: readonly string[]) =>
  execa("node", [bin, ...args], { cwd: dir, reject: false, all: true, extendEnv: false, env: { PATH: process.env["PATH"] ?? "" }, timeout: 120_000 });

const summaryOf = (stdout: string) => JSON.parse(stdout.trim().split("\n").at(-1)!) as { created: number; outcome: string };

let dir = "";
let demo = "";
const manifest = () => join(dir, "manifests/demo.yaml");
/** The demo (as it ran) with `edit` applied, in place. */
const editDemo = (edit: (text: string) => string) => {
  const text = edit(demo);
  assert.is.not(text, demo, "the edit changed the manifest");
  writeFileSync(manifest(), text);
};
/** Under each `~` line of a plan's text: its id and the lines under it up to the next task. */
const changed = (stdout: string): { id: string; why: string[] }[] => {
  const out: { id: string; why: string[] }[] = [];
  let under: { id: string; why: string[] } | undefined;
  for (const line of stdout.split("\n")) {
    const m = /^ {2}~ (\S+)/.exec(line);
    if (m) out.push((under = { id: m[1]!, why: [] }));
    else if (under && /^ {6}\S/.test(line)) under.why.push(line.trim());
    else under = undefined;
  }
  return out;
};

t.before(async () => {
  dir = demoCopy("omnibatch-planwords-");
  demo = readFileSync(manifest(), "utf8");
  const first = await cli(dir, ["run", "manifests/demo.yaml", "--emulate", "--json"]);
  assert.is(first.exitCode, 0, first.all);
  assert.is(summaryOf(first.stdout).created, 10);
});
t.after(() => rmSync(dir, { recursive: true, force: true }));

t("name: demo → demo2 with reuse off: each changed keyframe names the rename and says the request is the same", async () => {
  editDemo((x) => x.replace(/^name: demo$/m, "name: demo2"));
  try {
    const plan = await cli(dir, ["plan", "manifests/demo.yaml", "--emulate", "--no-reuse"]);
    assert.is(plan.exitCode, 0, plan.all);
    const list = changed(plan.stdout);
    assert.is(list.length, 5, plan.stdout);
    for (const c of list) {
      assert.match(c.id, /^demo2-keyframes-/);
      assert.equal(c.why.slice(0, 2), [
        "the manifest's name changed: demo → demo2 (a task's id is made from it)",
        "the request is the same (prompt, settings, inputs by content): only the task's id changed",
      ], plan.stdout);
    }
    assert.not.match(plan.stdout, "the take or an input's content");
    // The same words in --json, on each changed entry.
    const json = JSON.parse((await cli(dir, ["plan", "manifests/demo.yaml", "--emulate", "--no-reuse", "--json"])).stdout) as { entries: { mark: string; id: string; changed?: string[] }[] };
    const changedEntries = json.entries.filter((e) => e.mark === "~");
    assert.is(changedEntries.length, 5);
    for (const e of changedEntries) assert.equal(e.changed, list.find((c) => c.id === e.id)!.why.slice(0, 2));
  } finally {
    writeFileSync(manifest(), demo);
  }
});

t("a job renamed (keyframes → stills) with reuse off: each still to create names the record with its request and the rename", async () => {
  editDemo((x) => x.replace(/^ {2}keyframes:$/m, "  stills:").replace("for_each: keyframes.outputs", "for_each: stills.outputs"));
  try {
    const plan = await cli(dir, ["plan", "manifests/demo.yaml", "--emulate", "--no-reuse"]);
    assert.is(plan.exitCode, 0, plan.all);
    const lines = plan.stdout.split("\n").filter((l) => l.startsWith("  + demo-stills-"));
    assert.is(lines.length, 5, plan.stdout);
    for (const l of lines) assert.match(l, /\(same request as demo-keyframes-[a-z2-7]{20}: the job's id changed: keyframes → stills; ~0\.02 USD\)$/);
  } finally {
    writeFileSync(manifest(), demo);
  }
});

t("an input photo with other bytes: the changed keyframes name that input and its file; a changed setting names the field", async () => {
  const mug = join(dir, "manifests/assets/mug.png");
  const before = readFileSync(mug);
  copyFileSync(join(dir, "manifests/assets/lamp.png"), mug);
  editDemo((x) => x.replace("settings: { duration: 5 }", "settings: { duration: 10 }"));
  try {
    const plan = await cli(dir, ["plan", "manifests/demo.yaml", "--emulate", "--no-reuse"]);
    assert.is(plan.exitCode, 0, plan.all);
    const list = changed(plan.stdout);
    const stills = list.filter((c) => c.id.startsWith("demo-keyframes-"));
    // The CSV gives the mug to A-1 only: its two styles changed, nothing else of keyframes.
    assert.is(stills.length, 2, plan.stdout);
    for (const c of stills) assert.match(c.why[0]!, /^image_list\[0\]\.image @ref: assets\/mug\.png changed \(sha256 [0-9a-f]{12} → [0-9a-f]{12}\)$/);
    const clips = list.filter((c) => c.id.startsWith("demo-clips-"));
    assert.ok(clips.length > 0, plan.stdout);
    for (const c of clips) assert.is(c.why[0], "settings.duration: 5 → 10");
  } finally {
    writeFileSync(mug, before);
    writeFileSync(manifest(), demo);
  }
});

t("a part chosen with --only / --where keeps its reused tasks as `=` with the source; the run of that part creates nothing; status counts them apart", async () => {
  const copy = demo.replace(/^name: demo$/m, "name: demo3").replace("outputs: ../outputs/demo", "outputs: ../outputs/demo3");
  writeFileSync(join(dir, "manifests/demo3.yaml"), copy);
  const part = ["--only", "keyframes", "--where", "product.sku=A-1"];
  const plan = await cli(dir, ["plan", "manifests/demo3.yaml", "--emulate", ...part]);
  assert.is(plan.exitCode, 0, plan.all);
  assert.match(plan.stdout, "selection --only keyframes --where product.sku=A-1: 0 task(s) to create, 2 done or in flight (2 of them reused); 8 task(s) not selected");
  assert.match(plan.stdout, /= demo3-keyframes-\S+ +keyframes\/A-1_studio +\(reused: same request as demo\.yaml keyframes product=A-1 style=studio, paid \d{4}-\d\d-\d\d\)/);
  assert.match(plan.stdout, /= demo3-keyframes-\S+ +keyframes\/A-1_street +\(reused: same request as demo\.yaml keyframes/);
  assert.match(plan.stdout, "\nreused 2:");
  assert.not.match(plan.stdout, /^ {2}\+ /m);
  const json = JSON.parse((await cli(dir, ["plan", "manifests/demo3.yaml", "--emulate", "--json", ...part])).stdout) as { reused?: number; entries: { mark: string; reused?: boolean; note?: string }[] };
  assert.is(json.reused, 2, "the part's reused count, not the whole plan's (10)");
  assert.is(json.entries.length, 2);
  assert.ok(json.entries.every((e) => e.mark === "=" && e.reused === true && e.note?.startsWith("reused: same request as demo.yaml keyframes")));

  const run = await cli(dir, ["run", "manifests/demo3.yaml", "--emulate", "--json", ...part]);
  assert.is(run.exitCode, 0, run.all);
  assert.is(summaryOf(run.stdout).created, 0);

  const status = await cli(dir, ["status", "manifests/demo3.yaml", "--emulate"]);
  assert.is(status.exitCode, 0, status.all);
  assert.match(status.stdout, "\nreused 2 (keyframes 2): results of paid tasks with the same request, copied, no charge of their own");
  const view = JSON.parse((await cli(dir, ["status", "manifests/demo3.yaml", "--emulate", "--json"])).stdout) as { reused: number; tasks: number; jobs: { job: string; reused: number }[] };
  assert.is(view.reused, 2);
  assert.is(view.tasks, 2);
  assert.equal(view.jobs.map((j) => [j.job, j.reused]), [["keyframes", 2]]);

  // The rest of the manifest: the clips over the reused keyframes are reused too; status counts all ten.
  const rest = await cli(dir, ["run", "manifests/demo3.yaml", "--emulate", "--json"]);
  assert.is(summaryOf(rest.stdout).created, 0, rest.all);
  const all = JSON.parse((await cli(dir, ["status", "manifests/demo3.yaml", "--emulate", "--json"])).stdout) as { reused: number; jobs: { job: string; reused: number }[] };
  assert.is(all.reused, 10);
  assert.equal(all.jobs.map((j) => [j.job, j.reused]), [["clips", 5], ["keyframes", 5]]);
  // The demo itself paid for everything: nothing of it is reused.
  const own = JSON.parse((await cli(dir, ["status", "manifests/demo.yaml", "--emulate", "--json"])).stdout) as { reused: number };
  assert.is(own.reused, 0);
  assert.not.match((await cli(dir, ["status", "manifests/demo.yaml", "--emulate"])).stdout, /^reused/m);
});

t.run();
