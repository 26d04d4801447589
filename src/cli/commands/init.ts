// `omnibatch init [DIR]`: scaffolds a starter in a repository (manifest with a $schema
// line that resolves to the installed package, a tiny data file, the scheduled workflow,
// .gitignore lines). Refuses to overwrite anything: every file it would create is checked
// first, and each is created exclusively. The content lives in ../init/templates.ts.

import { constants, existsSync } from "node:fs";
import { access, appendFile, mkdir, readFile, writeFile } from "node:fs/promises";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { defineCommand } from "../Command.js";
import { ExitCode } from "../../exit/ExitCode.js";
import { UsageError } from "../UsageError.js";
import { gitignoreLines, NAME_PATTERN, scheduledWorkflow, starterData, starterManifest } from "../init/templates.js";

const posix = (p: string): string => p.split(sep).join("/");

/**
 * The omnibatch package's folder: the nearest one above this module with a package.json.
 * This code runs from dist/cli/commands/ (tsc's output), dist/chunks/ (the bundled CLI,
 * scripts/bundleCli.mjs) or src/cli/commands/ (tests), so no fixed "../.." fits all.
 */
const packageDirOf = (moduleUrl: string): string => {
  let dir = dirname(fileURLToPath(moduleUrl));
  for (let i = 0; i < 8 && !existsSync(join(dir, "package.json")); i++) dir = dirname(dir);
  return dir.replace(/[\\/]+$/, "");
};

const exists = (path: string): Promise<boolean> =>
  access(path, constants.F_OK).then(
    () => true,
    () => false,
  );

/**
 * The schema as the manifest's folder reaches it: the installed package's own copy when
 * this omnibatch runs from a project's node_modules, else where `npm install --save-dev
 * omnibatch` in the project root (`root`) will put it.
 */
export const schemaPathFrom = (manifestDir: string, root: string, packageDir: string): string => {
  const installed = /[\\/]node_modules[\\/]omnibatch$/.test(packageDir) && !/[\\/]_npx[\\/]/.test(packageDir);
  const schema = installed ? join(packageDir, "schemas", "manifest.schema.json") : join(root, "node_modules", "omnibatch", "schemas", "manifest.schema.json");
  const rel = posix(relative(manifestDir, schema));
  return rel.startsWith(".") ? rel : `./${rel}`;
};

export const initCommand = defineCommand({
  name: "init",
  summary: "Scaffold a starter: manifest, data file, scheduled GitHub workflow, .gitignore lines.",
  usage: "omnibatch init [DIR] [--name NAME]",
  description:
    "Writes, in DIR (default: the current directory), NAME.yaml (a manifest whose $schema line points\n" +
    "at the installed package's schema) and data/NAME.csv; in the current directory (the\n" +
    "repository root) .github/workflows/omnibatch-NAME.yml (a scheduled run with the omnibatch action,\n" +
    "lockfile committed back) and the .gitignore lines for the outputs and emulated files.\n" +
    "Never overwrites: if any of these files exists, nothing is written (exit 2, naming it).\n" +
    "The starter runs at once on the emulator: omnibatch run DIR/NAME.yaml --emulate.",
  options: {
    name: { type: "string", value: "NAME", description: "The manifest's name and file name (default: starter)." },
  },
  positionals: { min: 0, max: 1, name: "directory" },
  run: async (args, io) => {
    const name = typeof args.values["name"] === "string" ? args.values["name"] : "starter";
    if (!NAME_PATTERN.test(name)) {
      throw new UsageError({ command: "init", message: `--name '${name}' must be lowercase letters, digits and dashes (up to 40), e.g. spring-launch` });
    }
    const root = io.cwd;
    const dir = resolve(root, args.positionals[0] ?? ".");
    const relDir = posix(relative(root, dir));
    if (relDir.startsWith("..")) {
      throw new UsageError({ command: "init", message: `${dir} is outside the current directory: run init from the repository root` });
    }
    const packageDir = packageDirOf(import.meta.url);
    const manifestFile = join(dir, `${name}.yaml`);
    const files: ReadonlyArray<readonly [string, string]> = [
      [manifestFile, starterManifest({ name, schemaPath: schemaPathFrom(dir, root, packageDir) })],
      [join(dir, "data", `${name}.csv`), starterData()],
      [join(root, ".github", "workflows", `omnibatch-${name}.yml`), scheduledWorkflow({ manifest: posix(relative(root, manifestFile)), name, outputs: posix(relative(root, join(dir, "outputs", name))) })],
    ];
    const shown = (p: string) => posix(relative(root, p));
    for (const [path] of files) {
      if (await exists(path)) {
        throw new UsageError({ command: "init", message: `${shown(path)} already exists; init never overwrites: move it away or choose another --name or DIR` });
      }
    }
    for (const [path, text] of files) {
      await mkdir(dirname(path), { recursive: true });
      // "wx": created here or not at all, even if it appeared since the check above.
      await writeFile(path, text, { flag: "wx" }).catch((error: NodeJS.ErrnoException) => {
        if (error.code === "EEXIST") throw new UsageError({ command: "init", message: `${shown(path)} already exists; init never overwrites` });
        throw error;
      });
      io.stdout.write(`created ${shown(path)}\n`);
    }
    const gitignore = join(root, ".gitignore");
    const current = (await exists(gitignore)) ? await readFile(gitignore, "utf8") : "";
    const have = new Set(current.split(/\r?\n/).map((l) => l.trim()));
    const missing = gitignoreLines(relDir).filter((l) => !have.has(l));
    if (missing.length > 0) {
      const lead = current === "" || current.endsWith("\n") ? "" : "\n";
      await appendFile(gitignore, `${lead}# omnibatch: results and reports, and what --emulate writes\n${missing.join("\n")}\n`);
      io.stdout.write(`${current === "" ? "created" : "added to"} .gitignore: ${missing.join(" ")}\n`);
    }
    const manifestShown = shown(manifestFile);
    io.stdout.write(
      `\nNext:\n` +
        `  npx omnibatch run ${manifestShown} --emulate   # free, on the built-in emulator\n` +
        `  npx omnibatch plan ${manifestShown}            # what a real run creates and costs\n` +
        `  add the secret OMNIBATCH_API_KEY to the repository, commit, and the workflow runs it on schedule\n`,
    );
    return ExitCode.Ok;
  },
});
