// What a run says while it works and at its end, as a user sees it: the built CLI against
// the emulator, a catalogue of 3 products x 2 styles x n:2 stills -> one reel per still
// (18 tasks), one product's prompt marked to fail its content review. In CI mode (CI=true,
// no terminal): the real total in the header, one status line per interval with totals per
// job in a fixed order, failures on lines of their own named by matrix values, grouped at
// the end with the reels that will not be made, and a step summary that starts with the
// outcome. With --json: timestamps, matrix values, file paths, the full totals. A rerun
// says it resumes and what it found. On a terminal (tmux): the live block with the
// spend this run / in all / budget and an ETA.

import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execa } from "execa";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { startEmulator, type RunningEmulator } from "../../src/emulator/Emulator.js";
import { readLockFile } from "../../src/state/readLockFile.js";
import { bin } from "../e2e/runFixture.js";

const t = suite("the live view, CI lines, events and step summary");

const manifest = `version: 1
name: cat
outputs: out
concurrency: 2
budget: { max: 15, currency: USD }
prices: { image: { "1k": 0.03 }, video: { "720p": 0.07 } }
jobs:
  stills:
    kind: image
    matrix:
      product: { rows: products.csv }
      style: [studio, street]
    prompt: "{{ product.name }} {{ product.note }}, {{ style }} light"
    aspect_ratio: "9:16"
    n: 2
  reels:
    kind: video
    for_each: stills.outputs
    first_frame: "{{ item.url }}"
    prompt: "it turns slowly, {{ item.vars.style }} mood"
    settings: { resolution: 720p, duration: 5, aspect_ratio: "9:16" }
`;
const products = "sku,name,note\nBTL-STL,steel bottle,[fail]\nMUG-01,white mug,\nCAP-02,blue cap,\n";

const dirs: string[] = [];
const folder = (): string => {
  const dir = mkdtempSync(join(tmpdir(), "omnibatch-live-"));
  writeFileSync(join(dir, "cat.yaml"), manifest);
  writeFileSync(join(dir, "products.csv"), products);
  dirs.push(dir);
  return dir;
};

const cli = (dir: string, args: string[], env: Record<string, string> = {}) =>
  execa("node", [bin, "run", "cat.yaml", ...args], {
    cwd: dir,
    reject: false,
    env: { PATH: process.env["PATH"] ?? "", CI: "true", OMNIBATCH_TIME_SCALE: "0.05", ...env },
    extendEnv: false,
  });

let emu: RunningEmulator | undefined;
const socket = `omnibatch-live-${process.pid}`;
const tmux = (...args: string[]) => execa("tmux", ["-L", socket, "-f", "/dev/null", ...args], { reject: false });

t.after(async () => {
  await tmux("kill-server");
  await emu?.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

t("CI mode: real totals, one line per interval with per-job totals in a fixed order, failures named by matrix values, grouped at the end", async () => {
  const dir = folder();
  const summaryFile = join(dir, "step-summary.md");
  const run = await cli(dir, ["--emulate"], { OMNIBATCH_PROGRESS_EVERY: "400ms", GITHUB_STEP_SUMMARY: summaryFile });
  const out = run.stdout;
  assert.is(run.exitCode, 1, `${out}\n${run.stderr}`);
  assert.match(out, "omnibatch: running cat (18 tasks: 6 stills, 12 reels; concurrency 2) on the in-process emulator");
  assert.not.match(out, "planned");

  const lines = out.split("\n");
  const status = lines.filter((l) => /^\[[\dmh]+s\] stills /.test(l));
  assert.ok(status.length >= 2, out);
  for (const l of status) {
    // Totals per job, stills before reels, then spend, then the ETA while work is left.
    assert.match(l, /^\[[\dmh]+s\] stills \d+\/6 done(, \d+ in flight)?(, \d+ queued)?(, \d+ failed)? · reels \d+\/(12|10|8) done(, \d+ in flight)?(, \d+ queued)? · (nothing charged yet|[\d.]+ USD this run)( · ETA (unknown|<1s|\d+s))?$/, l);
  }
  // Lines per interval, not per change: 18 tasks change state about 90 times.
  const elapsedS = Number(/this run: .*, (\d+)s\n/.exec(out)?.[1] ?? "60");
  assert.ok(status.length <= elapsedS / 0.4 + 3, `${status.length} status lines in ${elapsedS}s`);
  // Each failure on its own line, named by job and matrix values.
  assert.match(out, /\] ! failed: stills product=BTL-STL style=studio: Task failed: the content was flagged/);
  assert.match(out, /\] ! failed: stills product=BTL-STL style=street: /);
  // Once both failed, the 4 reels they would have made are out of the totals.
  assert.match(status.at(-1)!, "reels 8/8 done");
  // The end: failures grouped by reason, by matrix values, with what will not be made.
  assert.match(out, /failed \/ rejected \(2\), by reason:\n\s+Task failed: the content was flagged.*: 2 task\(s\)\n\s+stills product=BTL-STL style=studio  cat-stills-/);
  assert.match(out, "4 reels task(s) will not be made (their upstream task failed)");

  // The step summary: outcome first, totals per job, elapsed, spend, budget, failures, then billing.
  const md = readFileSync(summaryFile, "utf8");
  const order = [
    "# omnibatch run: cat: ❌ finished with failures",
    "| job | tasks | done | in flight | queued | failed | rejected |",
    "| stills | 6 | 4 | 0 | 0 | 2 | 0 |",
    "| reels | 8 | 8 | 0 | 0 | 0 | 0 |",
    "- **Elapsed:** ",
    "- **Spend:** ",
    "- **Budget:** 15 USD",
    "## Failures (2), by reason",
    "stills product=BTL-STL style=studio; stills product=BTL-STL style=street",
    "**4 reels task(s) will not be made**",
    "# omnibatch billing: cat",
  ];
  assert.ok(md.startsWith(order[0]!), md.slice(0, 200));
  let at = 0;
  for (const piece of order) {
    const found = md.indexOf(piece, at);
    assert.ok(found >= at, `step summary: '${piece}' after position ${at}\n${md}`);
    at = found;
  }
  assert.match(md, /- \*\*Spend:\*\* [\d.]+ USD this run, [\d.]+ USD in all/);
  assert.not.match(md, "planned");
  // The emulated banner once, after the outcome.
  assert.is(md.split("Emulated run").length - 1, 1, md);
});

