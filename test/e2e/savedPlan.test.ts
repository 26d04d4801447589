// Saved plans through the built CLI (as Terraform's): `plan --out plan.json` writes the
// exact ids to create with their estimates and the digests of the manifest and lockfile;
// `run --plan plan.json` creates exactly those, and refuses (exit 2, nothing sent) when
// the manifest, a file it reads, or the lockfile changed since, or the file is not a plan.

import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { execa } from "execa";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { startEmulator, type RunningEmulator } from "../../src/emulator/Emulator.js";
import { readLockFile } from "../../src/state/readLockFile.js";
import { bin, workspace, type Workspace } from "./runFixture.js";
import { selectYaml } from "./selectFixture.js";

let emu: RunningEmulator;
const t = suite("saved plans");

t.before(async () => {
  emu = await startEmulator({ timing: { scale: 0.1 }, slots: { video: 20, image: 40 } }, { port: 0 });
});
t.after(async () => {
  await emu.close();
});

const planWorkspace = (name: string): Workspace => {
  const ws = workspace(selectYaml(name));
  writeFileSync(join(ws.dir, "products.csv"), "sku,name\nA-1,mug\nB-2,lamp\n");
  return ws;
};

const cli = (ws: Workspace, args: readonly string[]) =>
  execa("node", [bin, ...args], {
    cwd: ws.dir,
    reject: false,
    env: { OMNIBATCH_BASE_URL: emu.url, OMNIBATCH_API_KEY: emu.apiKey, OMNIBATCH_TIME_SCALE: "0.05" },
    extendEnv: false,
  });

const summaryOf = (stdout: string) => JSON.parse(stdout.trim().split("\n").at(-1)!);
const createsOf = (stats: ReturnType<RunningEmulator["stats"]>): Record<string, number> => stats.creates;

t("plan --out writes the exact ids with estimates, digests and flags; run --plan creates exactly those ids and no other (the clips the plan could not name are not created)", async () => {
  const ws = planWorkspace("saved");
  try {
    const plan = await cli(ws, ["plan", ws.manifest, "--where", "style=studio", "--out", "plan.json"]);
    assert.is(plan.exitCode, 0, plan.stderr);
    assert.match(plan.stderr, "plan saved to plan.json: 2 task(s) to create; apply it with 'omnibatch run");
    const saved = JSON.parse(readFileSync(join(ws.dir, "plan.json"), "utf8"));
    assert.is(saved.format, "omnibatch-plan");
    assert.equal(saved.selection, { where: ["style=studio"], failed: false });
    assert.is(saved.create.length, 2);
    assert.ok(saved.create.every((c: any) => c.job === "stills" && c.vars.style === "studio" && c.estimate.amount === "0.02"));
    assert.equal(saved.estimate, { USD: "0.04" });
    assert.match(saved.digests.manifest, /^[0-9a-f]{64}$/);
    assert.match(saved.digests.lockfile, /^[0-9a-f]{64}$/);

    const run = await cli(ws, ["run", ws.manifest, "--plan", "plan.json", "--json"]);
    assert.is(run.exitCode, 0, run.stdout + run.stderr);
    assert.is(summaryOf(run.stdout).created, 2);
    const lock = await readLockFile(ws.lockfile);
    assert.equal(Object.keys(lock!.tasks).sort(), saved.create.map((c: any) => c.id).sort());
    assert.ok(Object.values(lock!.tasks).every((x) => x.state === "downloaded"));
    // The clips of those stills were not in the plan (their ids depend on results): said, not created.
    assert.match(run.stdout, "(clips): not in the saved plan, not created; make a new plan to include it");

    // Applying it again: the lockfile changed since (by that very run): refused.
    const twice = await cli(ws, ["run", ws.manifest, "--plan", "plan.json"]);
    assert.is(twice.exitCode, 2);
    assert.match(twice.stderr, "changed since the plan was made (another run, or an edit): nothing was sent; make the plan again");
  } finally {
    ws.remove();
  }
});

