// What a start loads (docs/benchmarks.md, "What a start loads, and why"): the built CLI
// is run with a recorder preloaded (recordLoads.mjs) that lists every file the process
// loaded; the bundled files (scripts/bundleCli.mjs) are read for the modules they hold
// (each begins with a `// src/...` or `// node_modules/...` line), tsc's files stand for
// their own module. `--help` and `validate` must not load the core of Effect (which
// `Data.TaggedError` brings), the HTTP client, the S3 client, the engine, the emulator,
// the reports, the review server or ajv's compiler. The controls show the same check
// sees each kind of module where a command does load it. The installed executable (the
// CommonJS launcher package.json names) answers --help and --version from its own file.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { execa } from "execa";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../..", import.meta.url));
const bin = join(root, "dist/cli/bin.js");
const recorder = fileURLToPath(new URL("./recordLoads.mjs", import.meta.url));

/** Modules as "src/<path>" (no extension) or "node_modules/<package>/<path>". */
const modulesIn = (file: string): string[] => {
  const path = file.split("\\").join("/");
  const pkg = path.lastIndexOf("/node_modules/");
  if (pkg >= 0) return [path.slice(pkg + 1)];
  const rel = relative(root, file).split("\\").join("/");
  const held = [...readFileSync(file, "utf8").matchAll(/^\/\/ ((?:src|node_modules)\/\S+)$/gm)].map((m) => m[1]!);
  const own = rel.startsWith("dist/") ? [`src/${rel.slice(5)}`] : [rel];
  return [...own, ...held].map((m) => (m.startsWith("src/") ? m.replace(/\.(ts|js)$/, "") : m));
};

/** What `omnibatch` runs once installed (package.json "bin"): the CommonJS launcher. */
const installed = join(root, (JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { bin: { omnibatch: string } }).bin.omnibatch);

