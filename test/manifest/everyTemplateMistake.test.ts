// `validate` reports every unknown name at once, each at its column, and no warning that
// follows from one of them: the demo (only the files it needs, in a temp folder) with
// `{{ brnd }} {{ product.nme }}` in the keyframes prompt and `{{ item.vars.stlye }}` in
// the clips prompt, run through the built CLI. Before, only `brnd` was reported (the job
// was then not expanded, nor the job made from it), with a false warning that `clips`
// has no price.

import { execa } from "execa";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { suite } from "uvu";
import * as assert from "uvu/assert";

const root = fileURLToPath(new URL("../..", import.meta.url));
const bin = join(root, "dist", "cli", "bin.js");

const t = suite("validate reports every template mistake");

/** The demo and the files it reads, copied; `edit` applied to its text. */
const demoCopy = (edit: (text: string) => string): { dir: string; file: string } => {
  const dir = mkdtempSync(join(tmpdir(), "omnibatch-templates-"));
  const m = join(dir, "manifests");
  mkdirSync(join(m, "data"), { recursive: true });
  cpSync(join(root, "manifests", "data", "products.csv"), join(m, "data", "products.csv"));
  cpSync(join(root, "manifests", "assets"), join(m, "assets"), { recursive: true });
  const text = readFileSync(join(root, "manifests", "demo.yaml"), "utf8");
  const edited = edit(text);
  assert.is.not(edited, text, "the demo changed shape: the edit found nothing");
  writeFileSync(join(m, "demo.yaml"), edited);
  return { dir, file: "manifests/demo.yaml" };
};

const validate = (dir: string, file: string) => execa("node", [bin, "validate", file], { cwd: dir, reject: false, env: { OMNIBATCH_API_KEY: "" } });

t("three misspelt names in two jobs: all three at their columns, and no price warning", async () => {
  const { dir, file } = demoCopy((text) =>
    text
      .replace("{{ brand }} {{ product.name }}", () => "{{ brnd }} {{ product.nme }}")
      .replace("{{ item.vars.style }}", () => "{{ item.vars.stlye }}"),
  );
  try {
    const r = await validate(dir, file);
    assert.is(r.exitCode, 2, r.stderr);
    const errors = r.stderr.split("\n").filter((l) => l.includes(": error: "));
    assert.equal(
      errors.map((l) => l.split(": error: ")[0]),
      ["manifests/demo.yaml:31:14", "manifests/demo.yaml:31:25", "manifests/demo.yaml:39:48"],
      r.stderr,
    );
    assert.match(errors[0]!, "unknown name 'brnd' in template");
    assert.match(errors[1]!, "'product' has no field 'nme'; it has: sku, name, photo");
    assert.match(errors[2]!, "'item.vars' has no field 'stlye'; it has: product, style");
    assert.not.match(r.stderr, ": warning: ");
    assert.match(r.stderr, "3 errors, 0 warnings");
    assert.not.match(r.stderr, /\n\s+at /);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

t("a misspelt field in each job, no unknown name: both reported, and no price warning follows from them", async () => {
  const { dir, file } = demoCopy((text) =>
    text.replace("{{ product.name }}", () => "{{ product.nme }}").replace("{{ item.vars.style }}", () => "{{ item.vars.stlye }}"),
  );
  try {
    const r = await validate(dir, file);
    assert.is(r.exitCode, 2, r.stderr);
    assert.match(r.stderr, "manifests/demo.yaml:31:26: error: 'product' has no field 'nme'");
    assert.match(r.stderr, "manifests/demo.yaml:39:48: error: 'item.vars' has no field 'stlye'");
    assert.match(r.stderr, "2 errors, 0 warnings");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

t("a job that really has no price is still warned about when nothing else is wrong", async () => {
  const { dir, file } = demoCopy((text) => text.replace('video: { "720p": 0.07, "1080p": 0.1 }', () => 'video: { "1080p": 0.1 }'));
  try {
    const r = await validate(dir, file);
    assert.is(r.exitCode, 0, r.stderr);
    assert.match(r.stderr, "warning: a budget is set, but job 'clips' has no price for its kind and resolution");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

t.run();
