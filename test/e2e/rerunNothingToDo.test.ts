// A rerun with nothing to do, through the built CLI against the emulator over loopback, real
// files: it tells what the rerun before it told (events, summary, exit code), leaves the
// lockfile byte for byte as it was and the reports unwritten; a change to what the plan is
// made from (a data file, a result on disk, a review decision) makes the run do what it must;
// a failed task ends each rerun with exit 1. And what such reruns must not do to anything
// else: draw over the terminal's spend question, or write per-machine content into the
// committed lockfile.

import { cpSync, mkdtempSync, readFileSync, rmSync, statSync, truncateSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { execa } from "execa";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { startEmulator, type RunningEmulator } from "../../src/emulator/Emulator.js";
import { REPORT_FILES } from "../../src/report/writeReports.js";
import { readLockFile } from "../../src/state/readLockFile.js";
import { bin } from "./runFixture.js";

const manifestsDir = fileURLToPath(new URL("../../manifests", import.meta.url));
let emu: RunningEmulator;
const t = suite("a rerun with nothing to do");

t.before(async () => {
  emu = await startEmulator({ timing: { scale: 0.1 }, slots: { video: 20, image: 40 } }, { port: 0 });
});
t.after(async () => {
  await emu.close();
});

interface Ran {
  readonly exitCode: number;
  /** The NDJSON events with their times blanked. */
  readonly events: Record<string, unknown>[];
  readonly summary: Record<string, unknown> & { created: number; downloaded: number; exitCode: number };
}

const envOf = () => ({ OMNIBATCH_API_KEY: emu.apiKey, OMNIBATCH_BASE_URL: emu.url, OMNIBATCH_TIME_SCALE: "0.05" });

const run = async (dir: string, manifest: string): Promise<Ran> => {
  const r = await execa("node", [bin, "run", manifest, "--json"], { cwd: dir, reject: false, env: envOf(), extendEnv: false });
  const events = r.stdout
    .trim()
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => {
      const e = JSON.parse(l) as Record<string, unknown>;
      if ("at" in e) e["at"] = "";
      if ("elapsedMs" in e) e["elapsedMs"] = 0;
      return e;
    });
  return { exitCode: r.exitCode ?? -1, events, summary: events.at(-1) as Ran["summary"] };
};

const reportBytes = (out: string): string[] => REPORT_FILES.map((f) => readFileSync(join(out, f), "utf8"));
const reportTimes = (out: string): number[] => REPORT_FILES.map((f) => statSync(join(out, f)).mtimeMs);

/** A workspace holding a manifest (and what it reads), run until nothing is left to do: the work, then a rerun that makes nothing. */
const settled = async (yaml: string) => {
  const dir = mkdtempSync(join(tmpdir(), "omnibatch-rerun-"));
  cpSync(join(manifestsDir, "assets"), join(dir, "assets"), { recursive: true });
  cpSync(join(manifestsDir, "data"), join(dir, "data"), { recursive: true });
  const manifest = join(dir, "m.yaml");
  writeFileSync(manifest, yaml);
  const work = await run(dir, manifest);
  assert.is(work.exitCode, 0, JSON.stringify(work.summary));
  const lockfile = join(dir, "m.lock.json");
  const before = readFileSync(lockfile);
  const first = await run(dir, manifest);
  assert.equal([first.exitCode, first.summary.created, first.summary.downloaded], [0, 0, 0]);
  assert.ok(readFileSync(lockfile).equals(before), "the rerun with nothing to do left the lockfile byte for byte as it was");
  return { dir, manifest, lockfile, out: join(dir, "out"), first, remove: () => rmSync(dir, { recursive: true, force: true }) };
};

const matrixYaml = `version: 1
name: mx
outputs: out
jobs:
  stills:
    kind: image
    matrix: { subject: [apple, boat], light: [warm, cold] }
    prompt: "a {{ subject }} in {{ light }} light"
    n: 2
  clips:
    kind: video
    matrix: { mood: [calm, busy] }
    prompt: "a {{ mood }} street"
    settings: { resolution: 720p, duration: 5 }
`;

// The demo: CSV rows, local images, a downstream job and a budget with prices.
const demoYaml = readFileSync(join(manifestsDir, "demo.yaml"), "utf8").replace("outputs: ../outputs/demo", "outputs: out");

