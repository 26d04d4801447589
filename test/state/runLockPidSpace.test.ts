// Guarantee: a run lock is taken over at once (its owner dead) only when its owner file's
// pid is provably dead in this very pid space: the pid is one kill() takes and kill()
// answers ESRCH, and the owner file's host key (hostname, boot id, pid namespace) is ours.
// A pid kill() cannot take (2^31, a fraction, a negative number: a process group) or an
// owner of another pid space under the same hostname (a container sharing the folder) is
// of unknown liveness: its lock is stale only by age. An owner file without a key (an
// older build's) is judged by its hostname, as it was.
//
// Before: any pid kill() threw on counted as dead (ERR_INVALID_ARG_TYPE), and "this host"
// was the hostname alone, so a run in another pid namespace of the same hostname took a
// live run's fresh lock at once.

import { execa } from "execa";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { Effect, Exit, Scope } from "effect";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { LockfileBusy } from "../../src/state/LockfileError.js";
import { acquireRunLock, runLockPathOf } from "../../src/state/RunLock.js";
import { childScript } from "../childScript.js";

const child = await childScript(new URL("./takeoverChild.ts", import.meta.url));
const DEAD_PID = 2 ** 22 + 12347;

/** Our own host key, as this build writes it in its owner file. */
const ourHostKey = async (): Promise<unknown> => {
  const dir = mkdtempSync(join(tmpdir(), "omnibatch-pidspace-"));
  try {
    const lockfile = join(dir, "m.lock.json");
    return await Effect.runPromise(
      Effect.scoped(
        Effect.map(acquireRunLock(lockfile), () => (JSON.parse(readFileSync(join(runLockPathOf(lockfile), "owner.json"), "utf8")) as { hostKey?: unknown }).hostKey),
      ),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
};

/** Whether a run takes a fresh lock whose owner file is `owner` (true) or is refused (false). */
const takesFreshLock = async (owner: Record<string, unknown>): Promise<boolean> => {
  const dir = mkdtempSync(join(tmpdir(), "omnibatch-pidspace-"));
  try {
    const lockfile = join(dir, "m.lock.json");
    mkdirSync(runLockPathOf(lockfile));
    writeFileSync(join(runLockPathOf(lockfile), "owner.json"), JSON.stringify({ started: Date.now(), token: "0123456789abcdef", ...owner }));
    const exit = await Effect.runPromiseExit(Effect.scoped(acquireRunLock(lockfile, { staleMs: 30_000, heartbeatMs: 600_000 })));
    if (Exit.isSuccess(exit)) return true;
    assert.ok(exit.cause._tag === "Fail" && exit.cause.error instanceof LockfileBusy, `refused as busy: ${String(exit.cause)}`);
    return false;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
};

test("the owner file records the host key: hostname, boot id, pid namespace", async () => {
  const key = await ourHostKey();
  assert.type(key, "string");
  assert.ok((key as string).startsWith(`${hostname()}/`), String(key));
  assert.is((key as string).split("/").length, 3, String(key));
});

test("a pid kill() cannot take is of unknown liveness: its fresh lock is not taken", async () => {
  for (const pid of [2 ** 31, 1.5, -12345, 2 ** 60]) {
    assert.not.ok(await takesFreshLock({ pid, host: hostname() }), `pid ${pid}`);
  }
});

test("a dead pid takes the lock at once only in the same pid space; an older owner file without a key by hostname", async () => {
  const key = await ourHostKey();
  assert.ok(await takesFreshLock({ pid: DEAD_PID, host: hostname(), hostKey: key }), "our key, pid dead: taken at once");
  assert.not.ok(await takesFreshLock({ pid: DEAD_PID, host: hostname(), hostKey: `${hostname()}/another-boot/1` }), "another pid space of our hostname");
  assert.not.ok(await takesFreshLock({ pid: DEAD_PID, host: hostname(), hostKey: 7 }), "a key that is not a string");
  assert.ok(await takesFreshLock({ pid: DEAD_PID, host: hostname() }), "no key (an older build), our hostname, pid dead: taken as before");
  assert.not.ok(await takesFreshLock({ pid: DEAD_PID, host: `not-${hostname()}` }), "another host");
  assert.not.ok(await takesFreshLock({ pid: process.pid, host: hostname(), hostKey: key }), "alive");
});

test("a run in another pid namespace of the same hostname (unshare) does not take a live run's fresh lock", async () => {
  // Needs unprivileged user and pid namespaces; where they are refused, the case cannot be made here.
  const probe = await execa("unshare", ["-Upf", "--map-root-user", "--mount-proc", "true"], { reject: false, timeout: 30_000 });
  if (probe.exitCode !== 0) {
    console.log(`  (skipped: unshare refused here: ${probe.stderr.trim()})`);
    return;
  }
  const dir = mkdtempSync(join(tmpdir(), "omnibatch-pidspace-"));
  const scope = await Effect.runPromise(Scope.make());
  try {
    const lockfile = join(dir, "m.lock.json");
    const held = await Effect.runPromise(Scope.extend(acquireRunLock(lockfile, { staleMs: 30_000 }), scope));
    const other = await execa("unshare", ["-Upf", "--map-root-user", "--mount-proc", process.execPath, ...child, lockfile, "30000", "never"], {
      reject: false,
      all: true,
      timeout: 90_000,
    });
    assert.match(other.stdout, /"held":false,"error":"LockfileBusy"/, `the other namespace's run is refused (${other.all})`);
    assert.ok(await held.confirm(), "the live holder still holds its lock");
  } finally {
    await Effect.runPromise(Scope.close(scope, Exit.void));
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
