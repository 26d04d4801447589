// The test command (`npm test`): builds, type-checks, then runs every uvu test file
// (test/**/*.test.ts) in its own Node process, two at a time, each with a time limit,
// and ends with the line `N passed, N failed`. Browser tests (test/browser) need a
// Chromium; without one they are counted as skipped and a loud notice says how to run them.
//
//   npm test                 all tests
//   npm test -- emulator     only files whose path contains "emulator"

import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { execa } from "execa";
import pLimit from "p-limit";

const root = fileURLToPath(new URL("..", import.meta.url));
const filters = process.argv.slice(2);
const fileTimeoutMs = Number(process.env.OMNIBATCH_TEST_TIMEOUT_MS ?? 300_000);
const parallel = Number(process.env.OMNIBATCH_TEST_JOBS ?? 2);

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
  process.stdout.write(`${label}: ok (${((Date.now() - started) / 1000).toFixed(1)} s)\n`);
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

// `npm run build`: tsc, then the CLI bundle (scripts/bundleCli.mjs) that the CLI tests run.
const built = (await step("build", "npm", ["run", "--silent", "build"])) && (await step("typecheck", "tsc", ["-p", "tsconfig.json", "--noEmit"]));
if (!built) failed += 1;

const files = findTests(join(root, "test"))
  .filter((file) => filters.length === 0 || filters.some((f) => relative(root, file).includes(f)))
  .sort();

// Settled stamps (src/state/settledCache.ts) of the runs the tests make go to a folder of this
// test run, removed at the end, not to the user's ~/.cache (unless a test names its own).
const cacheDir = process.env.OMNIBATCH_CACHE_DIR ? undefined : mkdtempSync(join(tmpdir(), "omnibatch-test-cache-"));
if (cacheDir) process.env.OMNIBATCH_CACHE_DIR = cacheDir;

const limit = pLimit(parallel);
const started = Date.now();
await Promise.all(
  files.map((file) =>
    limit(async () => {
      const name = relative(root, file);
      const t0 = Date.now();
      const result = await execa("node", ["--import", "tsx", file], {
        cwd: root,
        reject: false,
        all: true,
        timeout: fileTimeoutMs,
        env: { FORCE_COLOR: "0", NO_COLOR: "1", ...(cacheDir ? { OMNIBATCH_CACHE_DIR: cacheDir } : {}) },
      });
      const c = counts(result.all ?? "");
      // uvu's Total counts the tests that ran: skipped ones are not in it.
      const fileFailed = c.total - c.passed;
      if ((result.all ?? "").includes("BROWSER TESTS SKIPPED")) browserSkips.push(name);
      const broken = result.exitCode !== 0 && fileFailed === 0;
      passed += c.passed;
      skipped += c.skipped;
      failed += fileFailed + (broken ? 1 : 0);
      const secs = ((Date.now() - t0) / 1000).toFixed(1);
      if (fileFailed > 0 || broken) {
        const why = result.timedOut ? ` (timed out after ${fileTimeoutMs / 1000} s)` : "";
        process.stdout.write(`\nFAIL ${name}${why} [${secs} s]\n${result.all}\n`);
      } else {
        process.stdout.write(`ok   ${name}: ${c.passed} passed${c.skipped ? `, ${c.skipped} skipped` : ""} [${secs} s]\n`);
      }
    }),
  ),
);

if (cacheDir) rmSync(cacheDir, { recursive: true, force: true });
process.stdout.write(`\n${files.length} test files in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
if (browserSkips.length > 0) {
  process.stdout.write(
    `\n${"!".repeat(78)}\n!! BROWSER TESTS SKIPPED in ${browserSkips.join(", ")}: no Chromium on this machine.\n` +
      `!! To run them: as root, apt-get update && apt-get install -y chromium (.ci/run does this),\n` +
      `!! or set OMNIBATCH_CHROMIUM to a Chromium or Chrome binary.\n${"!".repeat(78)}\n\n`,
  );
}
process.stdout.write(`${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ""}\n`);
process.exitCode = failed > 0 || (files.length === 0 && filters.length === 0) ? 1 : 0;
