// The test command (`npm test`): builds (unless dist/ is newer than its sources), type-checks,
// then runs every uvu test file (test/**/*.test.ts), six files at a time, each with a time
// limit, and ends with the total time and CPU, the ten slowest files (wall and CPU) and the
// line `N passed, N failed`. Each of the six places keeps one shared Node process
// (test/batch.mjs) for the files that may share one (test/classify.mjs decides, from the
// source, so a new file needs no list), and one more for the files that use the AWS SDK
// (which share only with each other): Node, tsx and the modules of src/ load once per place.
// Files that touch process-wide state (environment variables, process events, ...) or start a
// browser run in their own. Browser tests (test/browser) need a Chromium; without one they
// are counted as skipped and a loud notice says how to run them. Four places on two cores:
// many files spend most of their time waiting for an emulator's clock or a child process,
// and the places past two fill those waits (on a quiet 2-core machine, 2026-12-02: three
// places 365 s, four 302 s, CPU about 500 s either way).
//
//   npm test                 all tests
//   npm test -- emulator     only files whose path contains "emulator"
//
// OMNIBATCH_TEST_JOBS (default 6) places; OMNIBATCH_TEST_TIMEOUT_MS (default 300000) per
// file; OMNIBATCH_TEST_ISOLATE=1 runs every file in its own process.

import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statfsSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { execa } from "execa";
import { classify } from "./classify.mjs";
import { cpuMs } from "./cpuUsage.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));
const testRoot = join(root, "test");
const filters = process.argv.slice(2);
const fileTimeoutMs = Number(process.env.OMNIBATCH_TEST_TIMEOUT_MS ?? 300_000);
const parallel = Number(process.env.OMNIBATCH_TEST_JOBS ?? 6);
const isolate = process.env.OMNIBATCH_TEST_ISOLATE === "1";
const runStarted = Date.now();
const seconds = (ms) => (ms / 1000).toFixed(1);

const findTests = (dir) =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === "fixtures" || entry.name === ".tmp" ? [] : findTests(path);
    return entry.name.endsWith(".test.ts") ? [path] : [];
  });

const step = async (label, file, args) => {
  const started = Date.now();
  const result = await execa(file, args, { cwd: root, reject: false, all: true, preferLocal: true });
  if (result.exitCode !== 0) {
    process.stdout.write(`${label} failed:\n${result.all}\n`);
    return false;
  }
  process.stdout.write(`${label}: ok (${seconds(Date.now() - started)} s)\n`);
  return true;
};

const counts = (output) => {
  let total = 0;
  let passed = 0;
  let skipped = 0;
  for (const m of output.matchAll(/Total:\s+(\d+)/g)) total += Number(m[1]);
  for (const m of output.matchAll(/Passed:\s+(\d+)/g)) passed += Number(m[1]);
  for (const m of output.matchAll(/Skipped:\s+(\d+)/g)) skipped += Number(m[1]);
  return { total, passed, skipped };
};

let passed = 0;
let failed = 0;
let skipped = 0;
/** Test files that said their browser tests were skipped (test/browser/browser.ts prints the marker). */
const browserSkips = [];
/** Per file: milliseconds of wall and of CPU time, and whether it ran in a shared process. */
const timings = [];
/** CPU milliseconds of every test process (alone or shared), from their `@@cpu` lines. */
let testCpuMs = 0;
const cpuPreload = join(testRoot, "cpuReport.mjs");
/** The CPU milliseconds a test process printed as it exited (test/cpuReport.mjs), and its output without that line. */
const takeCpu = (output) => {
  const m = /\n?@@cpu (\d+)\n?/.exec(output);
  if (!m) return { cpu: undefined, output };
  testCpuMs += Number(m[1]);
  return { cpu: Number(m[1]), output: output.slice(0, m.index) + output.slice(m.index + m[0].length) };
};
const cpuText = (cpu) => (cpu === undefined ? "" : `, ${seconds(cpu)} s CPU`);

// How long each file took last time (kept in test/.tmp, which git ignores and `npm ci` keeps),
// so the longest start first. A fresh clone has no such file: then the committed expected
// times (test/times.json, milliseconds of wall time per file on a 2-core machine, for the
// files that take long) give the order; a file in neither is guessed from its source (below).
// OMNIBATCH_TEST_SAVE_TIMES=1
// writes this run's times into test/times.json (files not run keep theirs).
const cacheFolder = join(root, "node_modules", ".cache", "omnibatch-test");
const timesPath = join(testRoot, ".tmp", "times.json");
const committedTimesPath = join(testRoot, "times.json");
const readTimes = (path) => {
  try {
    const times = JSON.parse(readFileSync(path, "utf8"));
    return typeof times === "object" && times !== null && !Array.isArray(times) ? times : {};
  } catch {
    return {};
  }
};
const lastTimes = readTimes(timesPath);
const committedTimes = readTimes(committedTimesPath);

