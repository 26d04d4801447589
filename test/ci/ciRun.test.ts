// CI (.ci/run) does what README's set-up tells a newcomer to do: the same command lines, as
// written, in the same order, in the checkout, and nothing else that installs, runs the
// CLI or tests. Both files are read as text: README's `sh` blocks of its set-up section
// (up to the next heading), and the `readme '...'` lines of .ci/run.

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { checkoutRoot } from "../checkoutFiles.js";

/** The command lines of README's set-up section's `sh` blocks, in order, trailing comments removed. */
const readmeSetup = (readme: string): string[] => {
  const heading = /^##+ Set-up\b.*$/m.exec(readme);
  if (!heading) throw new Error("README has no set-up section (a heading starting 'Set-up')");
  const rest = readme.slice(heading.index + heading[0].length);
  const next = /^##+ /m.exec(rest);
  const section = next ? rest.slice(0, next.index) : rest;
  const blocks = [...section.matchAll(/```sh\n([\s\S]*?)```/g)];
  if (blocks.length === 0) throw new Error("README's set-up section has no ```sh block");
  return blocks
    .flatMap((b) => b[1]!.split("\n"))
    .map((line) => line.replace(/\s+#.*$/, "").trim())
    .filter((line) => line.length > 0 && !line.startsWith("#"));
};

/** The commands .ci/run runs as README's: its `readme '...'` lines, in order. */
const ciCommands = (script: string): string[] => [...script.matchAll(/^readme '([^']*)'/gm)].map((m) => m[1]!);

/** Lines of .ci/run, comments and `readme` lines aside, that install, run the CLI or run tests. */
const otherRuns = (script: string): string[] =>
  script
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => !line.startsWith("#") && !line.startsWith("readme ") && !line.startsWith("echo "))
    .filter((line) => /\b(npm|npx|omnibatch|node)\b/.test(line));

const readme = readFileSync(join(checkoutRoot, "README.md"), "utf8");
const script = readFileSync(join(checkoutRoot, ".ci", "run"), "utf8");

test("README's set-up is the install with the demo on the emulator, then the tests", () => {
  assert.equal(readmeSetup(readme), ["npm ci && npx omnibatch run manifests/demo.yaml --emulate", "npm test"]);
});

test(".ci/run runs README's set-up commands as written, in its order, and no other install, CLI run or test run", () => {
  assert.equal(ciCommands(script), readmeSetup(readme));
  assert.equal(otherRuns(script), []);
});

test("the readers see a difference: another command, another order, an extra run", () => {
  const setup = "## Set-up on a fresh machine\n\n```sh\nnpm ci   # install\nnpm test\n```\n";
  assert.equal(readmeSetup(setup), ["npm ci", "npm test"]);
  assert.not.equal(ciCommands("readme 'npm test'\nreadme 'npm ci'\n"), readmeSetup(setup));
  assert.not.equal(ciCommands("readme 'npm ci --no-audit'\nreadme 'npm test'\n"), readmeSetup(setup));
  assert.equal(otherRuns("readme 'npm ci'\n  npx omnibatch run \"$work/manifests/demo.yaml\" --emulate --yes\n# npm test\n"), [
    'npx omnibatch run "$work/manifests/demo.yaml" --emulate --yes',
  ]);
  assert.throws(() => readmeSetup("# omnibatch\n\n```sh\nnpm ci\n```\n"), /no set-up section/);
});

test.run();
