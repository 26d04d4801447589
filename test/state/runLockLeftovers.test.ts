// Guarantee: the temp and aside folders a run killed mid-placement, mid-takeover or
// mid-release leaves beside its run lock are removed by the next run that takes the lock,
// once provably out of use (whoever they name dead on this host, or older than the stale
// limit and its margin); one a live run may still use (a live taker's guard moved aside, a
// live maker's temp folder, another host's fresh lock) and anything not of the run lock's
// own names are left as they are.
//
// Before: nothing ever removed them (a kill in the instant between a rename and a removal
// left them beside the lockfile for good), nor the guard of a taker killed mid-takeover.

import { execa } from "execa";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { Effect, Exit, Scope } from "effect";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { acquireRunLock, runLockPathOf } from "../../src/state/RunLock.js";
import { childScript } from "../childScript.js";

const child = await childScript(new URL("./takeoverChild.ts", import.meta.url));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const DEAD_PID = 2 ** 22 + 12347;
const token = (n: number) => n.toString(16).padStart(16, "0");

const place = (path: string, owner: { pid: number; host: string; token: string } | undefined, ageMs: number) => {
  mkdirSync(path);
  if (owner) writeFileSync(join(path, "owner.json"), JSON.stringify({ ...owner, started: Date.now() - ageMs }));
  const t = new Date(Date.now() - ageMs);
  utimesSync(path, t, t);
  return path;
};

const holdAndRelease = async (lockfile: string, staleMs: number) => {
  const scope = await Effect.runPromise(Scope.make());
  try {
    const held = await Effect.runPromise(Scope.extend(acquireRunLock(lockfile, { staleMs, heartbeatMs: 600_000 }), scope));
    assert.ok(await held.confirm(), "the lock is held");
  } finally {
    await Effect.runPromise(Scope.close(scope, Exit.void));
  }
};

test("a run taking the lock removes the leftovers nobody can use, and leaves those a live run may and every other name", async () => {
  const dir = mkdtempSync(join(tmpdir(), "omnibatch-leftovers-"));
  try {
    const lockfile = join(dir, "m.lock.json");
    const lock = runLockPathOf(lockfile);
    const here = hostname();
    const gone = {
      // A lock's temp folder, its maker killed before the rename into place.
      deadMakersTemp: place(`${lock}.${token(1)}.tmp`, { pid: DEAD_PID, host: here, token: token(1) }, 0),
      // A guard's temp folder killed before its owner file was written, two minutes old.
      ownerlessOldTemp: place(`${lock}.takeover.${token(2)}.tmp`, undefined, 120_000),
      // A dead run's lock moved aside by a taker killed before removing it.
      deadLockAside: place(`${lock}.${token(3)}.aside`, { pid: DEAD_PID, host: here, token: token(30) }, 0),
      // Another host's lock moved aside two minutes ago (its release killed before the removal).
      oldOtherHostAside: place(`${lock}.${token(4)}.aside`, { pid: 1, host: `not-${here}`, token: token(40) }, 120_000),
      // A guard moved aside whose taker died here.
      deadGuardAside: place(`${lock}.takeover.${token(5)}.aside`, { pid: DEAD_PID, host: here, token: token(50) }, 0),
    };
    const kept = {
      // A live taker's guard moved aside by another, about to be put back.
      liveGuardAside: place(`${lock}.takeover.${token(6)}.aside`, { pid: process.pid, host: here, token: token(60) }, 0),
      // A live maker's temp folder, about to be renamed into place.
      liveMakersTemp: place(`${lock}.takeover.${token(7)}.tmp`, { pid: process.pid, host: here, token: token(7) }, 0),
      // Another host's fresh lock moved aside: its holder may be alive.
      freshOtherHostAside: place(`${lock}.${token(8)}.aside`, { pid: 1, host: `not-${here}`, token: token(80) }, 1_000),
      // An ownerless temp folder just made: its owner file may be on its way.
      ownerlessFreshTemp: place(`${lock}.${token(9)}.tmp`, undefined, 0),
      // Not names the run lock makes, or another lockfile's.
      notAToken: place(`${lock}.leftover.tmp`, undefined, 120_000),
      otherLockfile: place(`${join(dir, "n.lock.json.running")}.${token(10)}.tmp`, undefined, 120_000),
      claim: place(`${lock}.takeover.claim.${token(11)}.tmp`, undefined, 120_000),
    };
    await holdAndRelease(lockfile, 30_000);
    for (const [what, path] of Object.entries(gone)) assert.not.ok(existsSync(path), `${what} removed`);
    for (const [what, path] of Object.entries(kept)) assert.ok(existsSync(path), `${what} kept`);
    assert.match(readFileSync(join(kept.liveGuardAside, "owner.json"), "utf8"), new RegExp(token(60)), "kept as it was");
    // Nothing else was made or left (the sweep's own aside names included).
    assert.equal(readdirSync(dir).sort(), Object.values(kept).map((p) => p.slice(dir.length + 1)).sort());
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a taker killed (SIGKILL) right after moving a dead run's lock aside leaves it aside; the next run takes the lock and removes it", async () => {
  const dir = mkdtempSync(join(tmpdir(), "omnibatch-leftovers-"));
  try {
    const lockfile = join(dir, "m.lock.json");
    const lock = runLockPathOf(lockfile);
    // A lock left by a run killed on another host: stale by its age alone.
    mkdirSync(lock);
    writeFileSync(join(lock, "owner.json"), JSON.stringify({ pid: 1, host: `not-${hostname()}`, started: 1, token: "dead" }));
    const old = new Date(Date.now() - 120_000);
    utimesSync(lock, old, old);
    const a = execa("node", [...child, lockfile, "30000", "moved"], { reject: false, all: true, timeout: 90_000 });
    try {
      let out = "";
      a.stdout!.on("data", (chunk: Buffer) => (out += chunk.toString()));
      const until = Date.now() + 60_000;
      while (!out.includes("frozen") && a.exitCode === null && Date.now() < until) await sleep(20);
      assert.ok(out.includes("frozen"), `the taker stopped after its move (${out})`);
      a.kill("SIGKILL");
      await a;
      const asides = readdirSync(dir).filter((e) => e.endsWith(".aside"));
      assert.is(asides.length, 1, `the dead lock lies aside: ${readdirSync(dir).join(", ")}`);
      assert.match(readFileSync(join(dir, asides[0]!, "owner.json"), "utf8"), /"dead"/);
      await holdAndRelease(lockfile, 30_000);
      // Gone, with nothing of the sweep left, the killed taker's guard (its pid dead) too.
      assert.equal(readdirSync(dir), [], `left: ${readdirSync(dir).join(", ")}`);
    } finally {
      a.kill("SIGKILL");
      await a.catch(() => undefined);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
