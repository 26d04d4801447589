// Runs of a chosen part, as a user runs them (the built CLI) against the emulator over
// loopback (a long-lived one via --base-url, so results of earlier runs stay at the
// service, and --emulate): --only (an upstream job does not run; its finished results
// are used, and the run says when there are none), --where on data-row fields (down to
// the downstream tasks), --failed (new attempts, new ids, the failed records kept), the
// tasks not selected left byte-for-byte as they were, and usage errors naming what exists.

import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { execa } from "execa";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { startEmulator, type RunningEmulator } from "../../src/emulator/Emulator.js";
import { readLockFile } from "../../src/state/readLockFile.js";
import type { LockFile, LockTask } from "../../src/state/LockFile.js";
import { assertAllResults, bin, workspace, type Workspace } from "./runFixture.js";
import { selectYaml } from "./selectFixture.js";

let emu: RunningEmulator;
const t = suite("runs of a chosen part");

t.before(async () => {
  emu = await startEmulator({ timing: { scale: 0.1 }, slots: { video: 20, image: 40 } }, { port: 0 });
});
t.after(async () => {
  await emu.close();
});

const selectWorkspace = (name: string, o: Parameters<typeof selectYaml>[1] = {}): Workspace => {
  const ws = workspace(selectYaml(name, o));
  writeFileSync(join(ws.dir, "products.csv"), "sku,name\nA-1,mug\nB-2,lamp\nC-3,chair\n");
  return ws;
};

const env = () => ({ OMNIBATCH_BASE_URL: emu.url, OMNIBATCH_API_KEY: emu.apiKey, OMNIBATCH_TIME_SCALE: "0.05" });

const cli = (ws: Workspace, args: readonly string[], extra: Record<string, string> = env()) =>
  execa("node", [bin, ...args], { cwd: ws.dir, reject: false, env: extra, extendEnv: false });

const events = (stdout: string): Array<Record<string, any>> => stdout.trim().split("\n").filter(Boolean).map((l) => JSON.parse(l));
const summaryOf = (stdout: string) => {
  const s = events(stdout).at(-1)!;
  assert.is(s.type, "summary", stdout);
  return s;
};
const notices = (stdout: string): string[] => events(stdout).filter((e) => e.type === "notice").map((e) => e.message as string);

const lockOf = async (ws: Workspace): Promise<LockFile> => (await readLockFile(ws.lockfile)) ?? { lockfile_version: 2, name: "", tasks: {} };
const ofJob = (lock: LockFile, job: string): Array<[string, LockTask]> => Object.entries(lock.tasks).filter(([, x]) => x.job === job);
const skuOf = (x: LockTask): unknown => (x.vars["product"] as { sku?: string } | undefined)?.sku ?? ((x.vars["item"] as any)?.vars?.product?.sku as unknown);

t("--only clips before any still is done creates nothing and says that clips needs stills (0 of 6 done)", async () => {
  const ws = selectWorkspace("onlynone");
  try {
    const plan = await cli(ws, ["plan", ws.manifest, "--only", "clips"]);
    assert.is(plan.exitCode, 0, plan.stderr);
    assert.match(plan.stdout, "clips needs stills: 0 of 6 stills task(s) are done; clips is made only from those; run stills first (--only stills) or drop --only");
    const run = await cli(ws, ["run", ws.manifest, "--only", "clips", "--json"]);
    assert.is(run.exitCode, 0, run.stderr);
    assert.is(summaryOf(run.stdout).created, 0);
    assert.ok(notices(run.stdout).some((m) => m.startsWith("clips needs stills: 0 of 6")), run.stdout);
    assert.equal(Object.keys((await lockOf(ws)).tasks), []);
    // Without --json the same is said on stderr.
    const plain = await cli(ws, ["run", ws.manifest, "--only", "clips"]);
    assert.is(plain.exitCode, 0);
    assert.match(plain.stderr, "clips needs stills: 0 of 6 stills task(s) are done");
  } finally {
    ws.remove();
  }
});