const itemFileYaml = `version: 1
name: itf
outputs: out
jobs:
  stills:
    kind: image
    matrix: { subject: [apple, boat] }
    prompt: "a {{ subject }}"
  moves:
    kind: video
    for_each: stills.outputs
    contents:
      - first_frame: "{{ item.file }}"
        id: start
    prompt: "@start turns slowly"
    settings: { resolution: 720p, duration: 5 }
`;

for (const [label, yaml] of [
  ["a matrix of images and videos", matrixYaml],
  ["CSV rows, local images, a downstream job, a budget", demoYaml],
  ["a downstream job reading upstream results (item.file)", itemFileYaml],
] as const) {
  t(`tells what the rerun before told, writes nothing: ${label}`, async () => {
    const ws = await settled(yaml);
    try {
      const bytes = reportBytes(ws.out);
      const times = reportTimes(ws.out);
      const lockBytes = readFileSync(ws.lockfile, "utf8");
      const again = await run(ws.dir, ws.manifest);
      assert.is(again.exitCode, ws.first.exitCode);
      assert.equal(again.events, ws.first.events, "the same events and summary as the rerun before");
      assert.equal(reportBytes(ws.out), bytes);
      assert.equal(reportTimes(ws.out), times, "reports not rewritten");
      assert.is(readFileSync(ws.lockfile, "utf8"), lockBytes, "the lockfile not written");
    } finally {
      ws.remove();
    }
  });
}

t("a data file edited to the same size: the changed row's task is made", async () => {
  const ws = await settled(demoYaml);
  try {
    const csv = join(ws.dir, "data", "products.csv");
    const text = readFileSync(csv, "utf8");
    const edited = text.replace("ceramic mug", "ceramic cup");
    assert.is(edited.length, text.length);
    writeFileSync(csv, edited);
    const r = await run(ws.dir, ws.manifest);
    assert.is(r.exitCode, 0);
    assert.ok(r.summary.created > 0, "the changed rows' tasks are made");
  } finally {
    ws.remove();
  }
});

t("a result deleted, and one truncated: each downloaded again", async () => {
  const ws = await settled(matrixYaml);
  try {
    const lock = (await readLockFile(ws.lockfile))!;
    const [a, b] = Object.values(lock.tasks).filter((x) => x.job === "stills");
    unlinkSync(join(ws.out, a!.outputs[0]!.path!));
    let r = await run(ws.dir, ws.manifest);
    assert.is(r.exitCode, 0);
    // The task's results are fetched again (both of its two images: the task's results are downloaded together).
    assert.ok(r.summary.downloaded >= 1);
    assert.ok(statSync(join(ws.out, a!.outputs[0]!.path!)).isFile(), "the deleted result is back");
    r = await run(ws.dir, ws.manifest);
    assert.equal([r.exitCode, r.summary.created, r.summary.downloaded], [0, 0, 0], "then nothing to do again");
    const file = join(ws.out, b!.outputs[1]!.path!);
    truncateSync(file, statSync(file).size - 1);
    r = await run(ws.dir, ws.manifest);
    assert.is(r.exitCode, 0);
    assert.ok(r.summary.downloaded >= 1, "the truncated result downloaded again");
    assert.is(statSync(file).size, readFileSync(file).length);
    assert.is((await readLockFile(ws.lockfile))!.tasks[Object.keys(lock.tasks).find((id) => lock.tasks[id] === b)!]!.outputs[1]!.size, statSync(file).size);
  } finally {
    ws.remove();
  }
});

