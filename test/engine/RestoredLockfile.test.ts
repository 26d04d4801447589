// Adversarial: a lockfile restored from git (older than the service's state) right after
// a run whose create landed, against a service with a visibility lag well inside the
// unknown-outcome window that makes a second task for a reused external id. The start-up
// lookup by external id misses the young task; the run trace (X.lock.json.lastrun, which
// git does not restore) says the lockfile is not the one the last run left, so the run
// looks the task up again after the window before creating it (it used to create it a
// second time). And a lockfile that is the one the last run left waits for nothing.
// Loopback emulator; short runs bounded by --max-wait.

import { rmSync } from "node:fs";
import { Duration } from "effect";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { makePolicy } from "../../src/policy/Policy.js";
import { journalPathOf } from "../../src/state/LockJournal.js";
import { runLoadedManifest } from "../../src/run/runLoadedManifest.js";
import { startEmulator, type RunningEmulator } from "../../src/emulator/Emulator.js";
import { tempDir, testManifest } from "./testManifest.js";

const policy = makePolicy(0.01);
const t = suite("restored lockfile");
let emu: RunningEmulator;

t.before(async () => {
  emu = await startEmulator({ timing: { scale: 0.5 } }, { port: 0 });
});
t.after(async () => {
  await emu.close();
});

/** A run stopped (as by Ctrl-C) as soon as its first task is created. */
const firstRunUntilCreated = async (m: ReturnType<typeof testManifest>) => {
  const stop = new AbortController();
  await runLoadedManifest(m, {
    baseUrl: emu.url,
    env: { OMNIBATCH_API_KEY: emu.apiKey },
    policy,
    maxWaitMs: 10_000,
    reports: false,
    signal: stop.signal,
    onEvent: (e) => e.type === "task" && e.state === "submitted" && stop.abort(),
  });
};

t("a lockfile restored from git just after a create landed: the rerun adopts the task, never creates it a second time", async () => {
  const tmp = tempDir();
  emu.reset();
  // Lag 5 s: past the rerun's first lookup, below the unknown-outcome window (6 s here).
  emu.configure({ faults: { duplicateExternalId: "create-second", visibilityLagMs: 5_000 } });
  try {
    const m = testManifest(tmp.dir, { name: "restored", tasks: [{ job: "v", kind: "video", prompt: "once" }] });
    const id = m.tasks[0]!.id;
    await firstRunUntilCreated(m);
    assert.is(emu.stats().creates[id], 1, "the first run created it");
    // `git checkout test.lock.json` from before the run: no record of the task.
    rmSync(m.lockfilePath, { force: true });
    rmSync(journalPathOf(m.lockfilePath), { force: true });
    const events: string[] = [];
    const second = await runLoadedManifest(m, {
      baseUrl: emu.url,
      env: { OMNIBATCH_API_KEY: emu.apiKey },
      policy: { ...policy, unknownOutcomeWindow: Duration.seconds(6) },
      maxWaitMs: 15_000,
      reports: false,
      onEvent: (e) => e.type === "notice" && events.push(e.message),
    });
    assert.is(emu.stats().creates[id], 1, "created once across both runs");
    assert.is(second.exitCode, 0, JSON.stringify(second));
    // The mechanism at work, unless the machine was so slow that the task was visible at the first lookup.
    const waited = events.some((m) => /not the lockfile the last run here left/.test(m));
    const foundAtOnce = events.some((m) => /found 1 task\(s\) at the service that the lockfile did not record/.test(m));
    assert.ok(waited || foundAtOnce, events.join("\n"));
  } finally {
    tmp.remove();
  }
});

t("the lockfile the last run left (unchanged): new tasks are created at once, no wait", async () => {
  const tmp = tempDir();
  emu.reset();
  emu.configure({ faults: { duplicateExternalId: "create-second", visibilityLagMs: 500 } });
  try {
    const one = testManifest(tmp.dir, { name: "kept", tasks: [{ job: "v", kind: "video", prompt: "once" }] });
    await firstRunUntilCreated(one);
    assert.is(emu.stats().creates[one.tasks[0]!.id], 1);
    // The manifest grows by one task; the lockfile is untouched since the run.
    const two = testManifest(tmp.dir, { name: "kept", tasks: [{ job: "v", kind: "video", prompt: "once" }, { job: "v", kind: "video", prompt: "twice" }] });
    const events: string[] = [];
    // A window (10 s) longer than the run may last (4 s): a wait would leave the new task uncreated.
    await runLoadedManifest(two, {
      baseUrl: emu.url,
      env: { OMNIBATCH_API_KEY: emu.apiKey },
      policy: { ...policy, unknownOutcomeWindow: Duration.seconds(10) },
      maxWaitMs: 4_000,
      onEvent: (e) => e.type === "notice" && events.push(e.message),
    });
    assert.not.ok(events.some((m) => /not the lockfile the last run here left/.test(m)), events.join("\n"));
    for (const t of two.tasks) assert.is(emu.stats().creates[t.id], 1, t.id);
  } finally {
    tmp.remove();
  }
});

t.run();
