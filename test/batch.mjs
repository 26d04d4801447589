// One Node process running several test files, one after another, for the test runner
// (test/run.mjs): started as `node --import tsx test/batch.mjs [--aws-sdk] FILE...`, or with `--stdin`
// to take the files one per line from its standard input as the runner hands them out (it
// ends when its input does). Each file is imported, then its suites (every `test.run()` it
// called) run before the next file is imported, as uvu's own CLI does for several files.
// Between files it prints marker lines the runner reads: `@@batch start FILE`, then the
// file's own uvu output, then `@@batch end FILE total passed skipped ms cpuMs` (cpuMs: the
// CPU time, user + system, of this process and of the child processes it waited for while
// the file ran). A file that throws while loading counts as broken (total 0 and a message);
// a file that never ends is stopped by the runner, which then runs the files after it in a
// new process.
//
// `--aws-sdk` first (the runner sends only files that use the AWS SDK to such a process,
// test/classify.mjs): after each file, the two things the SDK's first request leaves behind
// are put back as they were before the file, when they are exactly that (the variable
// AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED newly "true", which src/store/S3Store.ts
// sets; the global awslambda newly made, by @aws/lambda-invoke-store); so the next file starts
// as in a process of its own. Any other change fails the file as everywhere.

import { createInterface } from "node:readline";
import { pathToFileURL } from "node:url";
import { cpuMs } from "./cpuUsage.mjs";

globalThis.UVU_DEFER = 1;
globalThis.UVU_QUEUE = globalThis.UVU_QUEUE ?? [];
await import("uvu");

// What a file sharing the process must leave as it found it (test/classify.mjs sends here only
// files that look like they do): a change is a failure that says what changed.
const EVENTS = ["exit", "beforeExit", "SIGINT", "SIGTERM", "SIGHUP", "uncaughtException", "unhandledRejection", "warning"];
const processState = () => ({
  cwd: process.cwd(),
  env: { ...process.env },
  exitCode: process.exitCode,
  listeners: EVENTS.map((e) => `${e}:${process.listenerCount(e)}`).join(" "),
  // Libraries keep registries under names such as "effect/GlobalValue", made on first import.
  globals: Object.keys(globalThis)
    .filter((k) => !k.includes("/"))
    .sort()
    .join(" "),
});
const changes = (before, after) => {
  const found = [];
  if (before.cwd !== after.cwd) found.push(`the working folder (${before.cwd} -> ${after.cwd})`);
  const names = [...new Set([...Object.keys(before.env), ...Object.keys(after.env)])].filter((k) => before.env[k] !== after.env[k]);
  if (names.length > 0) found.push(`environment variables (${names.sort().join(", ")})`);
  if (before.exitCode !== after.exitCode) found.push(`the exit code (${before.exitCode} -> ${after.exitCode})`);
  if (before.listeners !== after.listeners) found.push(`process event handlers (${before.listeners} -> ${after.listeners})`);
  if (before.globals !== after.globals) {
    const was = new Set(before.globals.split(" "));
    const now = new Set(after.globals.split(" "));
    found.push(`globals (${[...[...now].filter((g) => !was.has(g)), ...[...was].filter((g) => !now.has(g)).map((g) => `-${g}`)].join(", ")})`);
  }
  return found;
};

/** The AWS SDK's first-request state, put back after each file in an `--aws-sdk` process. */
const SDK_ENV = "AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED";
const undoSdkFirstUse = (before) => {
  if (before.env[SDK_ENV] === undefined && process.env[SDK_ENV] === "true") delete process.env[SDK_ENV];
  if (!before.globals.split(" ").includes("awslambda") && "awslambda" in globalThis) delete globalThis.awslambda;
};
const args = process.argv.slice(2);
const awsSdk = args[0] === "--aws-sdk";
if (awsSdk) args.shift();

const write = (text) => new Promise((resolve) => process.stdout.write(text, () => resolve()));

/** The CPU milliseconds so far, children included where /proc tells (else this process's alone). */
const cpuNow = () => cpuMs() ?? (({ user, system }) => (user + system) / 1000)(process.cpuUsage());

const runFile = async (index, file) => {
  await write(`\n@@batch start ${file}\n`);
  const started = performance.now();
  const cpuBefore = cpuNow();
  globalThis.UVU_INDEX = index;
  globalThis.UVU_QUEUE[index] = [null];
  let total = 0;
  let passed = 0;
  let skipped = 0;
  let broken = false;
  const before = processState();
  try {
    await import(pathToFileURL(file).href);
    const group = globalThis.UVU_QUEUE[index];
    group.shift();
    for (const suite of group) {
      const [errors, ran, skip, max] = await suite();
      total += max;
      passed += ran;
      skipped += skip;
      if (errors !== true && errors.length) await write(`\n${errors}\n`);
    }
  } catch (error) {
    broken = true;
    await write(`\n${file} could not load or run: ${error?.stack ?? error}\n`);
  }
  globalThis.UVU_QUEUE[index] = [];
  if (awsSdk) undoSdkFirstUse(before);
  const changed = changes(before, processState());
  if (changed.length > 0) {
    broken = true;
    await write(
      `\n${file} changed process-wide state that the next files in its shared process would see: ${changed.join("; ")}. ` +
        `Undo it in the file, or give the file its own process with a comment "test-runner: own process".\n`,
    );
  }
  const ms = Math.round(performance.now() - started);
  const cpu = Math.round(cpuNow() - cpuBefore);
  await write(`\n@@batch end ${file} ${total} ${passed} ${skipped} ${ms} ${cpu}${broken ? " broken" : ""}\n`);
};

if (args[0] === "--stdin") {
  let index = 0;
  for await (const line of createInterface({ input: process.stdin })) if (line.trim()) await runFile(index++, line.trim());
} else {
  for (const [index, file] of args.entries()) await runFile(index, file);
}
// A file may leave a handle open (an idle keep-alive socket): the batch is done all the same.
process.exit(0);
