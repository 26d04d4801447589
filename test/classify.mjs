// Which test files may share one Node process (test/batch.mjs) and which need their own, for
// the test runner (test/run.mjs). The rule is read from the source, so a new test file is
// classified without anyone listing it: a file runs in its own process when it, or a test
// helper it imports (relative imports inside test/, followed through), starts a browser or
// touches process-wide state (environment variables, the working folder, process event
// handlers or signals, the exit code, the standard streams, globals). Everything else
// shares: pure code, in-process servers on port 0 that the file closes, TestClock, and child
// processes (the CLI, a lockfile writer) that the file waits for, whose own state is theirs.
// A file can ask for its own process in words: a comment `test-runner: own process`. A
// shared file that leaves process-wide state changed after all is caught by test/batch.mjs
// and fails, saying so.

import { existsSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";

export const OWN_PROCESS_MARK = "test-runner: own process";

/** What makes a file need its own process, each with the reason the runner can print. */
const NEEDS_OWN_PROCESS = [
  [/worker_threads/, "starts worker threads"],
  [/playwright|chromium/i, "starts a browser"],
  [/process\.chdir\(|process\.umask\(/, "changes the working folder or umask"],
  [
    /process\.env(?:\.[A-Za-z_$][\w$]*|\[[^\]]+\])\s*(?:=(?!=)|\?\?=|\|\|=|&&=)|delete\s+process\.env|Object\.assign\(\s*process\.env|process\.env\s*=(?!=)/,
    "sets environment variables",
  ],
  [/process\.(?:on|once|off|addListener|prependListener|prependOnceListener|removeListener|removeAllListeners|emit|kill|exit|abort|setUncaughtExceptionCaptureCallback)\(/, "handles or sends process events, or exits"],
  [/process\.exitCode|process\.std(?:in|out|err)\.[\w$]+\s*=(?!=)|process\.stdin\b/, "uses the process's exit code or standard streams"],
  [/src\/store\/(?:S3Store|openStoreReader)\.js/, "uses the AWS SDK (which sets an environment variable and a global on its first request)"],
  [/globalThis\.[\w$]+\s*=(?!=)|\bglobal\.[\w$]+\s*=(?!=)|setGlobalDispatcher|http\.globalAgent|Date\.now\s*=(?!=)|Math\.random\s*=(?!=)/, "sets globals"],
];

const IMPORT = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)["'](\.{1,2}\/[^"']+)["']/g;

/** The source file a relative import names, when it is a test helper (inside test/). */
const helperPath = (from, spec, testRoot) => {
  const base = resolve(dirname(from), spec);
  if (!base.startsWith(testRoot + sep)) return undefined;
  const candidates = [base, base.replace(/\.js$/, ".ts"), base.replace(/\.mjs$/, ".mts"), `${base}.ts`];
  return candidates.find((p) => existsSync(p) && !p.endsWith(".json"));
};

/**
 * Why `file` needs its own process (a sentence naming the file that does it), or undefined
 * when it may share one. `testRoot` is the test/ folder; helpers outside it are not followed.
 */
export const ownProcessReason = (file, testRoot, seen = new Set()) => {
  if (seen.has(file)) return undefined;
  seen.add(file);
  const text = readFileSync(file, "utf8");
  const where = relative(dirname(testRoot), file);
  if (text.includes(OWN_PROCESS_MARK)) return `${where} asks for its own process`;
  for (const [pattern, reason] of NEEDS_OWN_PROCESS) if (pattern.test(text)) return `${where} ${reason}`;
  for (const m of text.matchAll(IMPORT)) {
    const helper = helperPath(file, m[1], testRoot);
    const why = helper && ownProcessReason(helper, testRoot, seen);
    if (why) return why;
  }
  return undefined;
};

/** Test files split into those that may share a process and those that run alone (with why). */
export const classify = (files, testRoot) => {
  const shared = [];
  const alone = [];
  for (const file of files) {
    const why = ownProcessReason(file, testRoot);
    if (why) alone.push({ file, why });
    else shared.push(file);
  }
  return { shared, alone };
};

export const testRootOf = (root) => join(root, "test");
