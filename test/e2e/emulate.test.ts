// `--emulate` keeps its own lockfile and outputs folder (M.emulate.lock.json,
// <outputs>-emulated): the real ones are never touched; a killed emulated run is rerun
// to the end on a new emulator; status and report --emulate read the emulated files.

import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { execa } from "execa";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { emulatedPaths } from "../../src/run/EmulatedRun.js";
import { readLockFile } from "../../src/state/readLockFile.js";
import { assertAllResults, bin, manifestYaml, runCli, workspace, type Workspace } from "./runFixture.js";

const t = suite("run --emulate");

/** The workspace as the emulated run sees it. */
const emulatedWs = (ws: Workspace): Workspace => ({ ...ws, lockfile: join(ws.dir, "m.emulate.lock.json"), outputs: join(ws.dir, "out-emulated") });

const ndjson = (stdout: string) => stdout.trim().split("\n").map((l) => JSON.parse(l));

const cli = (ws: Workspace, args: readonly string[]) => execa("node", [bin, ...args], { cwd: ws.dir, reject: false, all: true, extendEnv: false });

t("emulatedPaths: demo.lock.json -> demo.emulate.lock.json beside it; outputs/demo -> outputs/demo-emulated", () => {
  assert.equal(emulatedPaths({ lockfilePath: "/p/manifests/demo.lock.json", outputsDir: "/p/outputs/demo" }), {
    lockfilePath: "/p/manifests/demo.emulate.lock.json",
    outputsDir: "/p/outputs/demo-emulated",
  });
  assert.equal(emulatedPaths({ lockfilePath: "/p/m.lock.json", outputsDir: "/p/out/" }), { lockfilePath: "/p/m.emulate.lock.json", outputsDir: "/p/out-emulated" });
});

t("an --emulate run writes only M.emulate.lock.json and <outputs>-emulated: M.lock.json stays absent, the real outputs untouched", async () => {
  const ws = workspace(manifestYaml("emuonly"));
  try {
    mkdirSync(ws.outputs);
    writeFileSync(join(ws.outputs, "results.jsonl"), "REAL\n");
    const r = await runCli(ws, ["--emulate", "--json"]);
    assert.is(r.exitCode, 0, r.all);
    const events = ndjson(r.stdout);
    const start = events.find((e) => e.type === "start");
    const summary = events.at(-1);
    assert.is(summary.type, "summary");
    assert.is(summary.emulated, true);
    assert.is(start.emulated, true);
    assert.is(summary.lockfile, join(ws.dir, "m.emulate.lock.json"));
    assert.is(summary.outputs, join(ws.dir, "out-emulated"));
    assert.is(start.lockfile, summary.lockfile);
    assert.ok(summary.reports.length > 0 && summary.reports.every((f: string) => f.startsWith(join(ws.dir, "out-emulated"))));
    assert.ok(summary.created > 0);
    assert.equal(readdirSync(ws.dir).sort(), ["m.emulate.lock.json", "m.emulate.state.json", "m.yaml", "out", "out-emulated"]);
    assert.equal(readdirSync(ws.outputs), ["results.jsonl"]);
    assert.is(readFileSync(join(ws.outputs, "results.jsonl"), "utf8"), "REAL\n");
    const lock = await assertAllResults(emulatedWs(ws));
    assert.is(Object.keys(lock.tasks).length, 4 + 3 + 8);
    // The summary table says it was emulated and where the files are.
    const plain = await runCli(ws, ["--emulate"]);
    assert.is(plain.exitCode, 0, plain.all);
    assert.match(plain.stdout, "EMULATED run");
    assert.match(plain.stdout, "m.emulate.lock.json");
    assert.match(plain.stdout, "out-emulated");
    assert.not.ok(existsSync(ws.lockfile));
  } finally {
    ws.remove();
  }
});