/** One file's result, counted and printed. `output` is what the file printed. */
const record = (name, c, output, ms, { broken = false, why = "", shared = false, cpu } = {}) => {
  // uvu's Total counts the tests that ran: skipped ones are not in it.
  const fileFailed = c.total - c.passed;
  if (output.includes("BROWSER TESTS SKIPPED")) browserSkips.push(name);
  passed += c.passed;
  skipped += c.skipped;
  failed += fileFailed + (broken && fileFailed === 0 ? 1 : 0);
  timings.push({ name, ms, cpu, shared });
  const secs = `${seconds(ms)} s${cpuText(cpu)}`;
  if (fileFailed > 0 || broken) {
    process.stdout.write(`\nFAIL ${name}${why} [${secs}]\n${output}\n`);
  } else {
    process.stdout.write(`ok   ${name}: ${c.passed} passed${c.skipped ? `, ${c.skipped} skipped` : ""} [${secs}]${shared ? " (shared)" : ""}\n`);
  }
};

// Tests read no state a user's commands left: the user's own OMNIBATCH_ settings (a key, an
// address printed by `omnibatch emulator`, a cache folder) are not passed on, and the settled
// stamps (src/state/settledCache.ts) of the runs the tests make go to a folder of this test
// run, removed at the end, never to the user's cache folder (unless a test names its own).
// Kept: the tests' own settings (OMNIBATCH_TEST_*, OMNIBATCH_CHROMIUM, OMNIBATCH_SCREENSHOT).
for (const name of Object.keys(process.env)) {
  if (name.startsWith("OMNIBATCH_") && !/^OMNIBATCH_(TEST_|CHROMIUM$|SCREENSHOT$)/.test(name)) delete process.env[name];
}
// The tests' temporary folders (os.tmpdir()) go to a folder of this run, removed at the end:
// on Linux under /dev/shm (a tmpfs) when it can be written and has room, where making and removing the
// thousands of small folders and files the tests make costs a fraction of a disk file
// system's CPU (runLockTakeover's 900 stale locks: 20.5 s of CPU under /tmp on ext4,
// 11.1 s here); elsewhere under the usual temporary folder. OMNIBATCH_TEST_TMPDIR names
// another parent.
const tmpParent = (() => {
  if (process.env.OMNIBATCH_TEST_TMPDIR) return process.env.OMNIBATCH_TEST_TMPDIR;
  try {
    // At least 2 GiB free: the tests' largest files (a 200 MB reference video, s3rver's
    // objects) are held in memory there.
    const fs = statfsSync("/dev/shm");
    if (process.platform === "linux" && statSync("/dev/shm").isDirectory() && fs.bavail * fs.bsize >= 2 ** 31) {
      rmSync(mkdtempSync("/dev/shm/omnibatch-probe-"), { recursive: true });
      return "/dev/shm";
    }
  } catch {
    // not writable here: the usual temporary folder
  }
  return tmpdir();
})();
const runTmp = mkdtempSync(join(tmpParent, "omnibatch-test-"));
process.env.TMPDIR = runTmp;
const cacheDir = mkdtempSync(join(tmpdir(), "omnibatch-test-cache-"));
process.env.OMNIBATCH_CACHE_DIR = cacheDir;
const childEnv = { FORCE_COLOR: "0", NO_COLOR: "1", OMNIBATCH_CACHE_DIR: cacheDir, TMPDIR: runTmp };

/** A file in its own process, as uvu runs it. */
const runAlone = async (file) => {
  const name = relative(root, file);
  const t0 = Date.now();
  const result = await execa("node", ["--import", "tsx", "--import", cpuPreload, file], { cwd: root, reject: false, all: true, timeout: fileTimeoutMs, env: childEnv });
  const { cpu, output } = takeCpu(result.all ?? "");
  const why = result.timedOut ? ` (timed out after ${fileTimeoutMs / 1000} s)` : "";
  record(name, counts(output), output, Date.now() - t0, { broken: result.exitCode !== 0, why, cpu });
};

/** How many shared processes (test/batch.mjs) were started, and how many of them ended in a failure. */
let batchesStarted = 0;

/**
 * A shared process (test/batch.mjs --stdin) that runs the files handed to it one at a time,
 * each counted and timed as its own. `run(file)` resolves when the file is done: true, or
 * false when the file ran past the time limit or took the process down (then the process is
 * gone and the file failed; the caller starts a new one for the next file). `end()` lets the
 * process exit.
 */
