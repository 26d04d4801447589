// The test runner's parts (test/run.mjs): which files may share a process
// (test/classify.mjs), and the shared process itself (test/batch.mjs), run on small test
// files written here (under test/.tmp, which the runner does not collect): each file's
// counts and time between markers, a failing file, a file that cannot load, and a file that
// changes process-wide state, which fails saying so.

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { execa } from "execa";
import { suite } from "uvu";
import * as assert from "uvu/assert";
// @ts-expect-error: a plain ES module of the runner, without types
import { classify } from "../classify.mjs";
import { checkoutRoot } from "../checkoutFiles.js";

const testRoot = join(checkoutRoot, "test");
const t = suite("the test runner");
let dir = "";
t.before(() => {
  mkdirSync(join(testRoot, ".tmp"), { recursive: true });
  dir = mkdtempSync(join(testRoot, ".tmp", "runner-"));
});
t.after(() => rmSync(dir, { recursive: true, force: true }));

const file = (name: string, text: string): string => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};
const uvuFile = (body: string) => `import { test } from "uvu";\nimport * as assert from "uvu/assert";\n${body}\ntest.run();\n`;

t("classify: pure files and files that start child processes share; files using the AWS SDK (also through a helper, or marked) share only with each other; env writes, process events and the mark, also through a helper, run alone, an AWS SDK file that sets the environment too", () => {
  const pure = file("pure.test.ts", uvuFile(`import { x } from "./pureHelper.js";\ntest("a", () => assert.is(x, 1));\nconst home = process.env["HOME"];`));
  file("pureHelper.ts", "export const x = 1;\n");
  const spawns = file("spawns.test.ts", uvuFile(`import { execa } from "execa";`));
  file("envHelper.ts", `export const set = () => { process.env["X"] = "1"; };\n`);
  const viaHelper = file("viaHelper.test.ts", uvuFile(`import { set } from "./envHelper.js";`));
  const listens = file("signals.test.ts", uvuFile(`process.on("SIGINT", () => {});`));
  const aws = file("aws.test.ts", uvuFile(`import { openS3Store } from "../../../src/store/S3Store.js";`));
  file("s3Helper.ts", "// test-runner: AWS SDK process (it says why)\nexport const y = 2;\n");
  const awsViaHelper = file("awsViaHelper.test.ts", uvuFile(`import { y } from "./s3Helper.js";`));
  const awsAndEnv = file("awsAndEnv.test.ts", uvuFile(`import { openS3Store } from "../../../src/store/S3Store.js";\nimport { set } from "./envHelper.js";`));
  const marked = file("marked.test.ts", uvuFile("// test-runner: own process (it says why)"));
  const { shared, awsSdk, alone } = classify([pure, spawns, viaHelper, listens, aws, awsViaHelper, awsAndEnv, marked], testRoot) as { shared: string[]; awsSdk: string[]; alone: { file: string; why: string }[] };
  assert.equal(shared, [pure, spawns]);
  assert.equal(awsSdk, [aws, awsViaHelper]);
  const why = Object.fromEntries(alone.map((a) => [a.file, a.why]));
  assert.equal(Object.keys(why).sort(), [viaHelper, listens, awsAndEnv, marked].sort());
  assert.match(why[viaHelper]!, /envHelper\.ts sets environment variables/);
  assert.match(why[listens]!, "process events");
  assert.match(why[awsAndEnv]!, /envHelper\.ts sets environment variables/);
  assert.match(why[marked]!, "asks for its own process");
});