t("--only stills creates the 6 stills only; then --only clips makes one clip per still from those results, the stills' records untouched, posters never created", async () => {
  const ws = selectWorkspace("onlyboth");
  try {
    const first = await cli(ws, ["run", ws.manifest, "--only", "stills", "--json"]);
    assert.is(first.exitCode, 0, first.stderr);
    assert.is(summaryOf(first.stdout).created, 6);
    const afterStills = await lockOf(ws);
    assert.equal(new Set(Object.values(afterStills.tasks).map((x) => x.job)), new Set(["stills"]));
    assert.is(Object.keys(afterStills.tasks).length, 6);

    const plan = await cli(ws, ["plan", ws.manifest, "--only", "clips", "--json"]);
    assert.is(plan.exitCode, 0, plan.stderr);
    const p = JSON.parse(plan.stdout);
    assert.is(p.total["+"], 6);
    assert.equal(p.notes, []);
    assert.is(p.notSelected, 6 + 2);

    const second = await cli(ws, ["run", ws.manifest, "--only", "clips", "--json"]);
    assert.is(second.exitCode, 0, second.stderr);
    assert.is(summaryOf(second.stdout).created, 6);
    const lock = await assertAllResults(ws);
    const clips = ofJob(lock, "clips");
    assert.is(clips.length, 6);
    const stillIds = new Set(Object.keys(afterStills.tasks));
    assert.equal(new Set(clips.map(([, x]) => x.upstream?.task)), stillIds, "one clip from each still");
    for (const id of stillIds) assert.equal(lock.tasks[id], afterStills.tasks[id], `${id} untouched`);
    assert.equal(ofJob(lock, "posters"), []);
  } finally {
    ws.remove();
  }
});

t("--where product.sku=A-1 selects by a data-row field: the two A-1 stills and the clips made from them; nothing else; a later selection leaves these records as they are", async () => {
  const ws = selectWorkspace("where");
  try {
    const run = await cli(ws, ["run", ws.manifest, "--where", "product.sku=A-1", "--json"]);
    assert.is(run.exitCode, 0, run.stderr);
    const lock = await assertAllResults(ws);
    const stills = ofJob(lock, "stills");
    const clips = ofJob(lock, "clips");
    assert.equal(stills.map(([, x]) => skuOf(x)), ["A-1", "A-1"]);
    assert.equal(new Set(stills.map(([, x]) => x.vars["style"])), new Set(["studio", "street"]));
    assert.is(clips.length, 2);
    assert.equal(clips.map(([, x]) => skuOf(x)), ["A-1", "A-1"]);
    assert.equal(ofJob(lock, "posters"), []);
    assert.is(summaryOf(run.stdout).created, 4);

    // AND: two clauses; and the first run's records stay exactly as they were.
    const more = await cli(ws, ["run", ws.manifest, "--where", "product.sku=B-2", "--where", "style=street", "--only", "stills", "--json"]);
    assert.is(more.exitCode, 0, more.stderr);
    assert.is(summaryOf(more.stdout).created, 1);
    const after = await lockOf(ws);
    for (const [id, x] of Object.entries(lock.tasks)) assert.equal(after.tasks[id], x, `${id} untouched`);
    const added = Object.keys(after.tasks).filter((id) => !(id in lock.tasks));
    assert.is(added.length, 1);
    assert.is(skuOf(after.tasks[added[0]!]!), "B-2");
    assert.is(after.tasks[added[0]!]!.vars["style"], "street");
  } finally {
    ws.remove();
  }
});

t("an unknown --where key or --only job is a usage error (exit 2) naming what there is; nothing is written", async () => {
  const ws = selectWorkspace("badsel");
  try {
    const key = await cli(ws, ["run", ws.manifest, "--where", "sku=A-1"]);
    assert.is(key.exitCode, 2);
    assert.match(key.stderr, "--where: no task has the key 'sku' (keys: product.name, product.sku, size, style)");
    const row = await cli(ws, ["plan", ws.manifest, "--where", "product=A-1"]);
    assert.is(row.exitCode, 2);
    assert.match(row.stderr, "'product' is a data row, not a value: use one of its fields (product.name, product.sku)");
    const job = await cli(ws, ["run", ws.manifest, "--only", "stils"]);
    assert.is(job.exitCode, 2);
    assert.match(job.stderr, "--only: no job 'stils' in the manifest (jobs: stills, clips, posters)");
    const form = await cli(ws, ["plan", ws.manifest, "--where", "style"]);
    assert.is(form.exitCode, 2);
    assert.match(form.stderr, "must be key=value");
    assert.not.match(key.stderr + row.stderr + job.stderr + form.stderr, /\bat .*\.js:\d+/);
    assert.is(await readLockFile(ws.lockfile), undefined);
  } finally {
    ws.remove();
  }
});

