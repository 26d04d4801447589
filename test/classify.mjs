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
//
// Files that use the AWS SDK (the product's S3 store, or s3rver through
// test/store/s3rverServer.ts, which says so with `test-runner: AWS SDK process`) and do
// nothing else of the above share processes of their own kind (`batch.mjs --aws-sdk`), never
// one with the other files: the SDK's first request sets an environment variable
// (src/store/S3Store.ts) and a global (awslambda), which such a process puts back as they
// were after each file, and s3rver patches node:crypto's DES for its list tokens.

import { existsSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";

export const OWN_PROCESS_MARK = "test-runner: own process";
export const AWS_SDK_MARK = "test-runner: AWS SDK process";

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
  [/globalThis\.[\w$]+\s*=(?!=)|\bglobal\.[\w$]+\s*=(?!=)|setGlobalDispatcher|http\.globalAgent|Date\.now\s*=(?!=)|Math\.random\s*=(?!=)/, "sets globals"],
];

/** What makes a file use the AWS SDK in its own process (see above). */
const USES_AWS_SDK = /src\/store\/(?:S3Store|openStoreReader)\.js/;

const IMPORT = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)["'](\.{1,2}\/[^"']+)["']/g;

/** The source file a relative import names, when it is a test helper (inside test/). */
const helperPath = (from, spec, testRoot) => {
  const base = resolve(dirname(from), spec);
  if (!base.startsWith(testRoot + sep)) return undefined;
  const candidates = [base, base.replace(/\.js$/, ".ts"), base.replace(/\.mjs$/, ".mts"), `${base}.ts`];
  return candidates.find((p) => existsSync(p) && !p.endsWith(".json"));
};

/** Follows `file` and the test helpers it imports until `why(text, where)` gives a reason. */
const findReason = (file, testRoot, why, seen = new Set()) => {
  if (seen.has(file)) return undefined;
  seen.add(file);
  const text = readFileSync(file, "utf8");
  const found = why(text, relative(dirname(testRoot), file));
  if (found) return found;
  for (const m of text.matchAll(IMPORT)) {
    const helper = helperPath(file, m[1], testRoot);
    const reason = helper && findReason(helper, testRoot, why, seen);
    if (reason) return reason;
  }
  return undefined;
};

/**
 * Why `file` needs its own process (a sentence naming the file that does it), or undefined
 * when it may share one. `testRoot` is the test/ folder; helpers outside it are not followed.
 */
export const ownProcessReason = (file, testRoot) =>
  findReason(file, testRoot, (text, where) => {
    if (text.includes(OWN_PROCESS_MARK)) return `${where} asks for its own process`;
    for (const [pattern, reason] of NEEDS_OWN_PROCESS) if (pattern.test(text)) return `${where} ${reason}`;
    return undefined;
  });

/** Why `file` uses the AWS SDK (a sentence naming the file), or undefined. */
export const awsSdkReason = (file, testRoot) =>
  findReason(file, testRoot, (text, where) => (text.includes(AWS_SDK_MARK) ? `${where} uses the AWS SDK` : USES_AWS_SDK.test(text) ? `${where} uses the AWS SDK (the S3 store)` : undefined));

/**
 * Test files split into those that may share a process, those that use the AWS SDK (they
 * share processes of their own kind) and those that run alone (with why).
 */
export const classify = (files, testRoot) => {
  const shared = [];
  const awsSdk = [];
  const alone = [];
  for (const file of files) {
    const why = ownProcessReason(file, testRoot);
    if (why) alone.push({ file, why });
    else if (awsSdkReason(file, testRoot)) awsSdk.push(file);
    else shared.push(file);
  }
  return { shared, awsSdk, alone };
};

export const testRootOf = (root) => join(root, "test");
