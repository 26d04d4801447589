// The invalid-manifest corpus (test/fixtures/manifests/invalid): every file states in
// its header the `line:col` and message fragment(s) it must produce (`# expect:`), as
// `[datafile:]line:col fragment`. Each must be reported exactly there, and the manifest
// must be refused (ManifestInvalid, exit 2).
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { ManifestInvalid, type Diagnostic } from "../../src/manifest/Diagnostic.js";
import { loadManifest } from "../../src/manifest/loadManifest.js";

const dir = fileURLToPath(new URL("../fixtures/manifests/invalid", import.meta.url));
const files = readdirSync(dir).filter((f) => f.endsWith(".yaml")).sort();
const corpus = suite("invalid manifest corpus");

interface Expectation {
  readonly file: string;
  readonly line: number;
  readonly col: number;
  readonly fragment: string;
}

const expectations = (name: string, text: string): Expectation[] =>
  [...text.matchAll(/^# expect: (?:(\S+):)?(\d+):(\d+) (.+)$/gm)].map((m) => ({
    file: m[1] ?? name,
    line: Number(m[2]),
    col: Number(m[3]),
    fragment: m[4]!,
  }));

corpus("the corpus holds at least 60 invalid manifests, each with expectations", () => {
  assert.ok(files.length >= 60, `${files.length} files`);
  for (const f of files) assert.ok(expectations(f, readFileSync(join(dir, f), "utf8")).length > 0, f);
});

for (const name of files) {
  corpus(`${name} is refused at the stated line:col with the stated message`, async () => {
    const expected = expectations(name, readFileSync(join(dir, name), "utf8"));
    let diagnostics: readonly Diagnostic[] = [];
    try {
      await loadManifest(join(dir, name), { cwd: dir });
      assert.unreachable(`${name} was accepted`);
    } catch (error) {
      if (!(error instanceof ManifestInvalid)) throw error;
      diagnostics = error.diagnostics;
      assert.ok(error.message.includes("error"), "the message is the formatted report");
    }
    const shown = diagnostics.map((d) => `${d.file}:${d.line}:${d.col}: ${d.message}`).join("\n");
    for (const e of expected) {
      const hit = diagnostics.some(
        (d) => d.file === e.file && d.line === e.line && d.col === e.col && d.message.includes(e.fragment),
      );
      assert.ok(hit, `expected ${e.file}:${e.line}:${e.col} "${e.fragment}", got:\n${shown}`);
    }
  });
}

corpus.run();
