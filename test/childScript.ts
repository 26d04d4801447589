// A TypeScript script of the tests' own that a test starts as a child process (a lockfile
// writer killed at random moments, a second run taking a lock over), made runnable by plain
// Node: bundled with esbuild into one module under test/.tmp/child/ (named by its content,
// so the same script is built once and two test processes never write one file), its
// packages (effect, ...) bundled too: only what the script uses of them is loaded, where
// `import "effect"` left to Node loads the whole package index (about 0.5 s of CPU). Its
// source map is inline without the sources' texts (the stack traces still name src/ files
// and lines; with the texts, parsing the map costs about 0.15 s more). Started so, a child
// costs about 0.3 s of CPU to its first line (0.7 s with its packages left to Node; 2 s
// under the tsx loader, which resolves and loads every module of src/ and effect through its
// hooks again in each child). Each source file's `import.meta.url` is its own (as under
// tsx), so paths made from it still point into src/.
//
//   const args = await childScript(new URL("./lockWriter.ts", import.meta.url));
//   spawn(process.execPath, [...args, lockfile]);

import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { build, type Plugin } from "esbuild";
import { checkoutRoot } from "./checkoutFiles.js";

const outDir = join(checkoutRoot, "test", ".tmp", "child");

const ownImportMetaUrl: Plugin = {
  name: "own-import-meta-url",
  setup(b) {
    b.onLoad({ filter: /\.ts$/ }, (args) => ({
      contents: readFileSync(args.path, "utf8").replaceAll("import.meta.url", JSON.stringify(pathToFileURL(args.path).href)),
      loader: "ts",
    }));
  },
};

const built = new Map<string, Promise<string>>();

const bundle = async (entry: string): Promise<string> => {
  const r = await build({
    entryPoints: [entry],
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    write: false,
    sourcemap: "inline",
    sourcesContent: false,
    // A package in CommonJS (ajv, ...) inside this ES module still finds `require`.
    banner: { js: 'import { createRequire as __childRequire } from "node:module"; const require = __childRequire(import.meta.url);' },
    logLevel: "silent",
    plugins: [ownImportMetaUrl],
  });
  const code = r.outputFiles[0]!.text;
  mkdirSync(outDir, { recursive: true });
  const path = join(outDir, `${createHash("sha256").update(code).digest("hex").slice(0, 16)}.mjs`);
  if (!existsSync(path)) {
    const temp = `${path}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
    writeFileSync(temp, code);
    renameSync(temp, path);
  }
  return path;
};

/** The Node arguments that run the script `file` (a .ts file URL or path): `--enable-source-maps` and its bundle. */
export const childScript = async (file: URL | string): Promise<string[]> => {
  const entry = typeof file === "string" ? file : fileURLToPath(file);
  let path = built.get(entry);
  if (!path) {
    path = bundle(entry);
    built.set(entry, path);
  }
  return ["--enable-source-maps", await path];
};