t("--failed: after every poster failed, plan --failed shows the new attempts and their cost; run --failed creates them with new ids (the failed records kept); a plain run then creates nothing", async () => {
  const failing = await startEmulator({ timing: { scale: 0.1 }, failure: { rate: 1 } }, { port: 0 });
  const ws = selectWorkspace("failed", { posters: "small, medium, large" });
  const e = { OMNIBATCH_BASE_URL: failing.url, OMNIBATCH_API_KEY: failing.apiKey, OMNIBATCH_TIME_SCALE: "0.05" };
  try {
    const first = await cli(ws, ["run", ws.manifest, "--only", "posters", "--json"], e);
    assert.is(first.exitCode, 1, first.stderr);
    const failedLock = await lockOf(ws);
    const failed = ofJob(failedLock, "posters");
    assert.is(failed.length, 3);
    assert.ok(failed.every(([, x]) => x.state === "failed" && x.attempt === 1));

    failing.configure({ failure: { rate: 0 } });
    const plan = await cli(ws, ["plan", ws.manifest, "--failed"], e);
    assert.is(plan.exitCode, 0, plan.stderr);
    assert.match(plan.stdout, "--failed: 3 new attempt(s) of failed task(s) (new ids), estimated 0.06 USD");
    assert.is((plan.stdout.match(/new attempt 2 \(--failed\)/g) ?? []).length, 3);

    const run = await cli(ws, ["run", ws.manifest, "--failed", "--json"], e);
    assert.is(run.exitCode, 0, run.stdout + run.stderr);
    assert.ok(notices(run.stdout).includes("--failed: 3 new attempt(s) of failed task(s) (new ids), estimated 0.06 USD"), run.stdout);
    assert.is(summaryOf(run.stdout).created, 3);
    const lock = await lockOf(ws);
    for (const [id, x] of failed) assert.equal(lock.tasks[id], x, `the failed record ${id} is kept as it was`);
    const fresh = ofJob(lock, "posters").filter(([id]) => !failedLock.tasks[id]);
    assert.is(fresh.length, 3);
    assert.ok(fresh.every(([, x]) => x.state === "downloaded" && x.attempt === 2));
    assert.equal(new Set(fresh.map(([, x]) => x.dir)), new Set(failed.map(([, x]) => x.dir)), "the same posters, new ids");
    // No still or clip was touched: --failed took only failed tasks.
    assert.equal(ofJob(lock, "stills"), []);

    // The new attempts are the posters' results from now on: nothing more to do for them.
    const again = await cli(ws, ["run", ws.manifest, "--only", "posters", "--json"], e);
    assert.is(again.exitCode, 0, again.stderr);
    assert.is(summaryOf(again.stdout).created, 0);
    const none = await cli(ws, ["run", ws.manifest, "--failed", "--json"], e);
    assert.is(none.exitCode, 0);
    assert.ok(notices(none.stdout).includes("--failed: no failed task to try again"), none.stdout);
    assert.is(summaryOf(none.stdout).created, 0);
  } finally {
    ws.remove();
    await failing.close();
  }
});

