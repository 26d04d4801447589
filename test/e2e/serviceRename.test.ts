// A lockfile written before the service's name was a setting (the spec's `svc`, against an
// emulator of that name) still resumes after the rename: a run interrupted with tasks in
// flight at a service named svc, the service then answering as the live one (kling),
// and the next run, with no --service, finds every task it recorded (the same ids: the
// default model is no part of a task's identity), creates none of them again, and
// finishes. The lockfile's recorded service (its base URL) is the same, so no region
// refusal either.

import { execa } from "execa";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { startEmulator, type RunningEmulator } from "../../src/emulator/Emulator.js";
import { specAnswers } from "../../src/emulator/EmulatorConfig.js";
import { readLockFile } from "../../src/state/readLockFile.js";
import { assertAllResults, bin, manifestYaml, workspace } from "./runFixture.js";

let em: RunningEmulator;
const t = suite("a lockfile of the svc era resumes after the rename");

t.before(async () => {
  em = await startEmulator({ ...specAnswers, timing: { scale: 1 }, slots: { video: 20, image: 40 } }, { port: 0 });
});
t.after(async () => {
  await em.close();
});

t("tasks in flight at a service named svc are found, not paid again, by a run speaking kling", async () => {
  const ws = workspace(manifestYaml("rename", { subjects: 2, moods: 2 }));
  try {
    const env = { OMNIBATCH_API_KEY: em.apiKey, OMNIBATCH_TIME_SCALE: "0.05" };
    const run = (args: readonly string[]) =>
      execa("node", [bin, "run", ws.manifest, "--base-url", em.url, "--yes", "--quiet", ...args], { cwd: ws.dir, reject: false, all: true, env, extendEnv: false });
    // The svc era: stopped (first SIGINT: a clean stop) once the first creates landed.
    const first = run(["--service", "svc"]);
    const until = Date.now() + 60_000;
    while (Object.keys(em.stats().creates).length < 4 && first.exitCode === null && Date.now() < until) await new Promise((r) => setTimeout(r, 25));
    first.kill("SIGINT");
    const stopped = await first;
    assert.is(stopped.exitCode, 3, stopped.all);
    const before = await readLockFile(ws.lockfile);
    const inFlight = Object.entries(before!.tasks).filter(([, task]) => task.state === "submitted" || task.state === "processing" || task.state === "submitting");
    assert.ok(inFlight.length > 0, "the lockfile records tasks still in flight at the service");
    const created = { ...em.stats().creates };

    // The service now answers as the live one: its name is kling, and every live answer.
    em.configure({ service: "kling", maxQueryIds: 20, answers: { imageNotFound: "400-1201", duplicateMessage: "live", unifiedImages: true, retryAfterSec: 1, requestIdHeader: true } });
    const resumed = await run([]);
    assert.is(resumed.exitCode, 0, resumed.all);
    await assertAllResults(ws);
    const after = em.stats().creates;
    for (const [id] of inFlight) assert.is(after[id], 1, `${id} was created once, in the svc era`);
    for (const [id, n] of Object.entries(created)) assert.is(after[id], n, `${id} not created again`);
    assert.ok(Object.values(after).every((n) => n === 1), JSON.stringify(after));
    // 2 stills, 2 clips and a move per still image (2 each): 8 tasks in all, each made once.
    assert.is(Object.keys(after).length, 8, JSON.stringify(after));
    assert.is(em.stats().rejections["1202"] ?? 0, 0, "no create sent to the old path");
  } finally {
    ws.remove();
  }
});

t.run();
