// The settled-rerun fast path (src/run/settledRun.ts, src/state/SettledStamp.ts) through the
// built CLI against the emulator over loopback, real files: a run that ends with nothing to
// do keeps a settled stamp (in the cache folder, $OMNIBATCH_CACHE_DIR: here inside each
// workspace; the lockfile is left byte for byte as it was); the next plain run tells exactly what a full run tells (events,
// summary, exit code, reports untouched) without planning; and every change to what the
// plan is made from sends it back to the full path, which then does what it must (makes a
// changed task, downloads a removed result). OMNIBATCH_SETTLED=debug makes the CLI say on
// stderr which path it took; OMNIBATCH_SETTLED=off forces the full path for comparison.

import { createHash } from "node:crypto";
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, truncateSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { execa } from "execa";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { startEmulator, type RunningEmulator } from "../../src/emulator/Emulator.js";
import { REPORT_FILES } from "../../src/report/writeReports.js";
import { readLockFile } from "../../src/state/readLockFile.js";
import { makeStamp, readStamp, type SettledStamp } from "../../src/state/SettledStamp.js";
import { settledStampFile } from "../../src/state/settledCache.js";
import { bin } from "./runFixture.js";

const manifestsDir = fileURLToPath(new URL("../../manifests", import.meta.url));
let emu: RunningEmulator;
const t = suite("settled rerun");

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
  readonly path: "fast" | "full";
  readonly reason: string;
}

/** Each workspace's cache folder (OMNIBATCH_CACHE_DIR), inside it. */
const cacheOf = (dir: string): string => join(dir, ".cache");
/** Where the stamp of a workspace's lockfile is kept. */
const stampFileOf = (dir: string, lockfile: string): string => settledStampFile(lockfile, cacheOf(dir));
const readStampFile = (dir: string, lockfile: string): SettledStamp | undefined =>
  existsSync(stampFileOf(dir, lockfile)) ? readStamp(JSON.parse(readFileSync(stampFileOf(dir, lockfile), "utf8"))) : undefined;

const run = async (dir: string, manifest: string, env: Record<string, string> = {}): Promise<Ran> => {
  const r = await execa("node", [bin, "run", manifest, "--json"], {
    cwd: dir,
    reject: false,
    env: {
      OMNIBATCH_API_KEY: emu.apiKey,
      OMNIBATCH_BASE_URL: emu.url,
      OMNIBATCH_TIME_SCALE: "0.05",
      OMNIBATCH_SETTLED: "debug",
      OMNIBATCH_CACHE_DIR: cacheOf(dir),
      ...env,
    },
    extendEnv: false,
  });
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
  const taken = /settled fast path taken/.test(r.stderr);
  const reason = /settled fast path not taken: (.*)/.exec(r.stderr)?.[1] ?? "";
  return { exitCode: r.exitCode ?? -1, events, summary: events.at(-1) as Ran["summary"], path: taken ? "fast" : "full", reason };
};

const reportBytes = (out: string): string[] => REPORT_FILES.map((f) => readFileSync(join(out, f), "utf8"));
const reportTimes = (out: string): number[] => REPORT_FILES.map((f) => statSync(join(out, f)).mtimeMs);