t("an interrupted run --failed leaves its new attempts in flight; the next run --failed follows them to the end without creating anything twice", async () => {
  const failing = await startEmulator({ timing: { scale: 0.1 }, failure: { rate: 1 } }, { port: 0 });
  const ws = selectWorkspace("failedagain", { posters: "small, medium, large" });
  const e = { OMNIBATCH_BASE_URL: failing.url, OMNIBATCH_API_KEY: failing.apiKey, OMNIBATCH_TIME_SCALE: "0.05" };
  try {
    assert.is((await cli(ws, ["run", ws.manifest, "--only", "posters"], e)).exitCode, 1);
    // New attempts succeed, slowly (3 to 10 s): the next run stops while they are in flight.
    failing.configure({ failure: { rate: 0 }, timing: { scale: 6 } });
    // Stopped (the first SIGINT) once the lockfile records a new attempt as created: a fixed
    // --max-wait raced the start-up, which counts against it (on a loaded machine nothing
    // was created in time). Bounded: 60 s of polling.
    const running = cli(ws, ["run", ws.manifest, "--failed", "--json"], e);
    const until = Date.now() + 60_000;
    let exited = false;
    void running.finally(() => (exited = true));
    const createdAttempt2 = async () =>
      Object.values((await readLockFile(ws.lockfile).catch(() => undefined))?.tasks ?? {}).some((x) => x.attempt === 2 && x.task_id !== undefined);
    while (!exited && Date.now() < until && !(await createdAttempt2())) await new Promise((r) => setTimeout(r, 50));
    running.kill("SIGINT");
    const cut = await running;
    assert.is(cut.exitCode, 3, cut.stdout + cut.stderr);
    const mid = await lockOf(ws);
    const inFlight = Object.values(mid.tasks).filter((x) => x.attempt === 2 && x.task_id !== undefined && x.state !== "downloaded");
    assert.ok(inFlight.length >= 1, `attempts in flight after the stop: ${JSON.stringify(Object.values(mid.tasks).map((x) => [x.attempt, x.state]))}`);
    const done = await cli(ws, ["run", ws.manifest, "--failed", "--json"], e);
    assert.is(done.exitCode, 0, done.stdout + done.stderr);
    const lock = await lockOf(ws);
    const second = Object.entries(lock.tasks).filter(([, x]) => x.attempt === 2);
    assert.is(second.length, 3);
    assert.ok(second.every(([, x]) => x.state === "downloaded"));
    for (const [id] of second) assert.is(failing.stats().creates[id], 1, `${id} created once`);
    // The attempts the stopped run had not seen created are made now: created here, or found
    // at the service when the stop cut a create short after it left (outcome unknown, adopted).
    const after = summaryOf(done.stdout);
    assert.is(after.created + after.adopted, 3 - Object.values(mid.tasks).filter((x) => x.attempt === 2 && x.task_id !== undefined).length, done.stdout);
  } finally {
    ws.remove();
    await failing.close();
  }
});

t("--failed on --emulate: tasks failed by the prompt marker get new attempts with new ids (which fail again); tasks that succeeded are not created again", async () => {
  const ws = selectWorkspace("emufailed", { stillsPrompt: "a {{ product.name }} {{ style }}" });
  writeFileSync(join(ws.dir, "products.csv"), "sku,name\nA-1,mug\nB-2,[fail] lamp\n");
  try {
    const first = await cli(ws, ["run", ws.manifest, "--emulate", "--only", "stills", "--json"], { OMNIBATCH_TIME_SCALE: "0.05" });
    assert.is(first.exitCode, 1, first.stderr);
    const emuLock = { ...ws, lockfile: join(ws.dir, "m.emulate.lock.json") };
    const before = await lockOf(emuLock);
    const failedIds = Object.entries(before.tasks).filter(([, x]) => x.state === "failed").map(([id]) => id);
    assert.is(failedIds.length, 2);
    const run = await cli(ws, ["run", ws.manifest, "--emulate", "--failed", "--json"], { OMNIBATCH_TIME_SCALE: "0.05" });
    assert.is(run.exitCode, 1, run.stderr);
    assert.is(summaryOf(run.stdout).created, 2);
    const after = await lockOf(emuLock);
    for (const [id, x] of Object.entries(before.tasks)) assert.equal(after.tasks[id], x, `${id} kept as it was`);
    const fresh = Object.entries(after.tasks).filter(([id]) => !before.tasks[id]);
    assert.is(fresh.length, 2);
    assert.ok(fresh.every(([id, x]) => x.attempt === 2 && x.state === "failed" && !failedIds.includes(id)));
    assert.equal(new Set(fresh.map(([, x]) => x.dir)), new Set(failedIds.map((id) => before.tasks[id]!.dir)));
  } finally {
    ws.remove();
  }
});

t("run and plan --help describe --only, --where and --failed; run --help --plan, plan --help --out", async () => {
  const ws = selectWorkspace("help");
  try {
    const run = await cli(ws, ["run", "--help"]);
    const plan = await cli(ws, ["plan", "--help"]);
    for (const flag of ["--only JOB[,JOB]", "--where KEY=VALUE", "--failed"]) {
      assert.match(run.stdout, flag);
      assert.match(plan.stdout, flag);
    }
    assert.match(run.stdout, "--plan FILE");
    assert.match(plan.stdout, "--out FILE");
  } finally {
    ws.remove();
  }
});

t.run();