const startBatch = (kind) => {
  batchesStarted += 1;
  const child = execa("node", ["--import", "tsx", "--import", cpuPreload, join(testRoot, "batch.mjs"), ...(kind === "aws-sdk" ? ["--aws-sdk"] : []), "--stdin"], { cwd: root, reject: false, all: true, env: childEnv, buffer: false, stdin: "pipe" });
  let text = ""; // what the process printed and this has not read yet
  let current; // the file it is running: { file, started, timedOut, resolve }
  let timer;
  let ended = false;
  const line = (marker) => {
    const at = text.indexOf(marker);
    const eol = at < 0 ? -1 : text.indexOf("\n", at);
    return eol < 0 ? undefined : { at, rest: text.slice(at + marker.length, eol), next: eol + 1 };
  };
  const scan = () => {
    if (!current) return;
    const end = line(`@@batch end ${current.file} `);
    if (!end) return;
    const [total, ok, skip, ms, cpu, broken] = end.rest.split(" ");
    const begin = line(`@@batch start ${current.file}`);
    const output = text.slice(begin && begin.at < end.at ? begin.next : 0, end.at).trim();
    record(relative(root, current.file), { total: Number(total), passed: Number(ok), skipped: Number(skip) }, output, Number(ms), { broken: broken === "broken", shared: true, cpu: Number(cpu) });
    text = text.slice(end.next);
    clearTimeout(timer);
    const { resolve } = current;
    current = undefined;
    resolve(true);
  };
  child.all.on("data", (chunk) => {
    text += chunk.toString("utf8");
    scan();
  });
  const exited = child.then((result) => {
    ended = true;
    clearTimeout(timer);
    scan();
    text = takeCpu(text).output; // the whole process's CPU, start-up included, counts in the total
    if (current) {
      const why = current.timedOut ? ` (timed out after ${fileTimeoutMs / 1000} s, in a shared process)` : ` (its process ended with ${result.signal ?? `exit code ${result.exitCode}`})`;
      const begin = line(`@@batch start ${current.file}`);
      const output = begin ? text.slice(begin.next) : text;
      record(relative(root, current.file), counts(output), output, Date.now() - current.started, { broken: true, why, shared: true });
      const { resolve } = current;
      current = undefined;
      resolve(false);
    }
  });
  return {
    run: (file) =>
      new Promise((resolve) => {
        if (ended) return resolve(false);
        current = { file, started: Date.now(), timedOut: false, resolve };
        timer = setTimeout(() => {
          current.timedOut = true;
          child.kill("SIGKILL");
        }, fileTimeoutMs);
        child.stdin.write(`${file}\n`);
      }),
    end: async () => {
      child.stdin.end();
      await exited;
    },
  };
};

// `npm run build` (tsc, then the CLI bundle that the CLI tests run, scripts/bundleCli.mjs) and
// the type check of src and test run side by side: each is one tsc, on one core. The tests wait
// for the build only; the type check keeps one of the two places until it ends. The build is
// skipped when dist/ is newer than everything it is made from (as after `npm ci`, which
// builds); the type check remembers what it checked (its build info under node_modules/.cache).
const mtimeOf = (path) => {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return undefined;
  }
};
const newestIn = (path) => {
  const st = statSync(path);
  if (!st.isDirectory()) return st.mtimeMs;
  return readdirSync(path).reduce((m, name) => Math.max(m, newestIn(join(path, name))), st.mtimeMs);
};
const BUILD_INPUTS = ["src", "scripts", "package.json", "package-lock.json", "tsconfig.json", "tsconfig.build.json"];
const BUILD_OUTPUTS = ["dist/index.js", "dist/cli/bin.js", "dist/cli/omnibatch.cjs"];
const builtAt = Math.min(...BUILD_OUTPUTS.map((p) => mtimeOf(join(root, p)) ?? -Infinity));
const newestInput = Math.max(...BUILD_INPUTS.map((p) => (mtimeOf(join(root, p)) === undefined ? -Infinity : newestIn(join(root, p)))));
const typecheck = step("typecheck", "tsc", ["-p", "tsconfig.json", "--noEmit", "--incremental", "--tsBuildInfoFile", join(cacheFolder, "typecheck.tsbuildinfo")]);
let built = true;
if (builtAt > newestInput) process.stdout.write("build: dist/ is newer than src/ and the build's settings: not built again\n");
else built = await step("build", "npm", ["run", "--silent", "build"]);
if (!built) failed += 1;

const files = findTests(testRoot)
  .filter((file) => filters.length === 0 || filters.some((f) => relative(root, file).includes(f)))
  .sort();
const { shared, awsSdk, alone } = isolate ? { shared: [], awsSdk: [], alone: files.map((file) => ({ file })) } : classify(files, testRoot);

