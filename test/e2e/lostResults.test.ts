// The new-runner scenario of issue 16 without a store: a batch run against the emulator
// as a server, its manifest folder and lockfile copied to an empty folder (a CI runner
// has only what git holds), the service's clock moved past its 30-day deletion, and a run
// there. Nothing may be erased from the lockfile; each result is named lost; downstream
// tasks stay planned; the run exits 6; `--recreate-lost` makes them again as new
// attempts, beside the old records. Before the deletion, a rerun in place with files
// deleted from disk fetches them again (restorable).

import { cpSync, mkdtempSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execa } from "execa";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { startEmulator, type RunningEmulator } from "../../src/emulator/Emulator.js";
import { readLockFile } from "../../src/state/readLockFile.js";
import { assertAllResults, bin, manifestHead, stillsJob } from "./runFixture.js";

const DAY = 86_400_000;
const yaml = `${manifestHead("keep")}${stillsJob(["apple", "boat"])}  clips:
    kind: video
    for_each: stills.outputs
    contents:
      - first_frame: "{{ item.url }}"
        id: start
    prompt: "@start turns slowly"
`;

let emu: RunningEmulator;
const t = suite("results outlive the runner (no store)");
t.before(async () => {
  emu = await startEmulator({ timing: { scale: 0.05 }, slots: { video: 10, image: 10 } }, { port: 0 });
});
t.after(async () => {
  await emu.close();
});

const folder = () => {
  const dir = mkdtempSync(join(tmpdir(), "omnibatch-lost-"));
  writeFileSync(join(dir, "m.yaml"), yaml);
  return dir;
};
const cli = (dir: string, args: readonly string[], env: Record<string, string> = {}) =>
  execa("node", [bin, ...args], {
    cwd: dir,
    reject: false,
    all: true,
    env: { OMNIBATCH_TIME_SCALE: "0.05", OMNIBATCH_API_KEY: emu.apiKey, ...env },
    extendEnv: false,
  });
const run = (dir: string, extra: readonly string[] = [], env: Record<string, string> = {}) =>
  cli(dir, ["run", join(dir, "m.yaml"), "--base-url", emu.url, "--no-callbacks", ...extra], env);
const summaryOf = (stdout: string) => JSON.parse(stdout.trim().split("\n").at(-1)!);