t("a failed task: every rerun ends with exit 1", async () => {
  const dir = mkdtempSync(join(tmpdir(), "omnibatch-rerun-"));
  try {
    const manifest = join(dir, "m.yaml");
    writeFileSync(manifest, matrixYaml.replace("[apple, boat]", '[apple, "[fail] boat"]'));
    for (let i = 0; i < 3; i++) assert.is((await run(dir, manifest)).exitCode, 1, `run ${i + 1}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

t("an approval given after a reviewed run had nothing left to do: the next run makes its downstream task", async () => {
  const dir = mkdtempSync(join(tmpdir(), "omnibatch-rerun-"));
  const cli = (args: string[]) => execa("node", [bin, ...args], { cwd: dir, reject: false, all: true, env: envOf(), extendEnv: false });
  try {
    const manifest = join(dir, "m.yaml");
    // A name of its own: the emulator is shared by the tests, and the same task ids made by
    // the item.file test above would be adopted there, not created.
    writeFileSync(manifest, itemFileYaml.replace("name: itf", "name: rv").replace("    kind: image\n", "    kind: image\n    review: true\n"));
    assert.is((await cli(["run", manifest, "--yes"])).exitCode, 3, "stills await review");
    assert.is((await cli(["review", manifest, "--approve", "stills subject=apple"])).exitCode, 0);
    assert.is((await cli(["review", manifest, "--reject", "stills subject=boat"])).exitCode, 0);
    const made = await run(dir, manifest);
    assert.equal([made.exitCode, made.summary.created], [0, 1], "apple's move");
    const rerun = await run(dir, manifest);
    assert.equal([rerun.exitCode, rerun.summary.created], [0, 0], "nothing left to do");
    assert.is((await cli(["review", manifest, "--approve", "stills subject=boat"])).exitCode, 0);
    const next = await run(dir, manifest);
    assert.equal([next.exitCode, next.summary.created], [0, 1], "boat's move (approved) is made");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

const stillsYaml = `version: 1
name: mx
outputs: out
jobs:
  stills:
    kind: image
    matrix: { subject: [apple, boat] }
    prompt: "a {{ subject }}"
`;

const workspace = () => {
  const dir = mkdtempSync(join(tmpdir(), "omnibatch-rerun-"));
  writeFileSync(join(dir, "m.yaml"), stillsYaml);
  return dir;
};
const runIn = (dir: string, args: string[] = []) => execa("node", [bin, "run", "m.yaml", ...args], { cwd: dir, reject: false, all: true, env: envOf(), extendEnv: false });

t("a terminal run's spend question stays on screen until it is answered (nothing drawn over it)", async () => {
  const dir = workspace();
  try {
    // A pseudo-terminal for stdin and stdout (util-linux `script`); "n" answered after 1.5 s.
    const child = execa("script", ["-qefc", `node ${bin} run m.yaml`, "/dev/null"], { cwd: dir, reject: false, env: envOf(), extendEnv: false });
    setTimeout(() => child.stdin?.write("n\n"), 1500);
    const r = await child;
    const out = r.stdout;
    const asked = out.indexOf("Continue? [y/N] ");
    assert.ok(asked >= 0, out);
    const answered = out.indexOf("not confirmed");
    const between = out.slice(asked + "Continue? [y/N] ".length, answered);
    assert.not.match(between, /\x1b\[\d+A/, "the question was erased (cursor up, clear) while waiting for the answer");
    assert.not.match(between, /spend nothing charged yet/, "a live progress block was drawn over the question");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

t("a rerun with nothing to do leaves the committed lockfile as it was (only the header fields every version reads)", async () => {
  const dir = workspace();
  try {
    assert.is((await runIn(dir, ["--yes"])).exitCode, 0);
    const before = readFileSync(join(dir, "m.lock.json"), "utf8");
    assert.is((await runIn(dir)).exitCode, 0);
    const after = readFileSync(join(dir, "m.lock.json"), "utf8");
    const header = JSON.parse(after.split("\n")[0]!) as Record<string, unknown>;
    assert.equal(Object.keys(header).filter((k) => !["lockfile_version", "name", "service"].includes(k)), [], "header fields an older omnibatch rejects as damaged");
    assert.is(after, before, "a no-op rerun changed the lockfile");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

t("the same committed project at another path: a no-op rerun does not rewrite line 1 (no per-machine content in git)", async () => {
  const a = workspace();
  const b = mkdtempSync(join(tmpdir(), "omnibatch-rerun-clone-"));
  try {
    assert.is((await runIn(a, ["--yes"])).exitCode, 0);
    assert.is((await runIn(a)).exitCode, 0);
    cpSync(a, b, { recursive: true }); // a teammate's checkout, results restored
    const committed = readFileSync(join(b, "m.lock.json"), "utf8");
    assert.is((await runIn(b)).exitCode, 0);
    const line1 = readFileSync(join(b, "m.lock.json"), "utf8").split("\n")[0]!;
    assert.not.ok(line1.includes(b), "the teammate's absolute path is written into the committed lockfile");
    assert.is(line1, committed.split("\n")[0]!, "line 1 differs per machine: every pair of reruns conflicts in git");
  } finally {
    rmSync(a, { recursive: true, force: true });
    rmSync(b, { recursive: true, force: true });
  }
});

t.run();