t("--json: every event has a time; tasks carry job and matrix values, downloads their files; start carries the full totals", async () => {
  const dir = folder();
  const run = await cli(dir, ["--emulate", "--json"]);
  const events = run.stdout.trim().split("\n").map((l) => JSON.parse(l) as Record<string, unknown>);
  for (const e of events) assert.ok(typeof e["at"] === "string" && !Number.isNaN(Date.parse(e["at"] as string)), JSON.stringify(e));
  const start = events[0]!;
  assert.is(start["type"], "start");
  assert.is(start["tasks"], 6, "the old field stays: tasks of the jobs without for_each");
  assert.is(start["total"], 18);
  const totals = start["totals"] as Record<string, { total: number; toCreate: number }>;
  assert.equal([totals["stills"]!.total, totals["reels"]!.total], [6, 12]);
  assert.equal(start["downstream"], [{ job: "reels", upstream: "stills", perUpstreamTask: 2 }]);
  const tasks = events.filter((e) => e["type"] === "task");
  for (const e of tasks) assert.ok(typeof e["job"] === "string" && typeof e["vars"] === "object" && typeof e["dir"] === "string", JSON.stringify(e));
  const failed = tasks.filter((e) => e["state"] === "failed");
  assert.equal(failed.map((e) => (e["vars"] as { product: { sku: string } }).product.sku), ["BTL-STL", "BTL-STL"]);
  const downloads = tasks.filter((e) => e["state"] === "downloaded");
  assert.is(downloads.length, 12);
  for (const e of downloads) {
    const paths = e["paths"] as string[];
    assert.is(paths.length, e["files"]);
    for (const p of paths) assert.ok(p.startsWith(join(dir, "out-emulated")) && existsSync(p), p);
  }
  const reel = downloads.find((e) => e["job"] === "reels")!;
  assert.ok((reel["vars"] as { item?: unknown }).item !== undefined, "a downstream task's values include its item");
  const summary = events.at(-1)!;
  assert.is(summary["type"], "summary");
  assert.equal((summary["failureGroups"] as { notMade: unknown }).notMade, { reels: 4 });
});

