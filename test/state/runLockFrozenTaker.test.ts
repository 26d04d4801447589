// Guarantee: a run frozen (SIGSTOP) in the middle of its takeover of a stale run lock,
// past the stale limit, while a second run takes the lock over, does not go on as owner
// once thawed (SIGCONT): it is refused, and the second run keeps the lock (its owner file
// in place, its confirm true), so the two never both send creates.
//
// Review finding (src/state/RunLock.ts): the takeover guard of a frozen taker looked
// stale to the second taker, which replaced it and took the lock over; the first taker,
// thawed, went on from where it stopped: it removed the second run's lock and put its own
// in place. Each step is frozen at exactly (a test hook, `onTakeoverStep`) in a real
// child process, on real files.

import { execa } from "execa";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { Effect, Exit, Scope } from "effect";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { acquireRunLock, runLockPathOf } from "../../src/state/RunLock.js";
import { childScript } from "../childScript.js";

const child = await childScript(new URL("./takeoverChild.ts", import.meta.url));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const STALE_MS = 1_000;

const processState = (pid: number): string | undefined => {
  try {
    // /proc/<pid>/stat: "pid (comm) S ...": the state follows the last ")".
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
  } catch {
    return undefined;
  }
};

for (const step of ["judged", "moving"] as const) {
  test(`a taker frozen at "${step}" past the stale limit while a second run takes the lock over: thawed, it is refused, and the second run keeps the lock`, async () => {
    const dir = mkdtempSync(join(tmpdir(), "omnibatch-frozentaker-"));
    const lockfile = join(dir, "m.lock.json");
    const lockDir = runLockPathOf(lockfile);
    mkdirSync(lockDir);
    // Left by a killed run on another host: stale by its age alone.
    writeFileSync(join(lockDir, "owner.json"), JSON.stringify({ pid: 1, host: `not-${hostname()}`, started: 1, token: "dead" }));
    const old = new Date(Date.now() - 120_000);
    utimesSync(lockDir, old, old);
    const a = execa("node", [...child, lockfile, String(STALE_MS), step], { reject: false, all: true, timeout: 90_000 });
    const scope = await Effect.runPromise(Scope.make());
    try {
      let out = "";
      a.stdout!.on("data", (chunk: Buffer) => (out += chunk.toString()));
      const until = Date.now() + 60_000;
      while (!(out.includes("frozen") && processState(a.pid!) === "T") && a.exitCode === null && Date.now() < until) await sleep(20);
      assert.ok(out.includes("frozen") && processState(a.pid!) === "T", `the first taker is frozen at "${step}" (${out})`);
      // Its guard (and its judgement of the lock) now older than the stale limit and its margin.
      await sleep(STALE_MS * 2);
      const b = await Effect.runPromise(Scope.extend(acquireRunLock(lockfile, { staleMs: STALE_MS, heartbeatMs: 600_000 }), scope));
      a.kill("SIGCONT");
      const r = await a;
      const line = JSON.parse(r.stdout.trim().split("\n").at(-1)!) as { held: boolean; error?: string };
      assert.is(line.held, false, `the thawed taker went on as owner: ${r.all}`);
      assert.is(line.error, "LockfileBusy");
      assert.ok(await b.confirm(), "the second run's lock is still its own");
      assert.is((JSON.parse(readFileSync(join(lockDir, "owner.json"), "utf8")) as { token: string }).token, b.holder.token);
    } finally {
      a.kill("SIGCONT");
      a.kill("SIGKILL");
      await a.catch(() => undefined);
      await Effect.runPromise(Scope.close(scope, Exit.void));
      rmSync(dir, { recursive: true, force: true });
    }
  });
}

test.run();