/** A workspace holding a manifest (and what it reads), run until it is settled: the work, then a rerun that stamps. */
const settled = async (yaml: string, files: Record<string, Buffer | string> = {}) => {
  const dir = mkdtempSync(join(tmpdir(), "omnibatch-settled-"));
  cpSync(join(manifestsDir, "assets"), join(dir, "assets"), { recursive: true });
  cpSync(join(manifestsDir, "data"), join(dir, "data"), { recursive: true });
  for (const [name, content] of Object.entries(files)) writeFileSync(join(dir, name), content);
  const manifest = join(dir, "m.yaml");
  writeFileSync(manifest, yaml);
  const work = await run(dir, manifest);
  assert.is(work.exitCode, 0, JSON.stringify(work.summary));
  const lockfile = join(dir, "m.lock.json");
  assert.is(readStampFile(dir, lockfile), undefined, "the run that did the work keeps no stamp");
  const before = readFileSync(lockfile);
  const stamping = await run(dir, manifest);
  assert.is(stamping.path, "full");
  assert.is(stamping.summary.created, 0);
  assert.ok(readStampFile(dir, lockfile), "the rerun with nothing to do kept a stamp");
  assert.ok(readFileSync(lockfile).equals(before), "and left the lockfile byte for byte as it was");
  return { dir, manifest, lockfile, out: join(dir, "out"), stamping, remove: () => rmSync(dir, { recursive: true, force: true }) };
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
  t(`fast path tells what the full path tells: ${label}`, async () => {
    const ws = await settled(yaml);
    try {
      const bytes = reportBytes(ws.out);
      const times = reportTimes(ws.out);
      const lockBytes = readFileSync(ws.lockfile, "utf8");
      const fast = await run(ws.dir, ws.manifest);
      assert.is(fast.path, "fast", fast.reason);
      assert.is(fast.exitCode, ws.stamping.exitCode);
      assert.equal(fast.events, ws.stamping.events, "the same events and summary as the rerun that stamped");
      assert.equal(reportBytes(ws.out), bytes);
      assert.equal(reportTimes(ws.out), times, "reports not rewritten");
      assert.is(readFileSync(ws.lockfile, "utf8"), lockBytes, "the lockfile not written");
      // And a full run on the same workspace now: the same again, and the stamp kept.
      const full = await run(ws.dir, ws.manifest, { OMNIBATCH_SETTLED: "off" });
      assert.is(full.path, "full");
      assert.equal(full.events, fast.events);
      assert.is(readFileSync(ws.lockfile, "utf8"), lockBytes, "a full run with nothing to do leaves the lockfile as it is");
    } finally {
      ws.remove();
    }
  });
}

const lineOf = (lockfile: string, n: number): string => readFileSync(lockfile, "utf8").split("\n").filter((l) => l !== "")[n]!;

t("fallback: the manifest edited (its bytes), even with the same plan", async () => {
  const ws = await settled(matrixYaml);
  try {
    writeFileSync(ws.manifest, `${matrixYaml}# a comment\n`);
    const r = await run(ws.dir, ws.manifest);
    assert.equal([r.path, r.reason, r.exitCode, r.summary.created], ["full", "the manifest changed", 0, 0]);
    assert.is((await run(ws.dir, ws.manifest)).path, "fast", "stamped again, then fast");
  } finally {
    ws.remove();
  }
});

t("fallback: a data file edited to the same size: the changed row's task is made", async () => {
  const ws = await settled(demoYaml);
  try {
    const csv = join(ws.dir, "data", "products.csv");
    const text = readFileSync(csv, "utf8");
    const edited = text.replace("ceramic mug", "ceramic cup");
    assert.is(edited.length, text.length);
    writeFileSync(csv, edited);
    const r = await run(ws.dir, ws.manifest);
    assert.is(r.path, "full");
    assert.match(r.reason, /the input .*products\.csv changed/);
    assert.ok(r.summary.created > 0, "the changed rows' tasks are made");
  } finally {
    ws.remove();
  }
});

t("fallback: a local image edited to the same size", async () => {
  const ws = await settled(demoYaml);
  try {
    const png = join(ws.dir, "assets", "mug.png");
    const bytes = readFileSync(png);
    // A byte of its last chunk's CRC changed: same size, other bytes (the probe still reads it).
    bytes[bytes.length - 5] = bytes[bytes.length - 5]! ^ 0xff;
    writeFileSync(png, bytes);
    const r = await run(ws.dir, ws.manifest);
    assert.is(r.path, "full");
    assert.match(r.reason, /the input .*mug\.png changed/);
  } finally {
    ws.remove();
  }
});

t("fallback: an upstream result read by item.file edited to the same size", async () => {
  const ws = await settled(itemFileYaml);
  try {
    const lock = (await readLockFile(ws.lockfile))!;
    const still = Object.values(lock.tasks).find((x) => x.job === "stills")!;
    const path = join(ws.out, still.outputs[0]!.path!);
    const bytes = readFileSync(path);
    bytes[bytes.length - 5] = bytes[bytes.length - 5]! ^ 0xff;
    writeFileSync(path, bytes);
    const r = await run(ws.dir, ws.manifest);
    assert.is(r.path, "full");
    assert.match(r.reason, /the input .*changed/);
  } finally {
    ws.remove();
  }
});

/** The kept stamp replaced by `change(stamp)` with its key made again (as a build with other values would write it). */
const restamp = (dir: string, lockfile: string, change: (s: SettledStamp) => Partial<SettledStamp>) => {
  const stamp = readStampFile(dir, lockfile)!;
  const { key: _key, ...body } = { ...stamp, ...change(stamp) };
  writeFileSync(stampFileOf(dir, lockfile), JSON.stringify(makeStamp(body)));
};

