// A `succeeded` answer listing fewer results than the task must have (a video none; an
// `n: 2` image task one) is not final: the run asks again and downloads every result once
// the service lists them; a service that never lists them ends the run not 0, naming the
// missing results lost, with why, in the lockfile. Before: the first such answer was
// recorded `downloaded` with what it listed, exit 0, the second paid image never asked for.
// The built CLI against the real emulator behind a hostile proxy (hostileProxy.ts).

import { suite } from "uvu";
import * as assert from "uvu/assert";
import { startEmulator, type RunningEmulator } from "../../src/emulator/Emulator.js";
import { readLockFile } from "../../src/state/readLockFile.js";
import { startProxy, taskItems, type HostileProxy } from "./hostileProxy.js";
import { assertAllResults, manifestHead, runCli, stillsJob, workspace } from "./runFixture.js";

const yaml = (name: string) => `${manifestHead(name)}${stillsJob(["apple", "boat"])}    n: 2
  clips:
    kind: video
    matrix:
      mood: [calm]
    prompt: "a {{ mood }} street"
`;

/** Succeeded answers list one result fewer (an image task its first only, a video none): the first `times` per task. */
const shortAnswers = (times: number) => {
  const seen = new Map<string, number>();
  return (_req: unknown, answer: Record<string, unknown>) => {
    for (const t of taskItems(answer["data"])) {
      const id = String(t["id"] ?? t["task_id"]);
      if (t["status"] !== "succeeded" && t["task_status"] !== "succeed") continue;
      const n = (seen.get(id) ?? 0) + 1;
      seen.set(id, n);
      if (n > times) continue;
      if (Array.isArray(t["outputs"])) t["outputs"] = [];
      const result = t["task_result"] as { images?: unknown[] } | undefined;
      if (result?.images) result.images = result.images.slice(0, 1);
    }
    return answer;
  };
};

let emu: RunningEmulator;
let proxy: HostileProxy | undefined;
const t = suite("succeeded answers listing too few results");
t.before(async () => {
  emu = await startEmulator({ timing: { scale: 0.05 }, slots: { video: 10, image: 20 } }, { port: 0 });
});
t.after(async () => {
  await emu.close();
});
t.after.each(async () => {
  await proxy?.close();
  proxy = undefined;
});

const creates = () => Object.values(emu.stats().creates as Record<string, number>);

t("the first answers list too few: asked again, every result downloaded, each task created once, exit 0", async () => {
  emu.reset();
  proxy = await startProxy(emu.url, { rewrite: shortAnswers(2) });
  const ws = workspace(yaml("short-once"));
  try {
    const run = await runCli(ws, ["--base-url", proxy.url, "--no-callbacks", "--quiet"], { OMNIBATCH_API_KEY: emu.apiKey });
    assert.is(run.exitCode, 0, run.all);
    const lock = await assertAllResults(ws);
    const files = Object.values(lock.tasks).flatMap((task) => task.outputs.filter((o) => o.path !== undefined && o.deleted_at === undefined));
    assert.is(files.length, 2 * 2 + 1, "both images of each still and the clip");
    assert.equal(creates(), [1, 1, 1]);
  } finally {
    ws.remove();
  }
});

t("the service never lists them: the missing results are recorded lost with why, the run does not end 0, nothing is created again", async () => {
  emu.reset();
  proxy = await startProxy(emu.url, { rewrite: shortAnswers(Number.POSITIVE_INFINITY) });
  const ws = workspace(yaml("short-always"));
  try {
    const run = await runCli(ws, ["--base-url", proxy.url, "--no-callbacks", "--json"], { OMNIBATCH_API_KEY: emu.apiKey });
    assert.is(run.exitCode, 6, run.all);
    const summary = JSON.parse(run.stdout.trim().split("\n").at(-1)!);
    assert.is(summary.lost.length, 3, "one image of each still, and the clip");
    const lock = await readLockFile(ws.lockfile);
    for (const task of Object.values(lock!.tasks)) {
      assert.is(task.state, "downloaded");
      assert.is(task.outputs.filter((o) => o.variant === "main" && o.deleted_at !== undefined).length, 1, JSON.stringify(task.outputs));
      assert.match(task.error?.message ?? "", "result(s) lost: the service lists");
    }
    assert.equal(creates(), [1, 1, 1]);
    const again = await runCli(ws, ["--base-url", proxy.url, "--no-callbacks", "--quiet"], { OMNIBATCH_API_KEY: emu.apiKey });
    assert.is(again.exitCode, 6, `still lost on the next run: ${again.all}`);
    assert.equal(creates(), [1, 1, 1], "never paid again without --recreate-lost");
  } finally {
    ws.remove();
  }
});

t.run();