// OMNIBATCH_TEST_JOBS places, each taking the next file, the longest (by last run) first:
// a file that needs its own process runs in one; the others run in the place's shared
// process (started at its first such file, kept for the next). So both places stay busy to
// the end and Node, tsx and the modules a file imports start once per place, not per file.
// The type check holds one place until it ends.
// A file in neither list (a new one): guessed from its source, 1 s, and 2.5 s more for each
// place it starts a process (the CLI, a child script) and 1.5 s for each emulator it starts.
const sourceGuess = (file) => {
  const text = readFileSync(file, "utf8");
  const starts = text.match(/\[bin\b|runCli\(|spawn\(|execa\(/g)?.length ?? 0;
  const emulators = text.match(/startEmulator\(/g)?.length ?? 0;
  return Math.min(30_000, 1000 + 2500 * starts + 1500 * emulators);
};
const guesses = new Map(files.map((file) => [file, lastTimes[relative(root, file)] ?? committedTimes[relative(root, file)] ?? sourceGuess(file)]));
const guess = (file) => guesses.get(file);
const own = new Set(alone.map(({ file }) => file));
const sdkFiles = new Set(awsSdk);
const queue = [...files].sort((a, b) => guess(b) - guess(a));
const place = async (first) => {
  if (first) await typecheck.then((ok) => void (ok || (failed += 1)));
  // The place's shared process, and its process for the files that use the AWS SDK.
  const batches = {};
  for (let file = queue.shift(); file !== undefined; file = queue.shift()) {
    if (own.has(file)) {
      await runAlone(file);
      continue;
    }
    const kind = sdkFiles.has(file) ? "aws-sdk" : "plain";
    batches[kind] ??= startBatch(kind);
    if (!(await batches[kind].run(file))) delete batches[kind];
  }
  await Promise.all(Object.values(batches).map((b) => b.end()));
};
const started = Date.now();
await Promise.all(Array.from({ length: Math.max(1, parallel) }, (_, i) => place(i === 0)));

rmSync(cacheDir, { recursive: true, force: true });
rmSync(runTmp, { recursive: true, force: true });
try {
  const times = { ...lastTimes };
  for (const t of timings) times[t.name] = t.ms;
  mkdirSync(join(testRoot, ".tmp"), { recursive: true });
  writeFileSync(timesPath, `${JSON.stringify(times, null, 1)}\n`);
  writeFileSync(join(testRoot, ".tmp", "last-run.json"), `${JSON.stringify({ cpuMs: testCpuMs, files: timings }, null, 1)}\n`);
} catch {
  // Only the order of the next run depends on it.
}
if (process.env.OMNIBATCH_TEST_SAVE_TIMES === "1") {
  // Rounded to 100 ms, sorted by name (a small diff when the figures are measured again).
  const times = { ...committedTimes };
  for (const t of timings) times[t.name] = Math.round(t.ms / 100) * 100;
  const sorted = Object.fromEntries(Object.keys(times).sort().map((name) => [name, times[name]]));
  writeFileSync(committedTimesPath, `${JSON.stringify(sorted, null, 1)}\n`);
  process.stdout.write(`wrote the expected times of ${timings.length} files into test/times.json\n`);
}

const slowest = [...timings].sort((a, b) => b.ms - a.ms).slice(0, 10);
const allCpu = cpuMs();
process.stdout.write(
  `\n${files.length} test files (${shared.length + awsSdk.length} in ${batchesStarted} shared process${batchesStarted === 1 ? "" : "es"}, ${alone.length} alone) in ${seconds(Date.now() - started)} s; ` +
    `${seconds(Date.now() - runStarted)} s with the build and type check\n` +
    (allCpu === undefined ? "" : `CPU: ${seconds(testCpuMs)} s in the test processes and what they started; ${seconds(allCpu)} s with the build, type check and runner\n`),
);
if (slowest.length > 0) {
  const cpuColumn = (t) => (t.cpu === undefined ? "" : `${seconds(t.cpu).padStart(6)} s CPU`);
  process.stdout.write(`slowest files (wall, CPU):\n${slowest.map((t) => `  ${seconds(t.ms).padStart(6)} s ${cpuColumn(t)}  ${t.name}${t.shared ? " (shared)" : ""}`).join("\n")}\n`);
}
if (browserSkips.length > 0) {
  process.stdout.write(
    `\n${"!".repeat(78)}\n!! BROWSER TESTS SKIPPED in ${browserSkips.join(", ")}: no Chromium on this machine.\n` +
      `!! To run them: as root, apt-get update && apt-get install -y chromium (.ci/run does this),\n` +
      `!! or set OMNIBATCH_CHROMIUM to a Chromium or Chrome binary.\n${"!".repeat(78)}\n\n`,
  );
}
process.stdout.write(`${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ""}\n`);
process.exitCode = failed > 0 || (files.length === 0 && filters.length === 0) ? 1 : 0;