t("an --emulate run SIGKILLed with tasks in flight is rerun with --emulate to exit 0 (in-flight tasks made again, finished ones kept)", async () => {
  const ws = workspace(manifestYaml("emukill"));
  const emu = emulatedWs(ws);
  try {
    const child = runCli(ws, ["--emulate", "--quiet"]);
    const started = Date.now();
    // Kill once the lockfile holds a task the (now gone) emulator had accepted and not finished.
    let killedInFlight = false;
    while (child.exitCode === null && Date.now() - started < 20_000) {
      await new Promise((r) => setTimeout(r, 3));
      const lock = await readLockFile(emu.lockfile).catch(() => undefined);
      const inFlight = Object.values(lock?.tasks ?? {}).some((x) => x.task_id !== undefined && (x.state === "submitted" || x.state === "processing"));
      if (inFlight) {
        child.kill("SIGKILL");
        killedInFlight = true;
        break;
      }
    }
    const first = await child;
    assert.ok(killedInFlight, `the run was killed with tasks in flight (exit ${first.exitCode}: ${first.all})`);
    assert.is(first.signal, "SIGKILL");
    const before = await readLockFile(emu.lockfile);
    const downloadedBefore = Object.entries(before!.tasks).filter(([, x]) => x.state === "downloaded").map(([id]) => id);
    const second = await runCli(ws, ["--emulate", "--json"]);
    assert.is(second.exitCode, 0, second.all);
    const summary = ndjson(second.stdout).at(-1);
    assert.is(summary.outcome, "done");
    assert.is(summary.adopted, 0, "nothing is looked up on a fresh emulator");
    const lock = await assertAllResults(emu);
    assert.is(Object.keys(lock.tasks).length, 4 + 3 + 8);
    assert.is(summary.created, 4 + 3 + 8 - downloadedBefore.length, "every task not downloaded before is created once on the new emulator");
    assert.not.ok(existsSync(ws.lockfile));
    assert.not.ok(existsSync(ws.outputs));
  } finally {
    ws.remove();
  }
});

t("status --emulate and report --emulate read the emulated lockfile and write into <outputs>-emulated; without --emulate they point to it", async () => {
  const ws = workspace(manifestYaml("emustatus"));
  try {
    const r = await runCli(ws, ["--emulate", "--quiet"]);
    assert.is(r.exitCode, 0, r.all);
    const status = await cli(ws, ["status", "m.yaml", "--emulate", "--json"]);
    assert.is(status.exitCode, 0, status.all);
    const view = JSON.parse(status.stdout);
    assert.is(view.emulated, true);
    assert.is(view.lockfile, "m.emulate.lock.json");
    assert.is(view.outputs, "out-emulated");
    assert.is(view.tasks, 4 + 3 + 8);
    const text = await cli(ws, ["status", "m.yaml", "--emulate"]);
    assert.is(text.exitCode, 0, text.all);
    assert.match(text.stdout, "EMULATED");

    const real = await cli(ws, ["status", "m.yaml"]);
    assert.is(real.exitCode, 2);
    assert.match(real.stderr, "no lockfile at m.lock.json");
    assert.match(real.stderr, "add --emulate");

    const report = await cli(ws, ["report", "m.yaml", "--emulate", "--json"]);
    assert.is(report.exitCode, 0, report.all);
    const out = JSON.parse(report.stdout);
    assert.is(out.emulated, true);
    assert.equal(out.files.map((f: string) => f.slice(join(ws.dir, "out-emulated").length + 1)).sort(), ["billing.csv", "billing.json", "billing.md", "report.html", "results.jsonl"]);
    const realReport = await cli(ws, ["report", "m.yaml"]);
    assert.is(realReport.exitCode, 2);
    assert.equal(readdirSync(ws.dir).sort(), ["m.emulate.lock.json", "m.emulate.state.json", "m.yaml", "out-emulated"]);
  } finally {
    ws.remove();
  }
});

t("an --emulate run marks its billing summary, in billing.md and in $GITHUB_STEP_SUMMARY, as emulated", async () => {
  const ws = workspace(manifestYaml("emusummary"));
  try {
    const stepSummary = join(ws.dir, "step-summary.md");
    const r = await runCli(ws, ["--emulate", "--quiet"], { GITHUB_STEP_SUMMARY: stepSummary });
    assert.is(r.exitCode, 0, r.all);
    const banner = "> **Emulated run** (`--emulate`): nothing was sent to the service and nothing was charged.";
    // The outcome comes first (issue 10), the banner right under it, before any figure.
    const md = readFileSync(stepSummary, "utf8");
    assert.ok(md.startsWith(`# omnibatch run: emusummary: ✅ done: every task finished and its results are on disk\n\n${banner}\n`), md.slice(0, 300));
    assert.ok(readFileSync(join(ws.dir, "out-emulated", "billing.md"), "utf8").startsWith(banner));
  } finally {
    ws.remove();
  }
});

t.run();