t("fallback: a stamp made by another tool version (or planning constant), and a stamp edited by hand", async () => {
  const ws = await settled(matrixYaml);
  try {
    restamp(ws.dir, ws.lockfile, (s) => ({ tool: s.tool.replace(/plan\d+/, "plan0") }));
    const r = await run(ws.dir, ws.manifest);
    assert.equal([r.path, r.exitCode], ["full", 0]);
    assert.match(r.reason, /made by .*plan0/);
    assert.is((await run(ws.dir, ws.manifest)).path, "fast");
    // Edited without its key: not a stamp at all.
    const file = stampFileOf(ws.dir, ws.lockfile);
    const text = readFileSync(file, "utf8");
    writeFileSync(file, text.replace(/"day":(\d+)/, (_m, d: string) => `"day":${Number(d) - 1}`));
    assert.is.not(readFileSync(file, "utf8"), text);
    assert.equal([(await run(ws.dir, ws.manifest)).reason], ["no settled stamp"]);
    // The stamp of another workspace's lockfile, put in this one's place: made from another manifest.
    assert.is((await run(ws.dir, ws.manifest)).path, "fast", "stamped again");
    const other = await settled(matrixYaml);
    try {
      writeFileSync(stampFileOf(ws.dir, ws.lockfile), readFileSync(stampFileOf(other.dir, other.lockfile)));
      const r = await run(ws.dir, ws.manifest);
      assert.equal([r.path, r.reason, r.exitCode], ["full", "the manifest changed", 0]);
    } finally {
      other.remove();
    }
  } finally {
    ws.remove();
  }
});

t("fallback: a result deleted, and one truncated: each downloaded again", async () => {
  const ws = await settled(matrixYaml);
  try {
    const lock = (await readLockFile(ws.lockfile))!;
    const [a, b] = Object.values(lock.tasks).filter((x) => x.job === "stills");
    unlinkSync(join(ws.out, a!.outputs[0]!.path!));
    let r = await run(ws.dir, ws.manifest);
    assert.equal([r.path, r.reason, r.exitCode], ["full", "a result file is missing or of another size", 0]);
    // The task's results are fetched again (both of its two images: the task's results are downloaded together).
    assert.ok(r.summary.downloaded >= 1);
    assert.ok(statSync(join(ws.out, a!.outputs[0]!.path!)).isFile(), "the deleted result is back");
    assert.is((await run(ws.dir, ws.manifest)).path, "full", "the run that downloaded did something: it does not stamp");
    assert.is((await run(ws.dir, ws.manifest)).path, "fast");
    const file = join(ws.out, b!.outputs[1]!.path!);
    truncateSync(file, statSync(file).size - 1);
    r = await run(ws.dir, ws.manifest);
    assert.equal([r.path, r.reason, r.exitCode], ["full", "a result file is missing or of another size", 0]);
    assert.ok(r.summary.downloaded >= 1, "the truncated result downloaded again");
    assert.is(statSync(file).size, readFileSync(file).length);
    assert.is((await readLockFile(ws.lockfile))!.tasks[Object.keys(lock.tasks).find((id) => lock.tasks[id] === b)!]!.outputs[1]!.size, statSync(file).size);
  } finally {
    ws.remove();
  }
});

