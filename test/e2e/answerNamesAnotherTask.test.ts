// A create answer naming another task is never trusted: the service's echoed external id
// (video `external_id`, image `task_info.external_task_id`) is compared with ours. Two
// hostile services in front of the real emulator (hostileProxy.ts): one answers every
// create after the first with the first task's id (the external id left as ours, so the
// queries of that id echo the first task's), one echoes another external id in the create
// answer. Each task ends downloaded with its own task id, results and charge, created
// once. Before: the tasks were recorded downloaded with the first task's id, outputs and
// charge, and their own paid results never fetched.

import { suite } from "uvu";
import * as assert from "uvu/assert";
import { startEmulator, type RunningEmulator } from "../../src/emulator/Emulator.js";
import { startProxy, type HostileProxy } from "./hostileProxy.js";
import { assertAllResults, manifestHead, runCli, stillsJob, workspace } from "./runFixture.js";

const yaml = (name: string) => `${manifestHead(name)}${stillsJob(["apple", "boat", "chair"])}  clips:
    kind: video
    matrix:
      mood: [calm, busy]
    prompt: "a {{ mood }} street"
`;

const isCreate = (req: { method: string; url: string }) =>
  req.method === "POST" && (req.url.startsWith("/omni-video") || req.url.startsWith("/v1/images/omni-image"));

let emu: RunningEmulator;
let proxy: HostileProxy | undefined;
const t = suite("answers naming another task");
t.before(async () => {
  emu = await startEmulator({ timing: { scale: 0.05 }, slots: { video: 10, image: 10 } }, { port: 0 });
});
t.after(async () => {
  await emu.close();
});
t.after.each(async () => {
  await proxy?.close();
  proxy = undefined;
});

/** Each task downloaded with the task id the emulator gave its own external id, each id once, each created once. */
const assertOwnTasks = async (ws: ReturnType<typeof workspace>) => {
  const lock = await assertAllResults(ws);
  const stats = emu.stats() as { creates: Record<string, number> };
  assert.equal(Object.values(stats.creates), [1, 1, 1, 1, 1], "each task created once");
  const ids = Object.values(lock.tasks).map((task) => task.task_id);
  assert.is(new Set(ids).size, ids.length, `no two tasks share a task id: ${ids.join(", ")}`);
  // The emulator's own task for each external id (asked directly, not through the proxy).
  const headers = { authorization: `Bearer ${emu.apiKey}` };
  const images = (await (await fetch(`${emu.url}/v1/images/omni-image?pageNum=1&pageSize=500`, { headers })).json()) as { data: { task_id: string; task_info: { external_task_id: string } }[] };
  const videoIds = Object.entries(lock.tasks).filter(([, task]) => task.kind === "video").map(([id]) => id);
  const videos = (await (await fetch(`${emu.url}/tasks?external_task_ids=${videoIds.join(",")}`, { headers })).json()) as { data: { id: string; external_id: string }[] };
  const own = new Map([...images.data.map((i) => [i.task_info.external_task_id, i.task_id] as const), ...videos.data.map((v) => [v.external_id, v.id] as const)]);
  for (const [id, task] of Object.entries(lock.tasks)) assert.is(task.task_id, own.get(id), `${id} is recorded with its own task id`);
  const stills = Object.values(lock.tasks).filter((task) => task.kind === "image").flatMap((task) => task.outputs.map((o) => o.sha256));
  assert.is(new Set(stills).size, 3, "each still has its own image");
  const charged = Object.values(lock.tasks).filter((task) => task.billing.length > 0).length;
  assert.is(charged, 5);
};

t("creates answered with the first task's id: each task found by its own external id, downloaded with its own id and results", async () => {
  emu.reset();
  const first: Record<string, string> = {};
  proxy = await startProxy(emu.url, {
    rewrite: (req, answer, status) => {
      if (!isCreate(req) || status !== 200) return answer;
      const data = answer["data"] as Record<string, unknown> | undefined;
      if (!data) return answer;
      const key = "id" in data ? "id" : "task_id";
      const kind = key === "id" ? "video" : "image";
      first[kind] ??= String(data[key]);
      data[key] = first[kind];
      return answer;
    },
  });
  const ws = workspace(yaml("other-id"));
  try {
    const run = await runCli(ws, ["--base-url", proxy.url, "--no-callbacks", "--quiet"], { OMNIBATCH_API_KEY: emu.apiKey });
    assert.is(run.exitCode, 0, run.all);
    await assertOwnTasks(ws);
    assert.match(run.all, "names another task");
  } finally {
    ws.remove();
  }
});

t("create answers that are wholly the first task's (its id and external id): not taken, each task looked up by its own and downloaded, created once", async () => {
  emu.reset();
  const first: Record<string, unknown> = {};
  proxy = await startProxy(emu.url, {
    rewrite: (req, answer, status) => {
      if (!isCreate(req) || status !== 200 || !answer["data"]) return answer;
      const kind = "id" in (answer["data"] as object) ? "video" : "image";
      first[kind] ??= answer["data"];
      return { ...answer, data: first[kind] };
    },
  });
  const ws = workspace(yaml("other-echo"));
  try {
    const run = await runCli(ws, ["--base-url", proxy.url, "--no-callbacks", "--quiet"], { OMNIBATCH_API_KEY: emu.apiKey });
    assert.is(run.exitCode, 0, run.all);
    await assertOwnTasks(ws);
    assert.match(run.all, "the create's answer names another task");
  } finally {
    ws.remove();
  }
});

t.run();
