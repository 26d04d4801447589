// The region rule through the built CLI, with two emulators on different ports standing
// for two regional hosts (ids of one invisible from the other): the lockfile records the
// service it ran against (never the key); a run against the other one with unfinished
// tasks is refused (exit 2) before anything is sent and changes nothing; with
// --switch-service it makes them there once, as new attempts with new ids, and finishes,
// while the records of what was made and charged at the first service stay in the
// lockfile as they were (marked abandoned there), so spend to date never goes down;
// --emulate records `emulator`, so emulated reruns (a new port each time) never count as a move.

import { readFileSync } from "node:fs";
import { execa } from "execa";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { startEmulator, type RunningEmulator } from "../../src/emulator/Emulator.js";
import { readLockFile } from "../../src/state/readLockFile.js";
import type { LockFile, LockTask } from "../../src/state/LockFile.js";
import { assertAllResults, bin, manifestYaml, runCli, workspace } from "./runFixture.js";

let east: RunningEmulator;
let west: RunningEmulator;
const t = suite("run against another service (region)");

t.before(async () => {
  east = await startEmulator({ timing: { scale: 1 }, slots: { video: 20, image: 40 } }, { port: 0 });
  west = await startEmulator({ timing: { scale: 0.15 }, slots: { video: 20, image: 40 } }, { port: 0 });
});
t.after(async () => {
  await east.close();
  await west.close();
});

/**
 * Runs the CLI and interrupts it (the first SIGINT: a clean stop, exit 3) as soon as
 * `ready` holds: a stop after a given amount of work, whatever the machine's load (a
 * fixed --max-wait raced the start-up). Bounded: 60 s of polling at most.
 */
