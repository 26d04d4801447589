// Guarantee: a holder whose heartbeat went late (past the stale limit) keeps its lock when
// the takeover guard it finds was left by a taker that died on this host (killed with
// SIGKILL in the middle of taking the lock over, before moving it): the guard's owner file
// names a pid that no longer exists, so nobody is taking over. A guard whose taker is alive
// (here: frozen with SIGSTOP at the same step) still makes the holder stop.
//
// Before: any guard made since the holder took its lock made it stop, a dead taker's too.
//
// Also: the guard of a taker dead here is removed by the holder's heartbeat (before its pid
// is reused and the guard would count again), and never while its taker is alive.
// Before: nobody removed it.

import { execa } from "execa";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { Effect, Exit, Scope } from "effect";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { LockfileBusy } from "../../src/state/LockfileError.js";
import { acquireRunLock, runLockPathOf } from "../../src/state/RunLock.js";
import { staleMarginMs } from "../../src/state/RunLockRules.js";
import { childScript } from "../childScript.js";

const child = await childScript(new URL("./takeoverChild.ts", import.meta.url));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const STALE_MS = 1_000;
const DEAD_PID = 2 ** 22 + 12347;

const processState = (pid: number): string | undefined => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
  } catch {
    return undefined;
  }
};

for (const taker of ["killed", "frozen"] as const) {
  test(`a late holder finds the guard of a taker ${taker === "killed" ? "killed (SIGKILL) mid-takeover: it keeps its lock" : "frozen (SIGSTOP, alive) mid-takeover: it stops"}`, async () => {
    const dir = mkdtempSync(join(tmpdir(), "omnibatch-deadtaker-"));
    const lockfile = join(dir, "m.lock.json");
    const scope = await Effect.runPromise(Scope.make());
    // No heartbeat of its own during the test: its heartbeat goes late as in a blocked run.
    const held = await Effect.runPromise(Scope.extend(acquireRunLock(lockfile, { staleMs: STALE_MS, heartbeatMs: 600_000 }), scope));
    await sleep(STALE_MS + staleMarginMs(STALE_MS) + 300);
    const a = execa("node", [...child, lockfile, String(STALE_MS), "judged"], { reject: false, all: true, timeout: 90_000 });
    try {
      let out = "";
      a.stdout!.on("data", (chunk: Buffer) => (out += chunk.toString()));
      const until = Date.now() + 60_000;
      while (!(out.includes("frozen") && processState(a.pid!) === "T") && a.exitCode === null && Date.now() < until) await sleep(20);
      assert.ok(out.includes("frozen") && processState(a.pid!) === "T", `the taker judged the lock stale under its guard and stopped (${out})`);
      const guardOwner = JSON.parse(readFileSync(join(`${runLockPathOf(lockfile)}.takeover`, "owner.json"), "utf8")) as { pid: number };
      assert.is(guardOwner.pid, a.pid, "the guard names the taker");
      if (taker === "killed") {
        a.kill("SIGKILL");
        await a;
      }
      const confirmed = await held.confirm();
      if (taker === "frozen") {
        assert.is(confirmed, false, "a live taker's guard: the late holder stops");
        assert.ok(held.lost());
        return;
      }
      assert.is(confirmed, true, "a dead taker's guard: the late holder goes on");
      assert.not.ok(held.lost());
      assert.is((JSON.parse(readFileSync(join(runLockPathOf(lockfile), "owner.json"), "utf8")) as { token: string }).token, held.holder.token);
      // Its heartbeat refreshed: a run starting now finds the lock held.
      const other = await Effect.runPromiseExit(Effect.scoped(acquireRunLock(lockfile, { staleMs: STALE_MS, heartbeatMs: 600_000 })));
      assert.ok(Exit.isFailure(other) && other.cause._tag === "Fail" && other.cause.error instanceof LockfileBusy, "a new run is refused");
      assert.ok(await held.confirm(), "and the holder still holds it");
    } finally {
      a.kill("SIGCONT");
      a.kill("SIGKILL");
      await a.catch(() => undefined);
      await Effect.runPromise(Scope.close(scope, Exit.void));
      rmSync(dir, { recursive: true, force: true });
    }
  });
}

test("the holder's heartbeat removes a guard whose taker died here, and leaves one whose taker lives until it dies", async () => {
  const dir = mkdtempSync(join(tmpdir(), "omnibatch-deadtaker-"));
  const lockfile = join(dir, "m.lock.json");
  const guard = `${runLockPathOf(lockfile)}.takeover`;
  const scope = await Effect.runPromise(Scope.make());
  const taker = execa("sleep", ["60"], { reject: false });
  try {
    const held = await Effect.runPromise(Scope.extend(acquireRunLock(lockfile, { staleMs: STALE_MS, heartbeatMs: 50 }), scope));
    const placeGuard = (pid: number) => {
      mkdirSync(guard);
      writeFileSync(join(guard, "owner.json"), JSON.stringify({ pid, host: hostname(), started: Date.now(), token: "0123456789abcdef" }));
    };
    const waitGone = async () => {
      const until = Date.now() + 20_000;
      while (existsSync(guard) && Date.now() < until) await sleep(20);
    };
    // A taker alive here (a live pid): its guard stays, beat after beat.
    placeGuard(taker.pid!);
    await sleep(500);
    assert.ok(existsSync(guard), "a live taker's guard is left");
    // It dies: the next beats remove its guard.
    taker.kill("SIGKILL");
    await taker;
    await waitGone();
    assert.not.ok(existsSync(guard), "the dead taker's guard is removed");
    // One placed by a taker already dead (its pid gone): removed too.
    placeGuard(DEAD_PID);
    await waitGone();
    assert.not.ok(existsSync(guard), "removed");
    assert.equal(readdirSync(dir), ["m.lock.json.running"], "nothing of the removals left beside the lock");
    assert.ok(await held.confirm(), "the holder holds its lock throughout");
  } finally {
    taker.kill("SIGKILL");
    await taker;
    await Effect.runPromise(Scope.close(scope, Exit.void));
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
