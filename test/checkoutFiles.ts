// The checkout's committed example files, for tests, copied by name into a folder of the
// test's own. No test copies or lists manifests/, examples/ or outputs/ as a whole: a user's
// commands in the checkout leave files there (README's set-up runs the demo in the checkout,
// which writes manifests/demo.emulate.lock.json, demo.emulate.state.json and
// outputs/demo-emulated/; review writes a review file beside the manifest), and a copied
// folder would carry them into the test. A test that needs every example takes the files git
// holds (`committedFiles`). test/ci/checkoutFiles.test.ts holds the tests to this.

import { execFileSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** The checkout (the repository's root folder). */
export const checkoutRoot = fileURLToPath(new URL("..", import.meta.url));

/** The demo manifest and every file it reads (its CSV and the photos the CSV names), relative to manifests/. */
export const DEMO_FILES = ["demo.yaml", "data/products.csv", "assets/mug.png", "assets/lamp.png", "assets/chair.png"] as const;

/**
 * The files git holds under `folder` of the checkout (`root`), as paths inside it: what a
 * clone has there before any command of a user's ran.
 */
export const committedFiles = (folder: string, root: string = checkoutRoot): string[] =>
  execFileSync("git", ["ls-files", "-z", "--", folder], { cwd: root, encoding: "utf8" })
    .split("\0")
    .filter(Boolean)
    .map((p) => p.slice(folder.length + 1));

/** Copies the named files of the checkout's manifests/ (paths inside it) to `dir`/manifests; returns that folder. */
export const copyManifests = (dir: string, names: readonly string[] = DEMO_FILES, root: string = checkoutRoot): string => {
  const to = join(dir, "manifests");
  for (const name of names) {
    mkdirSync(dirname(join(to, name)), { recursive: true });
    cpSync(join(root, "manifests", name), join(to, name));
  }
  return to;
};

/** A new temp folder (named with `prefix`) holding manifests/ with the demo and its files; returns the folder. */
export const demoCopy = (prefix = "omnibatch-demo-"): string => {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  copyManifests(dir);
  return dir;
};

/**
 * `demoCopy` with `review: true` on the stills (`keyframes`), as README's tour has the user
 * add it; returns the folder and its removal. Throws when the demo no longer has that job.
 */
export const reviewedDemoCopy = (prefix = "omnibatch-reviewed-demo-"): { dir: string; remove: () => void } => {
  const dir = demoCopy(prefix);
  const file = join(dir, "manifests", "demo.yaml");
  const demo = readFileSync(file, "utf8");
  if (!/\n {2}keyframes:\n/.test(demo)) throw new Error("manifests/demo.yaml has no 'keyframes:' job to put under review");
  writeFileSync(file, demo.replace(/\n {2}keyframes:\n/, "\n  keyframes:\n    review: true\n"));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
};
