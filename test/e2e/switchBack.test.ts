// Switching back (issue 27, item 2), through the built CLI with two emulators on loopback
// standing for two regional hosts. Two image tasks in flight at A; a run at B with
// --switch-service abandons them at A and makes new attempts at B (stopped while those
// are in flight); the first ones finish at A (charged, results held there); then a run
// back at A. Before: it abandoned the attempts at B and created the tasks a second time
// at A (4 creates at A for 2 tasks), the results held at A were never fetched and spend
// to date saw a third of what was charged. Now: a run at the service an abandoned attempt
// was made at follows that attempt and downloads it (no create at A but the first two);
// the refusal without the flag names the tasks paid at A; and the charges of the
// attempts abandoned at B are learnt by the next run at B, so spend to date equals what
// both emulators charged.

import { readFileSync, writeFileSync } from "node:fs";
import { execa } from "execa";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { startEmulator, type RunningEmulator } from "../../src/emulator/Emulator.js";
import { readLockFile } from "../../src/state/readLockFile.js";
import type { LockFile } from "../../src/state/LockFile.js";
import { bin, manifestHead, runCli, stillsJob, workspace, type Workspace } from "./runFixture.js";

let a: RunningEmulator;
let b: RunningEmulator;
const t = suite("--switch-service back to the first service");

// Slow at first (tasks stay in flight while the runs are stopped); each finishes when its clock is moved on.
const SLOW = { timing: { scale: 1000 }, slots: { video: 20, image: 40 } } as const;
// Past the longest slow task (1,600 s), well inside the 30 days results are kept.
const HOUR = 2_000_000;

t.before(async () => {
  a = await startEmulator(SLOW, { port: 0 });
  b = await startEmulator(SLOW, { port: 0 });
});
t.after(async () => {
  await a.close();
  await b.close();
});

const sum = (o: Record<string, number>) => Object.values(o).reduce((x, y) => x + y, 0);
const origin = (e: RunningEmulator) => e.url.replace(/\/+$/, "");