t("a rerun in place with result files deleted from disk fetches them again while the service has them", async () => {
  emu.reset();
  const dir = folder();
  try {
    const first = await run(dir, ["--quiet"]);
    assert.is(first.exitCode, 0, first.all);
    const lock = await readLockFile(join(dir, "m.lock.json"));
    const paths = Object.values(lock!.tasks).flatMap((task) => task.outputs.flatMap((o) => (o.path ? [o.path] : [])));
    assert.is(paths.length, 4, "2 stills + 2 clips");
    for (const p of paths) unlinkSync(join(dir, "out", p));
    const status = await cli(dir, ["status", join(dir, "m.yaml"), "--json"]);
    const view = JSON.parse(status.stdout);
    assert.is(view.results.restorable, 4, status.stdout);
    assert.is(view.results.lost, 0);
    const again = await run(dir, ["--json"]);
    assert.is(again.exitCode, 0, again.all);
    const summary = summaryOf(again.stdout);
    assert.is(summary.downloaded, 4);
    assert.is(summary.created, 0);
    assert.equal(summary.lost, []);
    await assertAllResults({ lockfile: join(dir, "m.lock.json"), outputs: join(dir, "out") } as never);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

t("on a new runner after the service deleted the results: every record kept, each result named lost, downstream still planned, exit 6", async () => {
  emu.reset();
  const first = folder();
  const runner = mkdtempSync(join(tmpdir(), "omnibatch-lost-runner-"));
  try {
    const made = await run(first, ["--quiet"]);
    assert.is(made.exitCode, 0, made.all);
    const before = (await readLockFile(join(first, "m.lock.json")))!;
    // A new CI runner: only the manifest and the committed lockfile.
    cpSync(join(first, "m.yaml"), join(runner, "m.yaml"));
    cpSync(join(first, "m.lock.json"), join(runner, "m.lock.json"));
    emu.advanceClock(31 * DAY);

    const later = await run(runner, ["--json"], { CI: "true" });
    assert.is(later.exitCode, 6, later.all);
    const summary = summaryOf(later.stdout);
    assert.is(summary.created, 0, "nothing paid for again");
    assert.is(summary.lost.length, 4, JSON.stringify(summary.lost));
    for (const l of summary.lost) assert.ok(l.job === "stills" || l.job === "clips", JSON.stringify(l));
    assert.ok(summary.lost.some((l: { vars: Record<string, unknown> }) => l.vars.subject === "apple"));
    // The record of what was made is history: every output record still there, with its hash.
    const after = (await readLockFile(join(runner, "m.lock.json")))!;
    assert.equal(Object.keys(after.tasks).sort(), Object.keys(before.tasks).sort());
    for (const [id, task] of Object.entries(before.tasks)) {
      const kept = after.tasks[id]!;
      assert.is(kept.state, task.state, id);
      assert.is(kept.outputs.length, task.outputs.length, id);
      for (const [i, o] of task.outputs.entries()) {
        assert.is(kept.outputs[i]!.sha256, o.sha256, id);
        assert.is(kept.outputs[i]!.path, o.path, id);
        assert.ok(kept.outputs[i]!.deleted_at !== undefined, `${id}: recorded as deleted at the service`);
      }
    }
    // Said once, plainly, in CI without a store.
    const warnings = later.stdout.split("\n").filter((l) => l.includes("results live only on this runner"));
    assert.is(warnings.length, 1, later.stdout);
    // Downstream tasks stay in the plan (never orphans, never "no longer in the manifest").
    const plan = await cli(runner, ["plan", join(runner, "m.yaml"), "--json"]);
    assert.is(plan.exitCode, 0, plan.all);
    const planned = JSON.parse(plan.stdout);
    assert.is(planned.results.lost, 4, plan.stdout);
    assert.not.ok(plan.stdout.includes("no longer in the manifest"));
    assert.is(planned.jobs.clips["="], 2, "both clips still in the plan, as done");
    assert.is(planned.jobs.clips["-"], 0);
    assert.is(planned.total["+"], 0, "nothing to create: paying again is never automatic");
    const human = await cli(runner, ["plan", join(runner, "m.yaml")]);
    assert.ok(/4 lost/.test(human.stdout), human.stdout);
    const status = await cli(runner, ["status", join(runner, "m.yaml")]);
    assert.ok(/4 lost/.test(status.stdout), status.stdout);
    assert.ok(status.stdout.includes("stills subject=apple (stills/apple/"), status.stdout);
    assert.ok(status.stdout.includes("clips output=1 subject=apple"), status.stdout);
    // A second run says the same and still changes nothing.
    const again = await run(runner, ["--json"]);
    assert.is(again.exitCode, 6, again.all);
    assert.is(summaryOf(again.stdout).lost.length, 4);
    const untouched = await readLockFile(join(runner, "m.lock.json"));
    assert.equal(untouched, after, "a run without --recreate-lost pays for nothing and changes nothing");

    // Paying again is the user's explicit choice: shown with its cost, then new attempts with new ids.
    const remade = await run(runner, ["--recreate-lost"]);
    assert.is(remade.exitCode, 0, remade.all);
    assert.match(remade.stdout, "--recreate-lost: 2 lost result(s) of 2 task(s) are made again, as new attempts with new ids, and 2 lost downstream task(s) from their new results:");
    assert.match(remade.stdout, "Estimated cost:");
    assert.match(remade.stdout, "stills subject=apple");
    const final = (await readLockFile(join(runner, "m.lock.json")))!;
    // The old records are all still there, untouched; the new attempts beside them.
    // (A replaced clip may now name the clip that superseded it, issue 11: nothing else of it changes.)
    const kept = (t: object | undefined) => {
      const { updated_at: _u, superseded_by: _s, ...rest } = (t ?? {}) as Record<string, unknown>;
      return rest;
    };
    for (const [id, task] of Object.entries(after.tasks)) assert.equal(kept(final.tasks[id]), kept(task), id);
    const fresh = Object.entries(final.tasks).filter(([id]) => !(id in after.tasks));
    assert.is(fresh.filter(([, t]) => t.job === "stills" && t.attempt === 2).length, 2, "each lost still made again as attempt 2");
    assert.is(fresh.filter(([, t]) => t.job === "clips").length, 2, "clips made from the new stills");
    for (const [, t] of fresh) assert.is(t.state, "downloaded");
    const settled = await cli(runner, ["status", join(runner, "m.yaml"), "--json"]);
    assert.equal(JSON.parse(settled.stdout).results, { present: 4, restorable: 0, lost: 0, lost_results: [] });
    const quiet = await run(runner, ["--json"]);
    assert.is(quiet.exitCode, 0, quiet.all);
    assert.is(summaryOf(quiet.stdout).created, 0);
  } finally {
    rmSync(first, { recursive: true, force: true });
    rmSync(runner, { recursive: true, force: true });
  }
});

t.run();
