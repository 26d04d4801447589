// Installing omnibatch into someone else's repository, as a new user would: `npm pack`,
// `npm install --save-dev` of the tarball into an empty project (no TypeScript there),
// `npx omnibatch init`, the starter run with --emulate, then the action's steps from
// node_modules/omnibatch/action.yml (the workflow init wrote uses exactly that) against
// the emulator over loopback, committing the lockfile to the project's bare remote.
// Bounded: each command has its own time limit; the whole file takes about a minute.

import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { execa } from "execa";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { parse } from "yaml";
import { startEmulator } from "../../src/emulator/Emulator.js";
import { gitFixture } from "./gitRepo.js";
import { runAction } from "./runAction.js";

const repoRoot = fileURLToPath(new URL("../..", import.meta.url));
const version = (JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8")) as { version: string }).version;
const t = suite("npm pack, install, init, action");

t("a packed omnibatch installs into an empty project: npx omnibatch, the schema at a stable path, init, the starter on --emulate, the action's steps", async () => {
  const emu = await startEmulator({ timing: { scale: 0.15 } }, { port: 0 });
  const g = await gitFixture({ "package.json": `${JSON.stringify({ name: "my-batches", version: "1.0.0", private: true }, null, 2)}\n`, ".gitignore": "node_modules/\n" });
  try {
    // dist/ is already built (npm test builds first); --ignore-scripts keeps pack from rebuilding it under other tests' feet.
    const pack = await execa("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", g.root], { cwd: repoRoot, timeout: 60_000 });
    const packed = (JSON.parse(pack.stdout) as { filename: string; files: { path: string }[] }[])[0]!;
    const shipped = packed.files.map((f) => f.path);
    assert.ok(shipped.includes("action.yml") && shipped.includes("schemas/manifest.schema.json") && shipped.includes("dist/cli/bin.js") && shipped.includes("dist/cli/omnibatch.cjs") && shipped.includes("dist/ci/actionStep.js"));
    assert.equal(shipped.filter((p) => p.startsWith("test/") || p.startsWith("examples/") || (p.startsWith("src/") && !p.endsWith(".mp4")) || p.endsWith(".tsbuildinfo")), [], "ships only what it needs");

    const install = await execa("npm", ["install", "--save-dev", "--no-audit", "--no-fund", "--prefer-offline", join(g.root, packed.filename)], { cwd: g.work, timeout: 240_000, reject: false, all: true });
    assert.is(install.exitCode, 0, install.all);
    const pkgDir = join(g.work, "node_modules", "omnibatch");
    assert.ok(existsSync(join(pkgDir, "schemas", "manifest.schema.json")));
    assert.not.ok(existsSync(join(g.work, "node_modules", "typescript")), "an installed tarball needs no TypeScript");
    assert.ok(readdirSync(join(g.work, "node_modules", ".bin")).includes("omnibatch"));
    const npx = (args: string[]) => execa("npx", ["--no-install", "omnibatch", ...args], { cwd: g.work, timeout: 60_000, reject: false, all: true });
    const v = await npx(["--version"]);
    assert.is(v.stdout.trim(), version, v.all);

    const init = await npx(["init"]);
    assert.is(init.exitCode, 0, init.all);
    const manifest = readFileSync(join(g.work, "starter.yaml"), "utf8");
    const schemaRef = /^# yaml-language-server: \$schema=(.+)$/m.exec(manifest)![1]!;
    assert.is(schemaRef, "./node_modules/omnibatch/schemas/manifest.schema.json");
    assert.ok(existsSync(resolve(g.work, schemaRef)), "the $schema line resolves from the manifest");
    const workflow = parse(readFileSync(join(g.work, ".github", "workflows", "omnibatch-starter.yml"), "utf8")) as { jobs: { run: { steps: { uses?: string }[] } } };
    assert.ok(workflow.jobs.run.steps.some((s) => s.uses === "./node_modules/omnibatch"));
    assert.ok(existsSync(join(pkgDir, "action.yml")), "the action the workflow uses is installed");

    const emulated = await npx(["run", "starter.yaml", "--emulate"]);
    assert.is(emulated.exitCode, 0, emulated.all);
    await g.git(["add", "-A"]);
    await g.git(["commit", "-q", "-m", "omnibatch starter"]);
    const clean = await g.git(["status", "--porcelain"]);
    assert.is(clean, "", "the emulated run's files are ignored");
    await g.git(["push", "-q", "origin", "main"]);

    // The scheduled workflow's action step, as the runner runs it from node_modules/omnibatch.
    const r = await runAction({
      actionPath: pkgDir,
      workspace: g.work,
      inputs: { manifest: "starter.yaml", "api-key": emu.apiKey },
      env: { GITHUB_REF: "refs/heads/main", GITHUB_REPOSITORY: "me/my-batches", GITHUB_RUN_ID: "7", OMNIBATCH_BASE_URL: emu.url, OMNIBATCH_TIME_SCALE: "0.05" },
      timeoutMs: 120_000,
    });
    assert.is(r.exitCode, 0, r.stdout + r.stderr);
    assert.match(r.stdout, `omnibatch ${version} from ${pkgDir}`);
    assert.is(r.outputs["outcome"], "done");
    assert.is(r.outputs["created"], "4");
    assert.is(r.outputs["report"], "outputs/starter/report.html");
    assert.match(r.outputs["committed"]!, /^[0-9a-f]{40}$/);
    assert.is(await g.git(["show", "--name-only", "--format=%an: %s", "main"], g.remote), "github-actions[bot]: omnibatch: starter lockfile after run 7 (done: 4 created, 4 downloaded, 0 failed)\n\nstarter.lock.json");
  } finally {
    g.remove();
    await emu.close();
  }
});

t.run();