for (const mode of ["arguments", "--stdin"] as const) {
  t(`batch (files as ${mode === "--stdin" ? "lines on its standard input" : "arguments"}): each file's counts, time and CPU between markers; a failure, a file that cannot load and a change to the environment are reported per file`, async () => {
    const ok = file("ok.test.ts", uvuFile(`test("one", () => assert.ok(true));\ntest("two", () => assert.ok(true));`));
    const bad = file("bad.test.ts", uvuFile(`test("fails", () => assert.is(1, 2, "one is not two"));\ntest("passes", () => {});`));
    const broken = file("broken.test.ts", `import "./no-such-module.js";\n`);
    const leaky = file("leaky.test.ts", uvuFile(`test("sets", () => { process.env["OMNIBATCH_LEAK"] = "1"; });`));
    const after = file("after.test.ts", uvuFile(`test("clean", () => assert.is(process.env["OMNIBATCH_LEAK"], "1"));`));
    const files = [ok, bad, broken, leaky, after];
    const args = mode === "--stdin" ? ["--stdin"] : files;
    const input = mode === "--stdin" ? `${files.join("\n")}\n` : undefined;
    const r = await execa("node", ["--import", "tsx", join(testRoot, "batch.mjs"), ...args], { cwd: checkoutRoot, reject: false, all: true, env: { NO_COLOR: "1" }, ...(input ? { input } : {}) });
    assert.is(r.exitCode, 0, r.all);
    const ends = Object.fromEntries([...r.all.matchAll(/^@@batch end (\S+) (\d+) (\d+) (\d+) (\d+) (\d+)( broken)?$/gm)].map((m) => [m[1], [m[2], m[3], m[4], m[7] ?? ""]]));
    assert.equal(ends[ok], ["2", "2", "0", ""]);
    assert.equal(ends[bad], ["2", "1", "0", ""]);
    assert.equal(ends[broken], ["0", "0", "0", " broken"]);
    assert.equal(ends[leaky], ["1", "1", "0", " broken"]);
    assert.equal(ends[after], ["1", "1", "0", ""], "the next file still runs (and sees the change: that is why it fails the leaky file)");
    assert.match(r.all, "one is not two");
    assert.match(r.all, /leaky\.test\.ts changed process-wide state .*environment variables \(OMNIBATCH_LEAK\)/);
    assert.is([...r.all.matchAll(/^@@batch start /gm)].length, 5);
  });
}

t("batch --aws-sdk: the AWS SDK's first-request variable and global are put back after each file (the next file sees neither); any other change still fails the file", async () => {
  const sdkLike = file("sdkLike.test.ts", uvuFile(`test("first request", () => { process.env["AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED"] ??= "true"; (globalThis as Record<string, unknown>)["awslambda"] = {}; });`));
  const sees = file("sees.test.ts", uvuFile(`test("fresh", () => { assert.is(process.env["AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED"], undefined); assert.not.ok("awslambda" in globalThis); });`));
  const other = file("other.test.ts", uvuFile(`test("sets", () => { process.env["AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED"] = "false"; process.env["OMNIBATCH_LEAK2"] = "1"; });`));
  const files = [sdkLike, sees, other];
  const r = await execa("node", ["--import", "tsx", join(testRoot, "batch.mjs"), "--aws-sdk", ...files], { cwd: checkoutRoot, reject: false, all: true, env: { NO_COLOR: "1" } });
  assert.is(r.exitCode, 0, r.all);
  const ends = Object.fromEntries([...r.all.matchAll(/^@@batch end (\S+) (\d+) (\d+) (\d+) (\d+) (\d+)( broken)?$/gm)].map((m) => [m[1], [m[2], m[3], m[4], m[7] ?? ""]]));
  assert.equal(ends[sdkLike], ["1", "1", "0", ""]);
  assert.equal(ends[sees], ["1", "1", "0", ""], "the next file starts without the SDK's variable and global");
  assert.equal(ends[other], ["1", "1", "0", " broken"]);
  assert.match(r.all, /other\.test\.ts changed process-wide state .*environment variables \(AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED, OMNIBATCH_LEAK2\)/);
  // Without --aws-sdk, the same file is caught.
  const plain = await execa("node", ["--import", "tsx", join(testRoot, "batch.mjs"), sdkLike], { cwd: checkoutRoot, reject: false, all: true, env: { NO_COLOR: "1" } });
  assert.match(plain.all, /sdkLike\.test\.ts changed process-wide state .*environment variables \(AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED\); globals \(awslambda\)/);
});

t.run();
