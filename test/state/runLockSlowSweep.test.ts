// Guarantee: a run that takes the lock and finds many leftovers of killed runs beside it
// (a slow sweep: a big folder, a slow network file system) keeps its lock fresh on disk
// all the while: its heartbeat is refreshed before the sweep and beats during it, so no
// other run ever finds the lock stale, and its first confirm() succeeds (no needless exit
// 3). The sweep begins no folder past half the stale limit; what it leaves, the next run
// removes.
//
// Before: the sweep ran after the lock was placed and before the heartbeat started, so the
// lock looked stale to others once the sweep outlasted the stale limit (1,500 leftovers:
// about 2.7 s against a 1.25 s limit and margin).

import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { Effect, Exit, Scope } from "effect";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { acquireRunLock, inspectRunLock, runLockPathOf } from "../../src/state/RunLock.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const STALE_MS = 1_000;
const DEAD_PID = 2 ** 22 + 12347;
const LEFTOVERS = 1_500;

test("a slow sweep of leftovers never lets the new holder's lock look stale, and its first confirm succeeds", async () => {
  const dir = mkdtempSync(join(tmpdir(), "omnibatch-slowsweep-"));
  try {
    const lockfile = join(dir, "m.lock.json");
    const lock = runLockPathOf(lockfile);
    for (let i = 0; i < LEFTOVERS; i++) {
      const path = `${lock}.${i.toString(16).padStart(16, "0")}.aside`;
      mkdirSync(path);
      writeFileSync(join(path, "owner.json"), JSON.stringify({ pid: DEAD_PID, host: hostname(), started: 1, token: `t${i}` }));
    }
    const left = () => readdirSync(dir).filter((e) => e.endsWith(".aside")).length;
    // Another run's view of the lock, every 25 ms, while the holder takes it and sweeps.
    let watching = true;
    const seenStale: number[] = [];
    let looks = 0;
    const watcher = (async () => {
      const t0 = Date.now();
      while (watching && Date.now() - t0 < 60_000) {
        const seen = await inspectRunLock(lockfile, { staleMs: STALE_MS });
        looks += 1;
        if (seen?.stale) seenStale.push(Date.now() - seen.heartbeat);
        await sleep(25);
      }
    })();
    const scope = await Effect.runPromise(Scope.make());
    try {
      const held = await Effect.runPromise(Scope.extend(acquireRunLock(lockfile, { staleMs: STALE_MS }), scope));
      assert.ok(await held.confirm(), "the first confirm succeeds");
      await sleep(300);
      watching = false;
      await watcher;
      assert.ok(looks > 5, `the watcher looked (${looks} times)`);
      assert.equal(seenStale, [], "no other run ever found the lock stale (heartbeat ages seen stale, ms)");
      assert.ok(await held.confirm(), "still held");
      assert.ok(left() < LEFTOVERS, `the sweep removed some (${left()} left)`);
    } finally {
      watching = false;
      await watcher;
      await Effect.runPromise(Scope.close(scope, Exit.void));
    }
    // What one sweep left, the next runs remove (each begun for at most half the limit, so
    // how many a run removes depends on the machine's speed: 40 runs removed about 1,100 at
    // load 25). Bounded by time, and in count by one run per leftover.
    const sweepsFrom = Date.now();
    for (let run = 0; run < LEFTOVERS && left() > 0 && Date.now() - sweepsFrom < 120_000; run++) {
      await Effect.runPromise(Effect.scoped(acquireRunLock(lockfile, { staleMs: STALE_MS })));
    }
    assert.equal(readdirSync(dir), [], "every leftover removed, nothing else left");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
