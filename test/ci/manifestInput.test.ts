// The Action's `manifest` input (src/ci/manifestInput.ts): how it splits, how a pattern
// matches, and that no pattern leaves the repository; expansion on a real folder.

import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { expandManifestInput, inside, ManifestInputError, patternStart, segmentRegExp, splitManifestInput } from "../../src/ci/manifestInput.js";

const t = suite("the Action's manifest input");

t("lines and spaces separate manifests; a line naming an existing file stays whole (a path with spaces)", () => {
  const files = new Set(["batches/a b.yaml"]);
  const isFile = (p: string) => files.has(p);
  assert.equal(splitManifestInput("manifests/spring.yaml", isFile), ["manifests/spring.yaml"]);
  assert.equal(splitManifestInput(" a.yaml  b.yaml\n\n  c.yaml \r\n", isFile), ["a.yaml", "b.yaml", "c.yaml"]);
  assert.equal(splitManifestInput("batches/a b.yaml\nmanifests/*.yaml", isFile), ["batches/a b.yaml", "manifests/*.yaml"]);
});

t("a segment pattern: * and ? within a name, classes, everything else literal", () => {
  const re = segmentRegExp("*.yaml");
  assert.ok(re.test("spring.yaml"));
  assert.ok(re.test(".yaml"));
  assert.not.ok(re.test("spring.yml"));
  assert.not.ok(re.test("springXyaml"), "the dot is literal");
  assert.ok(segmentRegExp("s?ring.y*ml").test("spring.yaml"));
  assert.ok(segmentRegExp("[ab]*.yaml").test("a1.yaml"));
  assert.not.ok(segmentRegExp("[ab]*.yaml").test("c1.yaml"));
  assert.ok(segmentRegExp("[!ab]*.yaml").test("c1.yaml"));
  assert.ok(segmentRegExp("(x)+$.yaml").test("(x)+$.yaml"));
});

t("a pattern that leaves the repository is refused: .. past the root, an absolute path elsewhere, .. after the first glob", () => {
  const root = "/repo";
  assert.equal(patternStart("manifests/*.yaml", root, root), { base: "/repo/manifests", rest: ["*.yaml"] });
  assert.equal(patternStart("/repo/m/*.yaml", root, root).base, "/repo/m");
  assert.equal(patternStart("m/../n/*.yaml", root, root).base, "/repo/n");
  for (const bad of ["../*.yaml", "../other/*.yaml", "/etc/*.yaml", "/*.yaml", "m/*/../../../x.yaml", "/repo-other/*.yaml"]) {
    assert.throws(() => patternStart(bad, root, root), (e: unknown) => e instanceof ManifestInputError && e.message.includes(`'${bad}' reaches outside the repository`), bad);
  }
  assert.ok(inside("/repo", "/repo"));
  assert.ok(inside("/repo", "/repo/a/b"));
  assert.not.ok(inside("/repo", "/repo2"));
  assert.not.ok(inside("/repo", "/"));
});

t("expansion on a folder: sorted matches per pattern, each once, review files and symbolic links left out, ** through folders; nothing matched is an error naming the pattern", () => {
  const root = mkdtempSync(join(tmpdir(), "omnibatch-input-"));
  try {
    const outside = mkdtempSync(join(tmpdir(), "omnibatch-outside-"));
    writeFileSync(join(outside, "x.yaml"), "");
    for (const f of ["manifests/spring.yaml", "manifests/autumn.yaml", "manifests/autumn.review.yaml", "manifests/old/winter.yaml", "manifests/notes.txt", "node_modules/p/x.yaml", "a b.yaml"]) {
      mkdirSync(dirname(join(root, f)), { recursive: true });
      writeFileSync(join(root, f), "");
    }
    symlinkSync(join(outside, "x.yaml"), join(root, "manifests/linked.yaml"));
    symlinkSync(outside, join(root, "manifests/away"));
    assert.equal(expandManifestInput("manifests/*.yaml", root, root), ["manifests/autumn.yaml", "manifests/spring.yaml"]);
    assert.equal(expandManifestInput("manifests/spring.yaml manifests/*.yaml", root, root), ["manifests/spring.yaml", "manifests/autumn.yaml"]);
    assert.equal(expandManifestInput("**/*.yaml", root, root), ["a b.yaml", "manifests/autumn.yaml", "manifests/old/winter.yaml", "manifests/spring.yaml"]);
    assert.equal(expandManifestInput("a b.yaml", root, root), ["a b.yaml"]);
    assert.equal(expandManifestInput("missing.yaml", root, root), ["missing.yaml"], "a plain path goes on as written (the run says it is missing)");
    assert.throws(() => expandManifestInput("manifests/*.yml", root, root), (e: unknown) => e instanceof ManifestInputError && e.message.includes("'manifests/*.yml' matches no file"));
    assert.throws(() => expandManifestInput("manifests/away/*.yaml", root, root), (e: unknown) => e instanceof ManifestInputError && e.message.includes("matches no file"), "a linked folder is not followed");
    assert.throws(() => expandManifestInput(`${outside}/*.yaml`, root, root), (e: unknown) => e instanceof ManifestInputError && e.message.includes("reaches outside"));
    rmSync(outside, { recursive: true, force: true });
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

t.run();
