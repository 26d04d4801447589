// Tests that a user's runs in the checkout cannot break (issue 28): README's set-up runs the
// demo in the checkout, which leaves a lockfile and the emulator's state beside the manifest
// and results under outputs/; review and a user's own manifests leave more. The tests take
// the checkout's example files by name or as git holds them (test/checkoutFiles.ts): here,
// in a repository of its own with those leftovers, the helpers copy only the committed
// files; and no test file lists or copies the checkout's manifests/, outputs/ or examples/
// folder itself.

import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { checkoutRoot, committedFiles, copyManifests } from "../checkoutFiles.js";

const t = suite("tests read only the checkout's committed files");

const filesUnder = (dir: string): string[] =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });

t("after a user's runs left a lockfile, the emulator's state, a review file, a manifest of their own and outputs: the helpers copy only what git holds", () => {
  const repo = mkdtempSync(join(tmpdir(), "omnibatch-checkout-"));
  const copy = mkdtempSync(join(tmpdir(), "omnibatch-checkout-copy-"));
  try {
    const put = (path: string, text: string) => {
      mkdirSync(dirname(join(repo, path)), { recursive: true });
      writeFileSync(join(repo, path), text);
    };
    put("manifests/demo.yaml", "name: demo\n");
    put("manifests/data/products.csv", "sku\nA\n");
    const git = (...args: string[]) => execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@example.com", ...args], { cwd: repo, stdio: "pipe" });
    git("init", "-q");
    git("add", "-A");
    git("commit", "-q", "-m", "examples");
    // What README's set-up, a second run, review and a user's own work leave in the checkout.
    for (const left of [
      "manifests/demo.emulate.lock.json",
      "manifests/demo.emulate.state.json",
      "manifests/demo.lock.json",
      "manifests/demo.lock.json.journal",
      "manifests/demo.emulate.review.yaml",
      "manifests/mine.yaml",
      "manifests/data/extra.csv",
      "outputs/demo-emulated/keyframes/a.png",
    ])
      put(left, "left by a user's command\n");
    const committed = committedFiles("manifests", repo);
    assert.equal(committed.sort(), ["data/products.csv", "demo.yaml"]);
    copyManifests(copy, committed, repo);
    assert.equal(filesUnder(copy).map((f) => relative(copy, f)).sort(), ["manifests/data/products.csv", "manifests/demo.yaml"]);
  } finally {
    rmSync(repo, { recursive: true, force: true });
    rmSync(copy, { recursive: true, force: true });
  }
});

// A folder of the checkout that a user's commands write into, named as the tests name it.
const FOLDER = String.raw`(?:manifests|outputs|examples)`;
const folderConst = new RegExp(String.raw`const (\w+) = (?:fileURLToPath\()?new URL\(["'](?:\.\./)+${FOLDER}/?["'], import\.meta\.url\)|const (\w+) = join\(checkoutRoot, ["']${FOLDER}["']\)`, "g");
const LISTS_OR_COPIES = String.raw`\b(?:cpSync|cp|readdirSync|readdir|opendirSync|opendir|globSync|glob)\(\s*`;
const inline = new RegExp(String.raw`${LISTS_OR_COPIES}(?:fileURLToPath\()?(?:new URL\(["'](?:\.\./)+${FOLDER}/?["']|join\(checkoutRoot, ["']${FOLDER}["']\s*\))`);

/** Where a test's source lists or copies one of the checkout's folders itself, or undefined. */
const wholeFolderUse = (text: string): string | undefined => {
  if (inline.test(text)) return inline.exec(text)![0];
  for (const m of text.matchAll(folderConst)) {
    const name = m[1] ?? m[2]!;
    const use = new RegExp(`${LISTS_OR_COPIES}${name}\\b`).exec(text);
    if (use) return `${m[0]} ... ${use[0]}`;
  }
  return undefined;
};

t("the rule sees a whole folder copied or listed, and lets a named file of it be read", () => {
  assert.ok(wholeFolderUse(`const manifests = fileURLToPath(new URL("../../manifests", import.meta.url));\ncpSync(manifests, join(dir, "manifests"), { recursive: true });`));
  assert.ok(wholeFolderUse(`const m = fileURLToPath(new URL("../../manifests", import.meta.url));\nfor (const f of readdirSync(m)) {}`));
  assert.ok(wholeFolderUse(`await cp(join(checkoutRoot, "outputs"), to, { recursive: true });`));
  assert.not.ok(wholeFolderUse(`const dir = fileURLToPath(new URL("../../manifests", import.meta.url));\nreadFileSync(join(dir, "demo.yaml"), "utf8");`));
  assert.not.ok(wholeFolderUse(`cpSync(join(root, "manifests"), join(runner, "manifests"), { recursive: true });`), "a test's own folder");
});

t("no test file lists or copies the checkout's manifests/, outputs/ or examples/ folder itself", () => {
  const testRoot = join(checkoutRoot, "test");
  const sources = filesUnder(testRoot).filter((f) => /\.(ts|mjs)$/.test(f) && !relative(testRoot, f).startsWith(".tmp") && !f.endsWith("checkoutFiles.ts") && !f.endsWith("checkoutFiles.test.ts"));
  assert.ok(sources.length > 100, `${sources.length} test sources`);
  const found = sources.flatMap((f) => {
    const use = wholeFolderUse(readFileSync(f, "utf8"));
    return use ? [`${relative(checkoutRoot, f)}: ${use}`] : [];
  });
  assert.equal(found, [], "copy the files needed by name (test/checkoutFiles.ts copyManifests), or those git holds (committedFiles)");
});

t.run();
