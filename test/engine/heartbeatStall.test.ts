// Guarantee: a rerun with nothing to do whose event loop was blocked past the run lock's
// stale limit (a 100,000-task start on a loaded machine: lockfile parse, start pass) ends
// done, as nobody took its lock over; but if another run did take it over meanwhile, it
// fails saying so, writing nothing.
//
// Review finding (src/state/RunLock.ts, LockStore.ts, fixed there): the run's own late
// heartbeat was read as a lost lock. The final flush, with nothing to write, still
// confirmed the lock, found the last heartbeat older than the stale limit and failed
// (LockfileWriteError); the heartbeat's next beat did the same (RunLockLost). The
// block here is synchronous and longer than the stale limit the tests inject (500 ms),
// made in the run's own start event: deterministic. Real emulator, real lock folder.

import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { exitCodeFor } from "../../src/exit/ExitCode.js";
import { startEmulator, type RunningEmulator } from "../../src/emulator/Emulator.js";
import { makePolicy } from "../../src/policy/Policy.js";
import type { RunEvent } from "../../src/engine/RunEvent.js";
import { runLoadedManifest } from "../../src/run/runLoadedManifest.js";
import { runLockPathOf } from "../../src/state/RunLock.js";
import { tempDir, testManifest } from "./testManifest.js";

const t = suite("a run blocked past the run lock's stale limit");
let emu: RunningEmulator;
const STALE_MS = 500;

t.before(async () => {
  emu = await startEmulator({ timing: { scale: 0.05 } }, { port: 0 });
});
t.after(async () => {
  await emu.close();
});

const blockFor = (ms: number) => {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    // the event loop (and the heartbeat on it) blocked
  }
};

const rerun = (m: ReturnType<typeof testManifest>, onStart: () => void) =>
  runLoadedManifest(m, {
    baseUrl: emu.url,
    env: { OMNIBATCH_API_KEY: emu.apiKey },
    policy: makePolicy(0.05),
    reports: false,
    callbacks: false,
    maxWaitMs: 30_000,
    lockStore: { staleMs: STALE_MS, heartbeatMs: 50 },
    onEvent: (event: RunEvent) => {
      if (event.type === "start") onStart();
    },
  }).then(
    (summary) => ({ summary }),
    (error: unknown) => ({ error }),
  );

const creates = () => Object.values(emu.stats().creates).reduce((a, b) => a + b, 0);

t("a rerun with nothing to do, blocked twice the stale limit: ends done (exit 0), creating nothing", async () => {
  const tmp = tempDir();
  try {
    const m = testManifest(tmp.dir, { tasks: [0, 1].map((i) => ({ job: "stills", kind: "image" as const, prompt: `still ${i}` })) });
    const first = await rerun(m, () => undefined);
    assert.ok("summary" in first && first.summary.exitCode === 0, `the first run is done: ${JSON.stringify(first)}`);
    const before = creates();
    const ended = await rerun(m, () => blockFor(STALE_MS * 2));
    assert.ok("summary" in ended, `the rerun ends without an error: ${String((ended as { error?: Error }).error?.message)}`);
    assert.is(ended.summary.exitCode, 0);
    assert.is(creates(), before, "nothing created");
  } finally {
    tmp.remove();
  }
});

t("a rerun with nothing to do, blocked past the stale limit while another run took its lock over: fails naming the takeover, nothing written, the other run's lock left", async () => {
  const tmp = tempDir();
  try {
    const m = testManifest(tmp.dir, { tasks: [0, 1].map((i) => ({ job: "stills", kind: "image" as const, prompt: `still ${i}` })) });
    const first = await rerun(m, () => undefined);
    assert.ok("summary" in first && first.summary.exitCode === 0, `the first run is done: ${JSON.stringify(first)}`);
    const bytes = readFileSync(m.lockfilePath);
    const owner = join(runLockPathOf(m.lockfilePath), "owner.json");
    const ended = await rerun(m, () => {
      blockFor(STALE_MS * 2);
      // Another run found the lock stale and took it over while this one was blocked.
      const mine = JSON.parse(readFileSync(owner, "utf8")) as Record<string, unknown>;
      writeFileSync(owner, JSON.stringify({ ...mine, token: "another-run" }));
    });
    assert.ok("error" in ended, `the rerun fails: ${JSON.stringify(ended)}`);
    // RunLockLost (exit 3: run again once the other run has ended) whether the heartbeat
    // or the run's last flush sees the takeover first (the flush's refusal used to end as
    // LockfileWriteError, exit 2, as for a damaged disk).
    const tag = (ended.error as { _tag?: string })._tag;
    assert.is(tag, "RunLockLost", `ended with ${tag}`);
    assert.is(exitCodeFor(ended.error), 3);
    assert.match((ended.error as Error).message, /taken over by another run/);
    assert.equal(readFileSync(m.lockfilePath), bytes, "the lockfile is as the first run left it");
    assert.match(readFileSync(owner, "utf8"), /another-run/);
  } finally {
    tmp.remove();
  }
});

t.run();
