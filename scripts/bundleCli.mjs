// Bundles the CLI (after `tsc`, in `npm run build`) so a start reads a few files instead
// of hundreds: `validate` used to load about 110 ES modules and 80 CommonJS files of
// `yaml`, and resolving, reading and compiling each one was most of its time (docs/benchmarks.md,
// "What a start loads, and why"). The result replaces tsc's
// dist/cli/bin.js; every command's module stays a separate chunk loaded by the
// dispatcher's `import()` when that command runs, and code shared by commands is in
// shared chunks, all in dist/chunks/ (two levels under the package root, as every
// dist/<folder>/<file>.js is, so `new URL("../../schemas/...", import.meta.url)` still
// finds the package's files). The library (dist/index.js) and the rest of dist/ stay
// tsc's output.
//
// Bundled from the TypeScript sources (as the tests run them, through tsx's esbuild),
// not minified: each module's code is preceded by a `// <path>` comment, which
// test/cli/startupImports.test.ts reads to tell which modules a start loaded. The AWS
// SDK (loaded only by an s3:// outputs store) stays an ordinary import of node_modules.
//
// The GitHub Action's step (action.yml runs `node dist/ci/actionStep.js`) is a second entry
// of the same build, replacing tsc's dist/ci/actionStep.js and sharing the CLI's chunks: it
// used to load the unbundled dist/ modules (and all of Effect's index), about 0.6 s of CPU
// per start before it read a single input.
//
// The executable a user runs (package.json "bin") is a second, small bundle:
// dist/cli/omnibatch.cjs from src/cli/launcher.ts, CommonJS, which answers `--help` and
// `--version` without starting Node's ES module loader and otherwise imports bin.js.

import { chmodSync, rmSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import * as esbuild from "esbuild";

const root = fileURLToPath(new URL("..", import.meta.url));

rmSync(`${root}dist/chunks`, { recursive: true, force: true });
// tsc's source map describes tsc's bin.js, not the bundle that replaces it.
rmSync(`${root}dist/cli/bin.js.map`, { force: true });
rmSync(`${root}dist/ci/actionStep.js.map`, { force: true });

const result = await esbuild.build({
  absWorkingDir: root,
  entryPoints: { "cli/bin": "src/cli/bin.ts", "ci/actionStep": "src/ci/actionStep.ts" },
  outdir: "dist",
  chunkNames: "chunks/[name]-[hash]",
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  tsconfig: "tsconfig.build.json",
  external: ["@aws-sdk/*"],
  // Bundled CommonJS code (yaml, ajv) calls require() for Node's own modules.
  banner: { js: 'import { createRequire as __omnibatchRequire } from "node:module";\nconst require = __omnibatchRequire(import.meta.url);' },
  // The entry keeps tsc's `#!/usr/bin/env node` line (esbuild moves it first).
  logLevel: "warning",
  metafile: true,
});

// The launcher: CommonJS, self-contained but for bin.js (imported as it is, for every
// other command line).
const launcher = await esbuild.build({
  absWorkingDir: root,
  entryPoints: ["src/cli/launcher.ts"],
  outfile: "dist/cli/omnibatch.cjs",
  bundle: true,
  format: "cjs",
  platform: "node",
  target: "node20",
  tsconfig: "tsconfig.build.json",
  banner: { js: "#!/usr/bin/env node" },
  plugins: [{ name: "bin-stays-esm", setup: (b) => b.onResolve({ filter: /^\.\/bin\.js$/ }, (a) => ({ path: a.path, external: true })) }],
  logLevel: "warning",
  metafile: true,
});
chmodSync(`${root}dist/cli/omnibatch.cjs`, 0o755);
const launcherBytes = Object.values(launcher.metafile.outputs).reduce((n, o) => n + o.bytes, 0);

const outputs = Object.entries(result.metafile.outputs);
const bytes = outputs.reduce((n, [, o]) => n + o.bytes, 0);
if (process.argv.includes("--meta")) writeFileSync(`${root}dist/chunks/meta.json`, JSON.stringify(result.metafile));
process.stdout.write(
  `bundled the CLI: dist/cli/bin.js, dist/ci/actionStep.js and ${outputs.length - 2} chunks in dist/chunks (${Math.round(bytes / 1024)} KB); the launcher dist/cli/omnibatch.cjs (${Math.round(launcherBytes / 1024)} KB)\n`,
);