const runUntil = async (ws: ReturnType<typeof workspace>, args: readonly string[], env: Record<string, string>, ready: () => boolean) => {
  const run = runCli(ws, args, env);
  const until = Date.now() + 60_000;
  let exited = false;
  void run.finally(() => (exited = true));
  while (!ready() && !exited && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
  run.kill("SIGINT");
  return run;
};

const header = (path: string) => JSON.parse(readFileSync(path, "utf8").split("\n")[0]!) as { service?: string };
const sum = (o: Record<string, number>) => Object.values(o).reduce((a, b) => a + b, 0);
/** Cash charged over every record, in micro-units (amounts are short decimal strings). */
const cashOf = (lock: LockFile) =>
  Object.values(lock.tasks)
    .flatMap((t) => t.billing)
    .filter((b) => b.charge_type === "cash")
    .reduce((n, b) => n + Math.round(Number(b.amount) * 1e6), 0);
/** Each task's line as written (v2: one line per task), by id. */
const linesOf = (path: string) =>
  new Map(
    readFileSync(path, "utf8")
      .split("\n")
      .slice(1)
      .filter((l) => l.trim() !== "")
      .map((l) => JSON.parse(l) as Record<string, unknown> & { id: string })
      .map((l) => [l.id, l] as const),
  );
/** The record as history: everything but what marks it abandoned and replaced. */
const history = ({ abandoned: _a, superseded_by: _s, updated_at: _u, ...rest }: LockTask) => rest;

/**
 * After a switch every task is either current (downloaded, files verified, created once at
 * `at`) or abandoned at `from` (created there, never at `at`) and superseded by its next
 * attempt, which is current.
 */
const assertSwitched = async (ws: ReturnType<typeof workspace>, from: RunningEmulator, fromUrl: string, at: RunningEmulator) => {
  const lock = await readLockFile(ws.lockfile);
  assert.ok(lock);
  const abandoned = Object.entries(lock!.tasks).filter(([, t]) => t.abandoned !== undefined);
  const current = { ...lock!, tasks: Object.fromEntries(Object.entries(lock!.tasks).filter(([, t]) => t.abandoned === undefined)) };
  for (const [id, t] of abandoned) {
    assert.is(t.abandoned!.service, fromUrl, id);
    // `submitting`: stopped while its create was under way (outcome unknown): at most once there.
    if (t.state === "submitting") assert.ok((from.stats().creates[id] ?? 0) <= 1, id);
    else assert.is(from.stats().creates[id], 1, `${id} was created at the old service`);
    assert.is(at.stats().creates[id], undefined, `${id} is never sent to the new service`);
    const next = t.superseded_by;
    assert.ok(next !== undefined && next !== id, `${id} names the attempt that replaced it`);
    assert.is(lock!.tasks[next!]?.state, "downloaded", next);
    assert.is(lock!.tasks[next!]?.attempt, t.attempt + 1, next);
    assert.is(at.stats().creates[next!], 1, `${next} created once at the new service`);
    assert.is(from.stats().creates[next!], undefined, `${next} never at the old one`);
  }
  for (const [id, t] of Object.entries(current.tasks)) {
    assert.is(t.state, "downloaded", id);
    if (from.stats().creates[id] === undefined) assert.is(at.stats().creates[id], 1, id);
  }
  return { lock: lock!, abandoned };
};

t("refused against another service while tasks are unfinished at the first; --switch-service creates them there once", async () => {
  const ws = workspace(manifestYaml("region", { subjects: 2, moods: 2 }));
  try {
    assert.is.not(east.url, west.url);
    // Stopped once the four tasks of the first level (2 stills, 2 clips) are created there.
    const first = await runUntil(ws, ["--base-url", east.url, "--no-callbacks"], { OMNIBATCH_API_KEY: east.apiKey }, () => sum(east.stats().creates) >= 4);
    assert.is(first.exitCode, 3, first.all);
    assert.is(header(ws.lockfile).service, east.url.replace(/\/+$/, ""));
    assert.not.ok(readFileSync(ws.lockfile, "utf8").includes(east.apiKey), "the key is never recorded");
    const createdEast = sum(east.stats().creates);
    assert.ok(createdEast > 0, "the first run created tasks at the first service");
    const bytes = readFileSync(ws.lockfile, "utf8");

    const refused = await runCli(ws, ["--base-url", west.url, "--no-callbacks"], { OMNIBATCH_API_KEY: west.apiKey });
    assert.is(refused.exitCode, 2, refused.all);
    assert.ok(refused.all!.includes(east.url.replace(/\/+$/, "")) && refused.all!.includes(west.url.replace(/\/+$/, "")), refused.all);
    assert.match(refused.all!, /--switch-service/);
    assert.match(refused.all!, /Nothing was sent/);
    assert.is(sum(west.stats().creates), 0, "nothing was created at the other service");
    assert.is(readFileSync(ws.lockfile, "utf8"), bytes, "the lockfile is unchanged");

    const switched = await runCli(ws, ["--base-url", west.url, "--switch-service", "--no-callbacks"], { OMNIBATCH_API_KEY: west.apiKey });
    assert.is(switched.exitCode, 0, switched.all);
    assert.match(switched.all!, /abandoned there and created again here/);
    const { abandoned } = await assertSwitched(ws, east, east.url.replace(/\/+$/, ""), west);
    assert.ok(abandoned.length > 0, "the tasks unfinished at the first service are recorded as abandoned there");
    assert.is(header(ws.lockfile).service, west.url.replace(/\/+$/, ""));
    assert.is(sum(east.stats().creates), createdEast, "nothing more at the first service");

    // Everything is downloaded: going back has nothing to abandon; it runs, says so, records it.
    const back = await runCli(ws, ["--base-url", east.url, "--no-callbacks"], { OMNIBATCH_API_KEY: east.apiKey });
    assert.is(back.exitCode, 0, back.all);
    assert.match(back.all!, /none of its tasks is unfinished there/);
    assert.is(header(ws.lockfile).service, east.url.replace(/\/+$/, ""));
    assert.is(sum(east.stats().creates), createdEast, "nothing created by going back");
  } finally {
    ws.remove();
  }
});

t("--switch-service erases nothing: what was made and charged at the first service stays in the lockfile, spend never goes down, new ids at the second", async () => {
  // A service whose results cannot be downloaded (every download cut off): its tasks end
  // `succeeded`, charged, results recorded as waiting there.
  const north = await startEmulator({ timing: { scale: 0.05 }, slots: { video: 20, image: 40 }, faults: { truncatedDownloadRate: 1 } }, { port: 0 });
  const ws = workspace(manifestYaml("regionpaid", { subjects: 2, moods: 2 }));
  try {
    const northUrl = north.url.replace(/\/+$/, "");
    // Stopped once two tasks finished there and their downloads were tried (and cut off).
    const first = await runUntil(ws, ["--base-url", north.url, "--no-callbacks"], { OMNIBATCH_API_KEY: north.apiKey }, () => north.stats().tasks.byStatus.succeeded >= 2 && north.stats().downloads >= 2);
    assert.is.not(first.exitCode, 0, first.all);
    const before = (await readLockFile(ws.lockfile))!;
    const paidWaiting = Object.entries(before.tasks).filter(([, t]) => t.state === "succeeded" && t.billing.length > 0);
    assert.ok(paidWaiting.length > 0, `some tasks finished and were charged at the first service, results not downloaded: ${first.all}`);
    const linesBefore = linesOf(ws.lockfile);
    const cashBefore = cashOf(before);
    assert.ok(cashBefore > 0, "the first service charged");
    const createdNorth = { ...north.stats().creates };

    const switched = await runCli(ws, ["--base-url", west.url, "--switch-service", "--no-callbacks"], { OMNIBATCH_API_KEY: west.apiKey });
    assert.is(switched.exitCode, 0, switched.all);
    assert.match(switched.all!, /finished there \(paid\) with results not downloaded yet/);
    const { lock: after, abandoned } = await assertSwitched(ws, north, northUrl, west);
    const linesAfter = linesOf(ws.lockfile);

    // Every record of the first run is still there; its outputs and charges byte for byte,
    // the rest of it unchanged but for the marks.
    for (const [id, old] of Object.entries(before.tasks)) {
      const now = after.tasks[id];
      assert.ok(now, `${id} is still in the lockfile`);
      assert.equal(history(now!), history(old), id);
      assert.is(JSON.stringify(linesAfter.get(id)!["bill"]), JSON.stringify(linesBefore.get(id)!["bill"]), `${id}: charges byte for byte`);
      assert.is(JSON.stringify(linesAfter.get(id)!["out"]), JSON.stringify(linesBefore.get(id)!["out"]), `${id}: output records byte for byte`);
    }
    for (const [id] of paidWaiting) assert.ok(abandoned.some(([a]) => a === id), `${id} (paid, waiting there) is abandoned, not erased`);
    assert.equal(north.stats().creates, createdNorth, "nothing more created at the first service");
    for (const n of Object.values(north.stats().creates)) assert.is(n, 1, "nothing created twice at the first service");

    // Spend to date: the first service's charges once, plus the new attempts'.
    const cashAfter = cashOf(after);
    const newCash = cashOf({ ...after, tasks: Object.fromEntries(Object.entries(after.tasks).filter(([id]) => !before.tasks[id])) });
    assert.ok(cashAfter >= cashBefore, `spend went down: ${cashBefore} -> ${cashAfter}`);
    assert.is(cashAfter, cashBefore + newCash, "old charges counted once");
    assert.ok(newCash > 0, "the new attempts were charged at the second service");

    // status counts the abandoned records apart and spend to date includes them.
    const status = await execa("node", [bin, "status", ws.manifest, "--json"], { cwd: ws.dir, reject: false, extendEnv: false, env: {} });
    assert.is(status.exitCode, 0, status.stderr);
    const view = JSON.parse(status.stdout) as { superseded: { id: string; abandoned?: { service: string } }[]; states: Record<string, number>; tasks: number };
    for (const [id] of abandoned) assert.ok(view.superseded.some((s) => s.id === id && s.abandoned?.service === northUrl), `${id} is listed apart as abandoned`);
    assert.is(view.tasks, Object.keys(after.tasks).length - abandoned.length, "abandoned records are not counted as current tasks");
    assert.is(view.states.succeeded ?? 0, 0, "no abandoned record counts as waiting to be downloaded");
  } finally {
    ws.remove();
    await north.close();
  }
});

t("--emulate records `emulator`, not its port: a second emulated run (another port) is no move", async () => {
  const ws = workspace(manifestYaml("regionemu", { subjects: 1, moods: 1 }));
  const emulated = join(ws.dir, "m.emulate.lock.json");
  try {
    const first = await runCli(ws, ["--emulate", "--max-wait", "300ms"]);
    assert.ok(first.exitCode === 0 || first.exitCode === 3, first.all);
    assert.is(header(emulated).service, "emulator");
    const second = await runCli(ws, ["--emulate"]);
    assert.is(second.exitCode, 0, second.all);
    assert.is(header(emulated).service, "emulator");
  } finally {
    ws.remove();
  }
});

t.run();