t("run --plan refuses (exit 2, nothing sent) when the manifest or a data file it reads changed since", async () => {
  const ws = planWorkspace("stale");
  try {
    assert.is((await cli(ws, ["plan", ws.manifest, "--out", "p.json"])).exitCode, 0);
    const yaml = readFileSync(ws.manifest, "utf8");
    writeFileSync(ws.manifest, yaml.replace("size: [small, large]", "size: [small, large, huge]"));
    const edited = await cli(ws, ["run", ws.manifest, "--plan", "p.json"]);
    assert.is(edited.exitCode, 2);
    assert.match(edited.stderr, "changed since the plan p.json was made: nothing was sent; make the plan again and review it");
    writeFileSync(ws.manifest, yaml);
    writeFileSync(join(ws.dir, "products.csv"), "sku,name\nA-1,mug\nB-2,brass lamp\n");
    const data = await cli(ws, ["run", ws.manifest, "--plan", "p.json"]);
    assert.is(data.exitCode, 2);
    assert.match(data.stderr, "(or a file it reads) changed since the plan p.json was made");
    assert.is(await readLockFile(ws.lockfile), undefined, "nothing was recorded");
  } finally {
    ws.remove();
  }
});

t("run --plan refuses a lockfile changed by another run since the plan was made; a fresh plan then applies", async () => {
  const ws = planWorkspace("stalelock");
  try {
    assert.is((await cli(ws, ["plan", ws.manifest, "--out", "p.json"])).exitCode, 0);
    assert.is((await cli(ws, ["run", ws.manifest, "--only", "posters"])).exitCode, 0);
    const before = await readLockFile(ws.lockfile);
    const createsBefore = Object.values(createsOf(emu.stats())).reduce((a, b) => a + b, 0);
    const stale = await cli(ws, ["run", ws.manifest, "--plan", "p.json"]);
    assert.is(stale.exitCode, 2);
    assert.match(stale.stderr, `the lockfile ${ws.lockfile} changed since the plan was made`);
    assert.equal(await readLockFile(ws.lockfile), before);
    assert.is(Object.values(createsOf(emu.stats())).reduce((a, b) => a + b, 0), createsBefore, "no create was sent");
    assert.is((await cli(ws, ["plan", ws.manifest, "--only", "stills", "--out", "p.json"])).exitCode, 0);
    const fresh = await cli(ws, ["run", ws.manifest, "--plan", "p.json", "--json"]);
    assert.is(fresh.exitCode, 0, fresh.stderr);
    assert.is(summaryOf(fresh.stdout).created, 4);
  } finally {
    ws.remove();
  }
});

t("a file that is not a valid plan, a plan for --emulate applied without it, and --plan with selection flags are exit 2 with a clear message", async () => {
  const ws = planWorkspace("badplan");
  try {
    writeFileSync(join(ws.dir, "bad.json"), JSON.stringify({ format: "omnibatch-plan", version: 1, create: [{ id: 7 }] }));
    const bad = await cli(ws, ["run", ws.manifest, "--plan", "bad.json"]);
    assert.is(bad.exitCode, 2);
    assert.match(bad.stderr, "bad.json is not a valid saved plan:");
    assert.match(bad.stderr, "/create/0/id: must be an external task id");
    assert.match(bad.stderr, "/digests: must be an object {manifest, lockfile}");
    writeFileSync(join(ws.dir, "text.json"), "not json");
    const text = await cli(ws, ["run", ws.manifest, "--plan", "text.json"]);
    assert.is(text.exitCode, 2);
    assert.match(text.stderr, "text.json is not JSON");
    const missing = await cli(ws, ["run", ws.manifest, "--plan", "none.json"]);
    assert.is(missing.exitCode, 2);
    assert.match(missing.stderr, "cannot read the plan");

    assert.is((await cli(ws, ["plan", ws.manifest, "--emulate", "--out", "emu.json"])).exitCode, 0);
    const mode = await cli(ws, ["run", ws.manifest, "--plan", "emu.json"]);
    assert.is(mode.exitCode, 2);
    assert.match(mode.stderr, "was made with --emulate: run it with --emulate");
    const both = await cli(ws, ["run", ws.manifest, "--plan", "emu.json", "--only", "stills"]);
    assert.is(both.exitCode, 2);
    assert.match(both.stderr, "--plan applies the selection the plan was made with");
    assert.not.match(bad.stderr + text.stderr + missing.stderr + mode.stderr + both.stderr, /\bat .*\.js:\d+/);
    assert.is(await readLockFile(ws.lockfile), undefined);
  } finally {
    ws.remove();
  }
});

t.run();
