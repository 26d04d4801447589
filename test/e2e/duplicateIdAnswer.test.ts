// A 1201 is a parameter error; only one whose own words say the external id is in use
// means the task exists. Against the real emulator, through a hostile proxy
// (hostileProxy.ts): a 1201 about the prompt that quotes our external id is the task's
// rejection (recorded rejected, exit 1, nothing created), not a task to adopt. Before, it
// was taken as "id in use": looked up for minutes, never settled, left for a later run
// (exit 3), every run again. And a real "id in use" answer (the emulator's, a task an
// earlier run created whose lockfile was lost, not yet visible to lookups) is still
// adopted once visible: created once either way.

import { rmSync } from "node:fs";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { startEmulator, type RunningEmulator } from "../../src/emulator/Emulator.js";
import { readLockFile } from "../../src/state/readLockFile.js";
import { startProxy, type HostileProxy } from "./hostileProxy.js";
import { assertAllResults, runCli, workspace } from "./runFixture.js";

const yaml = (name: string) => `version: 1
name: ${name}
outputs: out
concurrency: 4
jobs:
  stills:
    kind: image
    matrix:
      subject: [apple, boat, chair]
    prompt: "a {{ subject }} on a table"
`;

const isImageCreate = (req: { method: string; url: string }) => req.method === "POST" && req.url.startsWith("/v1/images/omni-image");

let emu: RunningEmulator;
let proxy: HostileProxy | undefined;
const t = suite("1201 answers and the external id");
t.before(async () => {
  emu = await startEmulator({ timing: { scale: 0.05 } }, { port: 0 });
});
t.after(async () => {
  await emu.close();
});
t.after.each(async () => {
  await proxy?.close();
  proxy = undefined;
});

t("a 1201 about the prompt that quotes the external id: the task is rejected with that reason, never adopted, nothing created", async () => {
  emu.reset();
  proxy = await startProxy(emu.url, {
    intercept: (req) => {
      if (!isImageCreate(req) || !req.body.includes("chair")) return undefined;
      const id = (JSON.parse(req.body) as { external_task_id: string }).external_task_id;
      const message = `prompt: the word 'chair' is not allowed for task ${id}; external_task_id ${id} already used in this request log`;
      return { status: 400, body: JSON.stringify({ code: 1201, message, request_id: "r-1" }) };
    },
  });
  const ws = workspace(yaml("quoted"));
  try {
    // Bounded: before, the run looked the task up until --max-wait and stopped (exit 3).
    const run = await runCli(ws, ["--base-url", proxy.url, "--no-callbacks", "--max-wait", "40s"], { OMNIBATCH_API_KEY: emu.apiKey });
    assert.is(run.exitCode, 1, run.all);
    assert.not.match(run.all ?? "", "the service says this id is in use");
    const lock = (await readLockFile(ws.lockfile))!;
    const chair = Object.entries(lock.tasks).find(([, task]) => JSON.stringify(task.vars).includes("chair"));
    assert.ok(chair, "the chair still is recorded");
    assert.is(chair![1].state, "rejected");
    assert.is(chair![1].error?.code, 1201);
    assert.match(chair![1].error?.message ?? "", "prompt: the word 'chair' is not allowed");
    const others = Object.entries(lock.tasks).filter(([id]) => id !== chair![0]);
    assert.equal(others.map(([, task]) => task.state), ["downloaded", "downloaded"]);
    const creates = (emu.stats() as { creates: Record<string, number> }).creates;
    assert.is(creates[chair![0]], undefined, "the rejected task was never created");
    assert.equal(Object.values(creates), [1, 1]);
  } finally {
    ws.remove();
  }
});

t("a real 'id in use' 1201 (the lockfile lost, the tasks not visible to lookups yet): adopted once visible, each created once", async () => {
  emu.reset();
  const ws = workspace(yaml("dupe"));
  const env = { OMNIBATCH_API_KEY: emu.apiKey };
  try {
    const first = await runCli(ws, ["--base-url", emu.url, "--no-callbacks", "--quiet"], env);
    assert.is(first.exitCode, 0, first.all);
    // As if another CI job had just made them: no lockfile, no results here, and the
    // service's lookups do not show tasks younger than 15 s (the first run's, for a while yet).
    rmSync(ws.lockfile, { force: true });
    rmSync(ws.outputs, { recursive: true, force: true });
    emu.configure({ faults: { visibilityLagMs: 15_000 } });
    const run = await runCli(ws, ["--base-url", emu.url, "--no-callbacks"], env);
    assert.is(run.exitCode, 0, run.all);
    assert.match(run.all ?? "", "the service says this id is in use");
    await assertAllResults(ws);
    const creates = (emu.stats() as { creates: Record<string, number> }).creates;
    assert.equal(Object.values(creates), [1, 1, 1], "each task created once");
  } finally {
    emu.configure({ faults: { visibilityLagMs: 0 } });
    ws.remove();
  }
});

t.run();