/** Every file of the package (not node_modules) the process loaded, relative to the package. */
const filesLoadedBy = async (file: string, args: string[]): Promise<{ files: string[]; exitCode: number; stdout: string }> => {
  const dir = mkdtempSync(join(tmpdir(), "omnibatch-loads-"));
  const log = join(dir, "loads.txt");
  try {
    const r = await execa("node", ["--import", recorder, file, ...args], { cwd: root, reject: false, timeout: 60_000, env: { OMNIBATCH_LOAD_LOG: log, OMNIBATCH_API_KEY: "" } });
    const files = readFileSync(log, "utf8")
      .split("\n")
      .filter((l) => l.startsWith("file://") || l.startsWith("/"))
      .map((l) => relative(root, l.startsWith("file://") ? fileURLToPath(l) : l).split("\\").join("/"))
      .filter((f) => !f.startsWith("..") && !f.startsWith("node_modules/"));
    return { files: [...new Set(files)], exitCode: r.exitCode ?? -1, stdout: r.stdout };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
};

const loadedBy = async (args: string[]): Promise<{ modules: Set<string>; exitCode: number; stdout: string }> => {
  const dir = mkdtempSync(join(tmpdir(), "omnibatch-loads-"));
  const log = join(dir, "loads.txt");
  try {
    const r = await execa("node", ["--import", recorder, bin, ...args], {
      cwd: root,
      reject: false,
      timeout: 60_000,
      env: { OMNIBATCH_LOAD_LOG: log, OMNIBATCH_API_KEY: "" },
    });
    const files = readFileSync(log, "utf8")
      .split("\n")
      .filter((l) => l.startsWith("file://") || l.startsWith("/"))
      .map((l) => (l.startsWith("file://") ? fileURLToPath(l) : l));
    return { modules: new Set(files.flatMap(modulesIn)), exitCode: r.exitCode ?? -1, stdout: r.stdout };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
};

/** What neither `--help` nor `validate` may load, each a prefix of a module name. */
const notAtStart: Record<string, string> = {
  "the core of Effect (Data.TaggedError brings it)": "node_modules/effect/dist/esm/internal/core.js",
  "Effect's fiber runtime": "node_modules/effect/dist/esm/internal/fiberRuntime.js",
  "the HTTP transport": "src/api/httpTransport",
  "the S3 client": "node_modules/@aws-sdk/",
  "ajv's schema compiler": "node_modules/ajv/dist/compile/",
  "the engine": "src/engine/",
  "the API client": "src/api/OmniClient",
  "the emulator": "src/emulator/",
  "the reports": "src/report/",
  "the outputs store": "src/store/",
  "the review server": "src/cli/reviewServer/",
};

const found = (modules: Set<string>, prefix: string): string[] => [...modules].filter((m) => m.startsWith(prefix));

const assertNone = (label: string, modules: Set<string>, extra: Record<string, string> = {}): void => {
  for (const [what, prefix] of Object.entries({ ...notAtStart, ...extra })) {
    const hits = found(modules, prefix);
    assert.equal(hits, [], `${label} loaded ${what}: ${hits.slice(0, 5).join(", ")}`);
  }
};

test("--help loads neither Effect nor the manifest reader, nor anything a command needs", async () => {
  const r = await loadedBy(["--help"]);
  assert.is(r.exitCode, 0);
  assert.match(r.stdout, "Usage: omnibatch <command>");
  assert.ok(found(r.modules, "src/cli/").length > 0, `the recorder saw the CLI: ${[...r.modules].slice(0, 10).join(", ")}`);
  assertNone("--help", r.modules, { "yaml": "node_modules/yaml/", "the manifest reader": "src/manifest/loadManifest", "any of Effect": "node_modules/effect/" });
});

test("validate of the demo loads the manifest reader and yaml, and none of what runs tasks", async () => {
  const r = await loadedBy(["validate", "manifests/demo.yaml"]);
  assert.is(r.exitCode, 0);
  assert.match(r.stdout, "valid:");
  assert.ok(r.modules.has("src/manifest/loadManifest"), "the recorder saw the manifest reader");
  assert.ok(found(r.modules, "node_modules/yaml/").length > 0, "the recorder saw yaml");
  assertNone("validate", r.modules);
});

test("control: a wrong command line loads UsageError and with it the core of Effect, which the check sees", async () => {
  const r = await loadedBy(["validate"]);
  assert.is(r.exitCode, 2);
  assert.ok(found(r.modules, notAtStart["the core of Effect (Data.TaggedError brings it)"]!).length > 0, "Effect's core is seen where it is loaded");
});

test("control: `run --help` loads the run command's module, and with it the engine and the HTTP client, which the check sees", async () => {
  const r = await loadedBy(["run", "--help"]);
  assert.is(r.exitCode, 0);
  for (const what of ["the engine", "the HTTP transport", "the core of Effect (Data.TaggedError brings it)"]) {
    assert.ok(found(r.modules, notAtStart[what]!).length > 0, `${what} is seen where it is loaded`);
  }
});

test("the installed executable answers --help and --version from its own file alone: no ES module of the CLI, no chunk", async () => {
  for (const args of [["--help"], ["--version"]]) {
    const r = await filesLoadedBy(installed, args);
    assert.is(r.exitCode, 0);
    assert.ok(r.stdout.length > 0);
    assert.equal(r.files, [relative(root, installed)], `${args.join(" ")} loaded ${r.files.join(", ")}`);
  }
});

test("control: the installed executable with a command loads bin.js and the command's chunks, which the check sees", async () => {
  const r = await filesLoadedBy(installed, ["validate", "manifests/demo.yaml"]);
  assert.is(r.exitCode, 0);
  assert.ok(r.files.includes("dist/cli/bin.js"), r.files.join(", "));
  assert.ok(r.files.some((f) => f.startsWith("dist/chunks/")), r.files.join(", "));
});

test.run();