t("fallback: a lockfile line edited, and a task added by a merge", async () => {
  const ws = await settled(matrixYaml);
  try {
    // A line edited (the task's last update moved by a second): still a valid lockfile.
    const line = lineOf(ws.lockfile, 1);
    const edited = line.replace(/"at":\[(\d+)/, (_m, n: string) => `"at":[${Number(n) + 1000}`);
    assert.is.not(edited, line);
    writeFileSync(ws.lockfile, readFileSync(ws.lockfile, "utf8").replace(line, edited));
    let r = await run(ws.dir, ws.manifest);
    assert.equal([r.path, r.reason, r.exitCode], ["full", "the lockfile's task lines changed", 0]);
    assert.is((await run(ws.dir, ws.manifest)).path, "fast", "the full run wrote the stamp again for the edited lines");

    // A task of the same manifest name made on another branch (one more matrix value), merged in.
    const other = mkdtempSync(join(tmpdir(), "omnibatch-settled-branch-"));
    try {
      const branchYaml = matrixYaml.replace("[calm, busy]", "[calm, busy, dark]");
      writeFileSync(join(other, "m.yaml"), branchYaml);
      assert.is((await run(other, join(other, "m.yaml"))).exitCode, 0);
      const idOf = (l: string) => (JSON.parse(l) as { id: string }).id;
      const mine = new Set(readFileSync(ws.lockfile, "utf8").split("\n").slice(1).filter((l) => l !== "").map(idOf));
      const extra = readFileSync(join(other, "m.lock.json"), "utf8").split("\n").slice(1).filter((l) => l !== "" && !mine.has(idOf(l)));
      assert.is(extra.length, 1);
      writeFileSync(ws.lockfile, `${readFileSync(ws.lockfile, "utf8")}\n${extra[0]}\n`);
    } finally {
      rmSync(other, { recursive: true, force: true });
    }
    r = await run(ws.dir, ws.manifest);
    assert.equal([r.path, r.reason, r.exitCode], ["full", "the lockfile's task lines changed", 0]);
  } finally {
    ws.remove();
  }
});

t("a failed task: no run stamps, none takes the fast path (exit 1 each time)", async () => {
  const dir = mkdtempSync(join(tmpdir(), "omnibatch-settled-"));
  try {
    const manifest = join(dir, "m.yaml");
    writeFileSync(manifest, matrixYaml.replace("[apple, boat]", "[apple, \"[fail] boat\"]"));
    for (let i = 0; i < 3; i++) {
      const r = await run(dir, manifest);
      assert.equal([r.exitCode, r.path], [1, "full"]);
      assert.is(readStampFile(dir, join(dir, "m.lock.json")), undefined, "no stamp kept");
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

t("fallback: the review decisions changed after a reviewed run settled", async () => {
  const dir = mkdtempSync(join(tmpdir(), "omnibatch-settled-"));
  try {
    cpSync(join(manifestsDir, "assets"), join(dir, "assets"), { recursive: true });
    cpSync(join(manifestsDir, "data"), join(dir, "data"), { recursive: true });
    const manifest = join(dir, "m.yaml");
    const yaml = demoYaml.replace(/(\n  keyframes:\n    kind: image\n)/, "$1    review: true\n");
    assert.is.not(yaml, demoYaml);
    writeFileSync(manifest, yaml);
    const env = { OMNIBATCH_API_KEY: emu.apiKey, OMNIBATCH_BASE_URL: emu.url, OMNIBATCH_TIME_SCALE: "0.05" };
    const review = (args: string[]) => execa("node", [bin, "review", manifest, ...args], { cwd: dir, reject: false, env, extendEnv: false });
    assert.is((await run(dir, manifest)).exitCode, 3, "outputs await review");
    assert.is((await review(["--approve", "keyframes"])).exitCode, 0);
    assert.is((await run(dir, manifest)).exitCode, 0, "the clips made once approved");
    const stamping = await run(dir, manifest);
    assert.equal([stamping.path, stamping.summary.created], ["full", 0]);
    assert.is((await run(dir, manifest)).path, "fast");
    // A decision taken back: the review file is an input of the plan.
    assert.is((await review(["--reject", "keyframes product.sku=A-1"])).exitCode, 0);
    const r = await run(dir, manifest);
    assert.is(r.path, "full");
    assert.match(r.reason, /the input .*review.* changed/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

t("the stamp lists every input file with its sha256", async () => {
  const ws = await settled(demoYaml);
  try {
    const inputs = Object.fromEntries(readStampFile(ws.dir, ws.lockfile)!.inputs);
    for (const f of ["data/products.csv", "assets/mug.png", "assets/lamp.png", "assets/chair.png"]) {
      const path = join(ws.dir, ...f.split("/"));
      assert.is(inputs[path], createHash("sha256").update(readFileSync(path)).digest("hex"), f);
    }
  } finally {
    ws.remove();
  }
});

t("a cache folder that cannot be written: no stamp, every rerun plans in full and ends as it should", async () => {
  const ws = await settled(matrixYaml);
  try {
    // The cache folder is a regular file: the stamp cannot be kept.
    const blocked = join(ws.dir, "not-a-folder");
    writeFileSync(blocked, "x");
    for (let i = 0; i < 2; i++) {
      const r = await run(ws.dir, ws.manifest, { OMNIBATCH_CACHE_DIR: blocked });
      assert.equal([r.path, r.reason, r.exitCode, r.summary.created], ["full", "no settled stamp", 0, 0]);
    }
    assert.is(readFileSync(blocked, "utf8"), "x");
  } finally {
    ws.remove();
  }
});

t.run();
