// Emulated runs (runLoadedManifest with `emulate`): they use the emulated lockfile and
// outputs folder. The emulated service keeps its tasks between runs (M.emulate.state.json):
// tasks an earlier emulated run left unfinished are followed there, never made again, and
// a result deleted from disk is fetched again. Without the kept state a new emulated
// service starts: unfinished tasks are made again (no lookups), downloaded ones are kept.

import { existsSync, rmSync } from "node:fs";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { emulatedPaths, emulatorStatePath } from "../../src/run/EmulatedRun.js";
import { makePolicy } from "../../src/policy/Policy.js";
import { runLoadedManifest } from "../../src/run/runLoadedManifest.js";
import type { RunEvent } from "../../src/engine/RunEvent.js";
import { readLockFile } from "../../src/state/readLockFile.js";
import { tempDir, testManifest } from "./testManifest.js";

const t = suite("engine: emulated runs");
const policy = makePolicy(0.01);

const tasks = [
  { job: "keys", kind: "image" as const, prompt: "a cat", n: 2 },
  { job: "keys", kind: "image" as const, prompt: "a dog" },
  { job: "clips", kind: "video" as const, prompt: "a boat" },
  { job: "clips", kind: "video" as const, prompt: "a car" },
];

/** A first run stopped as soon as the emulator has accepted a task; the lockfile as it left it. */
const stoppedRun = async (m: ReturnType<typeof testManifest>) => {
  const paths = emulatedPaths(m);
  // Slow tasks (about 1 to 3 s), stopped as soon as the emulator has accepted one: the
  // first run stops with tasks in flight (a stop by event, not by time: steady under load).
  const stop = new AbortController();
  const first = await runLoadedManifest(m, {
    emulate: { timing: { scale: 1 } },
    policy,
    signal: stop.signal,
    onEvent: (e) => {
      if (e.type === "task" && e.state === "submitted") stop.abort();
    },
    maxWaitMs: 20_000,
  });
  assert.is(first.exitCode, 3);
  const stopped = (await readLockFile(paths.lockfilePath))!;
  const inFlight = Object.values(stopped.tasks).filter((x) => x.task_id !== undefined && x.state !== "downloaded");
  assert.ok(inFlight.length > 0, "tasks were in flight at the stop");
  return stopped;
};

t("a stopped emulated run leaves tasks in flight; the next emulated run follows them on the kept emulated service, makes none again, and ends done", async () => {
  const tmp = tempDir();
  try {
    const m = testManifest(tmp.dir, { tasks });
    const paths = emulatedPaths(m);
    const stopped = await stoppedRun(m);
    assert.ok(existsSync(emulatorStatePath(paths.lockfilePath)), "the stopped run kept its emulated service");
    const sent = Object.entries(stopped.tasks).filter(([, x]) => x.task_id !== undefined);
    const second = await runLoadedManifest(m, { emulate: { timing: { scale: 0.1 } }, policy });
    assert.is(second.exitCode, 0, JSON.stringify(second.failures));
    assert.is(second.created + second.adopted, tasks.length - sent.length, "only the tasks never sent are created (or found by their external id)");
    const lock = (await readLockFile(paths.lockfilePath))!;
    for (const [id, x] of sent) assert.is(lock.tasks[id]!.task_id, x.task_id, `${id} is the task the first run sent`);
    assert.ok(Object.values(lock.tasks).every((x) => x.state === "downloaded"));
  } finally {
    tmp.remove();
  }
});

t("a stopped emulated run whose kept service is gone: the next emulated run makes the tasks in flight again on its new emulator and ends done", async () => {
  const tmp = tempDir();
  try {
    const m = testManifest(tmp.dir, { tasks });
    const paths = emulatedPaths(m);
    const stopped = await stoppedRun(m);
    rmSync(emulatorStatePath(paths.lockfilePath));

    const events: RunEvent[] = [];
    const second = await runLoadedManifest(m, { emulate: { timing: { scale: 0.1 } }, policy, onEvent: (e) => events.push(e) });
    assert.is(second.exitCode, 0, JSON.stringify(second.failures));
    assert.is(second.adopted, 0);
    const notDone = Object.values(stopped!.tasks).filter((x) => x.state !== "downloaded").length;
    assert.is(second.created, notDone, "each unfinished task created once on the new emulator");
    assert.equal(events[0]?.type === "start" && events[0].emulated, true);
    const last = events.at(-1);
    assert.ok(last?.type === "summary" && last.emulated === true);
    const lock = await readLockFile(paths.lockfilePath);
    assert.ok(Object.values(lock!.tasks).every((x) => x.state === "downloaded"));
    assert.not.ok(existsSync(m.lockfilePath), "the real lockfile is never written");
    assert.not.ok(existsSync(m.outputsDir), "the real outputs folder is never written");
  } finally {
    tmp.remove();
  }
});

for (const kept of [true, false]) {
  t(
    kept
      ? "after an emulated run, a downloaded task whose files were deleted is fetched again from the kept emulated service, not made again"
      : "after an emulated run whose kept service is gone, a downloaded task whose files were deleted is made again on the new emulator; the others are kept",
    async () => {
      const tmp = tempDir();
      try {
        const m = testManifest(tmp.dir, { tasks });
        const paths = emulatedPaths(m);
        const first = await runLoadedManifest(m, { emulate: { timing: { scale: 0.1 } }, policy });
        assert.is(first.exitCode, 0);
        assert.is(first.emulated, true);
        assert.is(first.lockfile, paths.lockfilePath);
        assert.is(first.outputs, paths.outputsDir);
        const lock = await readLockFile(paths.lockfilePath);
        const [id, victim] = Object.entries(lock!.tasks).find(([, x]) => x.kind === "video")!;
        rmSync(join(paths.outputsDir, victim.outputs.find((o) => o.path)!.path!));
        if (!kept) rmSync(emulatorStatePath(paths.lockfilePath));
        const second = await runLoadedManifest(m, { emulate: { timing: { scale: 0.1 } }, policy });
        assert.is(second.exitCode, 0, JSON.stringify(second.failures));
        assert.is(second.created, kept ? 0 : 1);
        assert.is(second.downloaded, 1);
        const after = await readLockFile(paths.lockfilePath);
        assert.is(after!.tasks[id]!.state, "downloaded");
        assert.ok(existsSync(join(paths.outputsDir, after!.tasks[id]!.outputs.find((o) => o.path)!.path!)));
        if (kept) assert.is(after!.tasks[id]!.task_id, victim.task_id, "the same task");
      } finally {
        tmp.remove();
      }
    },
  );
}

t.run();
