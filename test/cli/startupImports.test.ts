// What a start loads (README "Performance"): `--help` and `validate` must not load the
// whole of Effect (the `effect` barrel costs about 450 ms of CPU at start), only the
// small modules they use (`effect/Data`, `effect/BigDecimal`...). Checked on the built
// CLI by following its static imports from each entry point.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const dist = fileURLToPath(new URL("../../dist/", import.meta.url));

/** Every module reached by static `import ... from` / `export ... from` (not `await import()`). */
const reached = (entry: string): { files: Set<string>; bare: Set<string>; via: Map<string, string> } => {
  const files = new Set<string>();
  const bare = new Set<string>();
  const via = new Map<string, string>();
  const queue = [entry];
  while (queue.length > 0 && files.size < 2_000) {
    const file = queue.pop()!;
    if (files.has(file)) continue;
    files.add(file);
    const text = readFileSync(file, "utf8");
    for (const m of text.matchAll(/^\s*(?:import|export)\s[^;]*?\sfrom\s+["']([^"']+)["']|^\s*import\s+["']([^"']+)["']/gm)) {
      const spec = (m[1] ?? m[2])!;
      if (spec.startsWith(".")) queue.push(resolve(dirname(file), spec));
      else {
        bare.add(spec);
        if (!via.has(spec)) via.set(spec, file);
      }
    }
  }
  return { files, bare, via };
};

for (const [label, entry] of [
  ["--help", "cli/bin.js"],
  ["validate", "cli/commands/validate.js"],
  ["plan", "cli/commands/plan.js"],
] as const) {
  test(`${label} loads no 'effect' barrel at start`, () => {
    const { files, bare, via } = reached(resolve(dist, entry));
    assert.ok(files.size > 3, `followed ${files.size} modules from ${entry}`);
    assert.not.ok(bare.has("effect"), `'effect' (the whole library) is imported by ${via.get("effect")}: import from 'effect/<Module>' instead`);
  });
}

test("the check sees a barrel import where there is one (the engine's runner uses it)", () => {
  const { bare } = reached(resolve(dist, "engine/Runner.js"));
  assert.ok(bare.has("effect"));
});

test.run();