t("a rerun says it resumes and what it found, counted as the lockfile has it", async () => {
  emu = await startEmulator({ timing: { scale: 0.3 } }, { port: 0 });
  const dir = folder();
  const env = { OMNIBATCH_API_KEY: emu.apiKey, OMNIBATCH_PROGRESS_EVERY: "10m" };
  const first = await cli(dir, ["--base-url", emu.url, "--max-wait", "1500ms", "--no-callbacks"], env);
  assert.is(first.exitCode, 3, first.stdout);
  assert.not.match(first.stdout, "resuming");
  const lock = (await readLockFile(join(dir, "cat.lock.json")))!;
  const states = Object.values(lock.tasks).map((t) => t.state);
  const done = states.filter((s) => s === "downloaded").length;
  const inFlight = states.filter((s) => s === "submitting" || s === "submitted" || s === "processing" || s === "succeeded").length;
  const failed = states.filter((s) => s === "failed").length;
  // The stopped run's summary counts the reels not made yet as queued: the whole plan, less what failures removed.
  const row = /\n  (\w+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)(?=\n)/g;
  const rows = new Map([...first.stdout.matchAll(row)].map((r) => [r[1]!, Number(r[2])]));
  assert.is((rows.get("stills") ?? 0) + (rows.get("reels") ?? 0), 18 - 2 * failed, first.stdout);
  const second = await cli(dir, ["--base-url", emu.url, "--no-callbacks"], env);
  const m = /omnibatch: resuming: (\d+) done, (\d+) in flight at the service, (\d+) to create(, (\d+) failed)?\n/.exec(second.stdout);
  assert.ok(m, second.stdout);
  assert.is(Number(m![1]), done);
  assert.is(Number(m![2]), inFlight);
  assert.is(Number(m![5] ?? 0), failed);
  // The rest is to create, downstream reels included; a still that failed for good makes no reels (2 each).
  const total = Number(/running cat \((\d+) tasks/.exec(second.stdout)?.[1]);
  assert.is(total, 18 - 2 * failed, second.stdout);
  assert.is(Number(m![1]) + Number(m![2]) + Number(m![3]) + Number(m![5] ?? 0), total);
  assert.match(second.stdout, "omnibatch: budget 15 USD; it counts every charge in the lockfile (earlier runs included)");
  assert.match(second.stdout, /spend:\s+[\d.]+ USD this run, [\d.]+ USD in all, budget 15 USD/);
});

t("plan: a changed task shows the request fields that changed and the folder the run then really writes to", async () => {
  const dir = folder();
  const first = await cli(dir, ["--emulate"]);
  assert.is(first.exitCode, 1, first.stdout);
  writeFileSync(join(dir, "cat.yaml"), manifest.replace("{{ style }} light", "{{ style }} lighting"));
  const plan = await execa("node", [bin, "plan", "cat.yaml", "--emulate"], { cwd: dir, reject: false });
  assert.is(plan.exitCode, 0, plan.stderr);
  const m = /~ (cat-stills-\w+)  (stills\/MUG-01_studio-\w+)(?:\/\{[^}\n]*\}|\/[^\s/]+)?  \(replaces (cat-stills-\w+)[^\n]*\n\s+prompt: "[^"\n]*studio light" → "[^"\n]*studio lighting"\n\s+results go to (\S+)\n/.exec(plan.stdout);
  assert.ok(m, plan.stdout);
  assert.is(m![4], m![2]);
  await cli(dir, ["--emulate"]);
  const lock = (await readLockFile(join(dir, "cat.emulate.lock.json")))!;
  assert.is(lock.tasks[m![1]!]?.dir, m![2], "the run used the folder the plan showed");
  assert.is(lock.tasks[m![3]!]?.dir, "stills/MUG-01_studio", "the old task keeps its folder");
  assert.ok(existsSync(join(dir, "out-emulated", ...m![2]!.split("/"))), "the new folder holds the new results");
});

t("on a terminal: the live block shows per-job totals over the whole plan, spend this run / in all / budget, and the ETA", async () => {
  // A service of its own: the CI-lines test's emulator already holds every task of this
  // manifest (same ids), and a run that finds them all there is over before a block is drawn.
  await emu?.close();
  emu = await startEmulator({ timing: { scale: 0.3 } }, { port: 0 });
  const dir = folder();
  const command = `cd ${dir} && env OMNIBATCH_API_KEY=${emu.apiKey} OMNIBATCH_TIME_SCALE=0.05 node ${bin} run cat.yaml --base-url ${emu.url} --yes --no-callbacks; echo "EXIT=$?"; sleep 120`;
  const r = await tmux("new-session", "-d", "-s", "live", "-x", "160", "-y", "50", command);
  assert.is(r.exitCode, 0, r.stderr);
  const screen = async () => (await tmux("capture-pane", "-p", "-J", "-t", "live", "-S", "-200")).stdout;
  // Bounded: 60 s, 300 looks.
  let live = "";
  let sawBlock = "";
  for (let i = 0; i < 300; i++) {
    live = await screen();
    if (!sawBlock && /reels\s+\d+\/\d+ done/.test(live) && /spend .* this run, .* in all, budget 15 USD/.test(live)) sawBlock = live;
    if (/EXIT=\d+/.test(live)) break;
    await new Promise((res) => setTimeout(res, 200));
  }
  assert.ok(sawBlock, `the live block was never on the screen:\n${live}`);
  assert.match(sawBlock, "omnibatch: running cat (18 tasks: 6 stills, 12 reels; concurrency 2)");
  assert.match(sawBlock, /stills\s+\d+\/6 done\s+\d+ in flight\s+\d+ queued\s+\d+ failed/);
  assert.match(sawBlock, /reels\s+\d+\/(12|10|8) done\s+\d+ in flight\s+\d+ queued\s+\d+ failed/);
  assert.match(sawBlock, /elapsed \d+s(, ETA (unknown|<1s|\d+s|\d+m))?/);
  assert.match(live, "EXIT=1");
  // The block is cleared at the end: the summary follows the header lines, no block left in between.
  assert.not.match(live.slice(live.indexOf("job     tasks")), /\d+\/\d+ done/);
});

t.run();
