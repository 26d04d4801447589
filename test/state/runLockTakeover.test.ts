// Guarantee: of several runs starting at once over a stale run lock (or a stale takeover
// guard, or the claim folder an older build used to replace one), exactly one takes the
// lock over; a guard left by a taker that died is no obstacle for ever; a heartbeat is
// stale only past the stale limit and a margin (a coarse mtime, another host's clock).
//
// Review finding (src/state/RunLock.ts, fixed there): the run lock's stale takeover. A
// lock left by a dead run, and a takeover guard left by a run killed during its own
// takeover, must be taken over by exactly one of several runs starting at the same moment.
// With a stale guard, each starter does rm(guard) + mkdir(guard): one can remove the guard
// another has just made, both enter the takeover, and both end up "holding" the lock
// (seen in about 2 of 3 runs of this file: 300 rounds of 8 starters). Races are timing
// dependent: this test can pass by luck, never fail by luck.

import { mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { Effect, Exit, Scope } from "effect";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { LockfileBusy } from "../../src/state/LockfileError.js";
import { acquireRunLock, inspectRunLock, runLockPathOf } from "../../src/state/RunLock.js";
import { staleMarginMs } from "../../src/state/RunLockRules.js";

type Leftover = "none" | "guard" | "guard and claim";

const staleSetup = (leftover: Leftover) => {
  const dir = mkdtempSync(join(tmpdir(), "omnibatch-runlock-"));
  const lockfile = join(dir, "m.lock.json");
  const lockDir = runLockPathOf(lockfile);
  mkdirSync(lockDir);
  // A dead pid on this host: stale at once.
  writeFileSync(join(lockDir, "owner.json"), JSON.stringify({ pid: 2 ** 22 + 12345, host: hostname(), started: 1, token: "dead" }));
  const old = new Date(Date.now() - 120_000);
  utimesSync(lockDir, old, old);
  if (leftover !== "none") {
    mkdirSync(`${lockDir}.takeover`);
    utimesSync(`${lockDir}.takeover`, old, old);
  }
  // The claim folder a taker of an older build made to replace a stale guard, left by its
  // kill: that build then answered "busy" to every later takeover, for ever.
  if (leftover === "guard and claim") {
    mkdirSync(`${lockDir}.takeover.claim`);
    utimesSync(`${lockDir}.takeover.claim`, old, old);
  }
  return { dir, lockfile, lockDir };
};

for (const leftover of ["none", "guard", "guard and claim"] as const) {
  test(`8 runs start at once on a stale lock${leftover === "none" ? "" : ` with a stale takeover ${leftover === "guard" ? "guard" : "guard and its claim folder"}`}: exactly one holds it`, async () => {
    for (let round = 0; round < 300; round++) {
      const { dir, lockfile } = staleSetup(leftover);
      const scopes = await Promise.all(Array.from({ length: 8 }, () => Effect.runPromise(Scope.make())));
      try {
        const results = await Promise.all(
          scopes.map((scope) => Effect.runPromiseExit(Scope.extend(acquireRunLock(lockfile, { staleMs: 30_000, heartbeatMs: 60_000 }), scope))),
        );
        const held = results.filter(Exit.isSuccess);
        assert.is(held.length, 1, `round ${round}: ${held.length} runs hold the lock`);
        // And it is its lock on disk (no other starter moved it aside for good).
        assert.ok(await held[0]!.value.confirm(), `round ${round}: the holder's lock confirms`);
      } finally {
        for (const s of scopes) await Effect.runPromise(Scope.close(s, Exit.void));
        rmSync(dir, { recursive: true, force: true });
      }
    }
  });
}

const holdOnce = async (lockfile: string, staleMs: number) => {
  const scope = await Effect.runPromise(Scope.make());
  const exit = await Effect.runPromiseExit(Scope.extend(acquireRunLock(lockfile, { staleMs, heartbeatMs: 600_000 }), scope));
  await Effect.runPromise(Scope.close(scope, Exit.void));
  return exit;
};

test("a takeover guard whose owner died on this host (a taker killed mid-takeover a moment ago) is stale at once: the next run takes the lock over", async () => {
  const { dir, lockfile, lockDir } = staleSetup("none");
  try {
    mkdirSync(`${lockDir}.takeover`);
    writeFileSync(join(`${lockDir}.takeover`, "owner.json"), JSON.stringify({ pid: 2 ** 22 + 12346, host: hostname(), started: Date.now(), token: "killed-taker" }));
    const exit = await holdOnce(lockfile, 30_000);
    assert.ok(Exit.isSuccess(exit), `taken over: ${String(Exit.isFailure(exit) && exit.cause)}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a live run's heartbeat that looks just past the stale limit (a file system keeping whole seconds, another host's clock a little ahead) is not stale: within the margin the run is refused; past it, it takes over", async () => {
  const dir = mkdtempSync(join(tmpdir(), "omnibatch-runlock-"));
  try {
    const lockfile = join(dir, "m.lock.json");
    const lockDir = runLockPathOf(lockfile);
    mkdirSync(lockDir);
    // A live run on another host: only its heartbeat's age tells.
    writeFileSync(join(lockDir, "owner.json"), JSON.stringify({ pid: 1, host: `not-${hostname()}`, started: Date.now() - 60_000, token: "live" }));
    const at = (ageMs: number) => {
      const t = new Date(Date.now() - ageMs);
      utimesSync(lockDir, t, t);
    };
    at(30_000 + 900);
    assert.is((await inspectRunLock(lockfile, { staleMs: 30_000 }))?.stale, false, "within the margin: fresh");
    const refused = await holdOnce(lockfile, 30_000);
    assert.ok(Exit.isFailure(refused) && refused.cause._tag === "Fail" && refused.cause.error instanceof LockfileBusy, "refused as busy");
    assert.match(readFileSync(join(lockDir, "owner.json"), "utf8"), /"live"/);
    at(30_000 + staleMarginMs(30_000) + 1_000);
    assert.is((await inspectRunLock(lockfile, { staleMs: 30_000 }))?.stale, true, "past the margin: stale");
    assert.ok(Exit.isSuccess(await holdOnce(lockfile, 30_000)), "taken over");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