/** Runs the CLI and stops it (SIGINT: a clean stop, exit 3) once `ready` holds; bounded at 60 s. */
const runUntil = async (ws: Workspace, args: readonly string[], env: Record<string, string>, ready: () => boolean) => {
  const run = runCli(ws, args, env);
  const until = Date.now() + 60_000;
  let exited = false;
  void run.finally(() => (exited = true));
  while (!ready() && !exited && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
  run.kill("SIGINT");
  return run;
};

/** Cash over every record, in micro-units. */
const cashOf = (lock: LockFile) =>
  Object.values(lock.tasks)
    .flatMap((task) => task.billing)
    .filter((e) => e.charge_type === "cash")
    .reduce((n, e) => n + Math.round(Number(e.amount) * 1e6), 0);

t("a run back at the service where abandoned attempts were made follows and downloads them, never creates them again; their charges and those abandoned at the other service are all counted", async () => {
  const ws = workspace(`${manifestHead("back")}${stillsJob(["apple", "boat"])}`);
  const atA = ["--base-url", a.url, "--no-callbacks"];
  const atB = ["--base-url", b.url, "--no-callbacks"];
  const keyA = { OMNIBATCH_API_KEY: a.apiKey };
  const keyB = { OMNIBATCH_API_KEY: b.apiKey };
  try {
    // 1. Two image tasks created at A, stopped in flight.
    const first = await runUntil(ws, atA, keyA, () => sum(a.stats().creates) >= 2);
    assert.is(first.exitCode, 3, first.all);
    const firstIds = Object.keys((await readLockFile(ws.lockfile))!.tasks).sort();
    assert.is(firstIds.length, 2);
    for (const id of firstIds) assert.is(a.stats().creates[id], 1, id);

    // 2. Switched to B: abandoned at A, new attempts at B, stopped in flight there.
    const second = await runUntil(ws, [...atB, "--switch-service"], keyB, () => sum(b.stats().creates) >= 2);
    assert.is(second.exitCode, 3, second.all);
    const atBIds = Object.keys(b.stats().creates).sort();
    assert.is(atBIds.length, 2);

    // 3. The first attempts finish at A: charged there, results held there. From now on A is quick.
    a.configure({ timing: { scale: 0.05 } });
    a.advanceClock(HOUR);
    assert.is(a.stats().tasks.byStatus.succeeded, 2);

    // Without the flag: refused, and the refusal says which tasks are paid at A.
    const refused = await runCli(ws, atA, keyA);
    assert.is(refused.exitCode, 2, refused.all);
    for (const id of firstIds) assert.ok(refused.all!.includes(id), `the refusal names ${id}, paid at A: ${refused.all}`);
    assert.match(refused.all!, /followed and downloaded here, not created again/);

    // 4. Back at A with the flag: the first attempts are followed and downloaded, nothing created.
    const back = await runCli(ws, [...atA, "--switch-service"], keyA);
    assert.is(back.exitCode, 0, back.all);
    assert.match(back.all!, /followed and downloaded here, not created again/);
    assert.is(sum(a.stats().creates), 2, `no create at A but the first two: ${JSON.stringify(a.stats().creates)}`);
    let lock = (await readLockFile(ws.lockfile))!;
    for (const id of firstIds) {
      const rec = lock.tasks[id]!;
      assert.is(rec.state, "downloaded", id);
      assert.is(rec.abandoned, undefined, `${id} is current again`);
      assert.is(rec.superseded_by, undefined, id);
      assert.ok(rec.billing.length > 0, `${id}'s charge at A is recorded`);
    }
    for (const id of atBIds) {
      const rec = lock.tasks[id]!;
      assert.is(rec.abandoned?.service, origin(b), `${id} is abandoned at B`);
      assert.ok(firstIds.includes(rec.superseded_by!), `${id} names the attempt taken up at A`);
    }
    // A rerun at A has nothing to do: no create, no switch needed.
    const again = await runCli(ws, atA, keyA);
    assert.is(again.exitCode, 0, again.all);
    assert.is(sum(a.stats().creates), 2, "a rerun creates nothing");

    // 5. The attempts abandoned at B finish there; the next run at B learns their charges.
    b.configure({ timing: { scale: 0.05 } });
    b.advanceClock(HOUR);
    const learn = await runCli(ws, atB, keyB);
    assert.is(learn.exitCode, 0, learn.all);
    assert.is(sum(b.stats().creates), 2, "nothing created at B either");
    lock = (await readLockFile(ws.lockfile))!;
    for (const id of atBIds) assert.ok(lock.tasks[id]!.billing.length > 0, `${id}'s charge at B is learnt`);
    // Spend to date: every task either emulator created, each charged once.
    const perTask = cashOf({ ...lock, tasks: { [firstIds[0]!]: lock.tasks[firstIds[0]!]! } });
    assert.ok(perTask > 0);
    assert.is(cashOf(lock), perTask * (sum(a.stats().creates) + sum(b.stats().creates)), "spend to date is what both emulators charged");
    const status = await execa("node", [bin, "status", ws.manifest, "--json"], { cwd: ws.dir, reject: false, all: true });
    assert.is(status.exitCode, 0, status.all);
    assert.ok(readFileSync(ws.lockfile, "utf8").length > 0);
  } finally {
    ws.remove();
  }
});

t("back at the service where an attempt was made, after the attempt made elsewhere failed: that attempt is followed and downloaded, never created again (not even with --failed)", async () => {
  // Own emulators: A slow (the attempts stay in flight), B failing every task.
  const a2 = await startEmulator(SLOW, { port: 0 });
  const b2 = await startEmulator({ timing: { scale: 0.05 }, failure: { rate: 1 } }, { port: 0 });
  const ws = workspace(`${manifestHead("backfailed")}${stillsJob(["apple", "boat"])}`);
  const atA = ["--base-url", a2.url, "--no-callbacks"];
  const keyA = { OMNIBATCH_API_KEY: a2.apiKey };
  try {
    // 1. Two image tasks created at A, stopped in flight.
    const first = await runUntil(ws, atA, keyA, () => sum(a2.stats().creates) >= 2);
    assert.is(first.exitCode, 3, first.all);
    const firstIds = Object.keys((await readLockFile(ws.lockfile))!.tasks).sort();
    assert.is(firstIds.length, 2);

    // 2. Switched to B: abandoned at A; the new attempts at B fail there (content risk: not retried).
    const second = await runCli(ws, ["--base-url", b2.url, "--no-callbacks", "--switch-service"], { OMNIBATCH_API_KEY: b2.apiKey });
    assert.not.equal(second.exitCode, 0, second.all);
    assert.is(sum(b2.stats().creates), 2, JSON.stringify(b2.stats().creates));
    let lock = (await readLockFile(ws.lockfile))!;
    const atBIds = Object.keys(b2.stats().creates).sort();
    for (const id of atBIds) assert.is(lock.tasks[id]!.state, "failed", id);

    // 3. The first attempts finish at A (paid there); back at A: nothing unfinished at B, so no flag is needed.
    a2.configure({ timing: { scale: 0.05 } });
    a2.advanceClock(HOUR);
    const back = await runCli(ws, atA, keyA);
    assert.is(back.exitCode, 0, back.all);
    assert.match(back.all!, /followed here and their results downloaded, not created again/);
    assert.is(sum(a2.stats().creates), 2, `no create at A but the first two: ${JSON.stringify(a2.stats().creates)}`);
    lock = (await readLockFile(ws.lockfile))!;
    for (const id of firstIds) {
      const rec = lock.tasks[id]!;
      assert.is(rec.state, "downloaded", id);
      assert.is(rec.abandoned, undefined, `${id} is current again`);
      assert.ok(rec.billing.length > 0, `${id}'s charge at A is recorded`);
    }
    for (const id of atBIds) assert.ok(firstIds.includes(lock.tasks[id]!.superseded_by!), `${id} names the attempt taken up at A`);

    // plan and status agree with the run: nothing to create or failed (plain and --failed); the attempts at B are superseded history.
    for (const args of [[], ["--failed"]]) {
      const plan = await execa("node", [bin, "plan", ws.manifest, ...args, "--json"], { cwd: ws.dir, reject: false, all: true });
      assert.is(plan.exitCode, 0, plan.all);
      const total = (JSON.parse(plan.stdout) as { total: Record<string, number> }).total;
      assert.is(total["+"], 0, `plan ${args.join(" ")} creates nothing: ${plan.stdout}`);
    }
    const status = await execa("node", [bin, "status", ws.manifest, "--json"], { cwd: ws.dir, reject: false, all: true });
    assert.is(status.exitCode, 0, status.all);
    const view = JSON.parse(status.stdout) as { failures: { groups: unknown[] }; superseded: { id: string }[]; states: Record<string, number> };
    assert.equal(view.failures.groups, [], status.stdout);
    assert.equal(view.superseded.map((x) => x.id).sort(), atBIds);
    assert.is(view.states.downloaded, 2, status.stdout);

    // 4. --failed finds nothing failed to make again: the tasks' attempts at A stand.
    const renew = await runCli(ws, [...atA, "--failed"], keyA);
    assert.is(renew.exitCode, 0, renew.all);
    assert.is(sum(a2.stats().creates), 2, `--failed creates nothing at A: ${JSON.stringify(a2.stats().creates)}`);
  } finally {
    ws.remove();
    await a2.close();
    await b2.close();
  }
});

t("a task abandoned at A while its create's outcome was unknown (submitting, no task id) and made at B: the next run at A finds it by its external id and learns its charge", async () => {
  const a3 = await startEmulator(SLOW, { port: 0 });
  const b3 = await startEmulator({ timing: { scale: 0.05 } }, { port: 0 });
  const ws = workspace(`${manifestHead("backsubmitting")}${stillsJob(["apple"])}`);
  const atA = ["--base-url", a3.url, "--no-callbacks"];
  const keyA = { OMNIBATCH_API_KEY: a3.apiKey };
  try {
    const first = await runUntil(ws, atA, keyA, () => sum(a3.stats().creates) >= 1);
    assert.is(first.exitCode, 3, first.all);
    const [id] = Object.keys((await readLockFile(ws.lockfile))!.tasks);
    // As if the create's answer had been lost: the record says `submitting`, with no task id.
    const lines = readFileSync(ws.lockfile, "utf8").split("\n").map((line) => {
      if (!line.includes(`"${id}"`)) return line;
      const rec = JSON.parse(line) as Record<string, unknown>;
      rec["state"] = "submitting";
      delete rec["task_id"];
      return JSON.stringify(rec);
    });
    writeFileSync(ws.lockfile, lines.join("\n"));
    assert.is((await readLockFile(ws.lockfile))!.tasks[id!]!.state, "submitting");

    // At B with the flag: abandoned at A, made and downloaded at B.
    const second = await runCli(ws, ["--base-url", b3.url, "--no-callbacks", "--switch-service"], { OMNIBATCH_API_KEY: b3.apiKey });
    assert.is(second.exitCode, 0, second.all);
    assert.is(sum(b3.stats().creates), 1);

    // The task at A ends there (charged); the next run at A finds it by its external id and learns that charge; nothing is created.
    a3.configure({ timing: { scale: 0.05 } });
    a3.advanceClock(HOUR);
    const back = await runCli(ws, atA, keyA);
    assert.is(back.exitCode, 0, back.all);
    assert.is(sum(a3.stats().creates), 1, "nothing created at A again");
    const rec = (await readLockFile(ws.lockfile))!.tasks[id!]!;
    assert.is(rec.state, "succeeded", JSON.stringify(rec));
    assert.ok(rec.task_id !== undefined, "its task id at A is recorded");
    assert.ok(rec.billing.length > 0, `its charge at A is learnt: ${JSON.stringify(rec)}`);
    assert.is(rec.abandoned?.service, origin(a3), "it stays history (another attempt stands)");
  } finally {
    ws.remove();
    await a3.close();
    await b3.close();
  }
});

t("an attempt taken up at A that then fails there is retried at A as the attempt after every recorded one, as the plan said; each attempt made once", async () => {
  // A: slow, and this first attempt fails there; B fails every task.
  const a4 = await startEmulator({ ...SLOW, failure: { rate: 1 } }, { port: 0 });
  const b4 = await startEmulator({ timing: { scale: 0.05 }, failure: { rate: 1 } }, { port: 0 });
  const ws = workspace(`${manifestHead("backretry")}${stillsJob(["apple"], "    retry_failed: 1\n    retry_content_risk: true\n")}`);
  const atA = ["--base-url", a4.url, "--no-callbacks"];
  const keyA = { OMNIBATCH_API_KEY: a4.apiKey };
  try {
    const first = await runUntil(ws, atA, keyA, () => sum(a4.stats().creates) >= 1);
    assert.is(first.exitCode, 3, first.all);
    const [firstId] = Object.keys((await readLockFile(ws.lockfile))!.tasks);
    // At B: attempts 2 and 3 fail there (the abandoned one uses up no retry).
    const second = await runCli(ws, ["--base-url", b4.url, "--no-callbacks", "--switch-service"], { OMNIBATCH_API_KEY: b4.apiKey });
    assert.not.equal(second.exitCode, 0, second.all);
    assert.is(sum(b4.stats().creates), 2, JSON.stringify(b4.stats().creates));
    // Back at A: attempt 1 is taken up and ends failed there; its retry (attempt 4, past B's two) succeeds at A.
    a4.configure({ timing: { scale: 0.05 }, failure: { rate: 0 } });
    a4.advanceClock(HOUR);
    const back = await runCli(ws, atA, keyA);
    assert.is(back.exitCode, 0, back.all);
    const lock = (await readLockFile(ws.lockfile))!;
    assert.is(lock.tasks[firstId!]!.state, "failed", "attempt 1's end at A is recorded");
    const created = Object.keys(a4.stats().creates);
    assert.is(created.length, 2, JSON.stringify(a4.stats().creates));
    for (const id of created) assert.is(a4.stats().creates[id], 1, `${id} created once`);
    const retry = created.find((id) => id !== firstId)!;
    assert.is(lock.tasks[retry]!.attempt, 4, JSON.stringify(lock.tasks[retry]));
    assert.is(lock.tasks[retry]!.state, "downloaded");
    for (const id of Object.keys(b4.stats().creates)) assert.not.ok(created.includes(id), `B's attempt ${id} is not made at A`);
  } finally {
    ws.remove();
    await a4.close();
    await b4.close();
  }
});

t.run();
