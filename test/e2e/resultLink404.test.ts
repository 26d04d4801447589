// A result link answering 404 within the service's 30 days is no proof of deletion. Each
// link answering 404 twice, then the file: every result downloaded, exit 0, nothing
// marked deleted. Every link answering 404 for a whole run: the run ends 3 (results not
// reachable yet, run again), nothing marked deleted or lost, no `--recreate-lost`
// offered; the next run downloads them, nothing created again. Before: two 404s in a row
// marked a result deleted for good (exit 6, "lost"), and no later run tried again.
// The built CLI against the real emulator behind a hostile proxy (hostileProxy.ts).

import { suite } from "uvu";
import * as assert from "uvu/assert";
import { startEmulator, type RunningEmulator } from "../../src/emulator/Emulator.js";
import { readLockFile } from "../../src/state/readLockFile.js";
import { startProxy, type HostileProxy } from "./hostileProxy.js";
import { assertAllResults, manifestHead, runCli, stillsJob, workspace } from "./runFixture.js";

const yaml = (name: string) => `${manifestHead(name)}${stillsJob(["apple", "boat"])}  clips:
    kind: video
    matrix:
      mood: [calm]
    prompt: "a {{ mood }} street"
`;

const notFound = { status: 404, body: JSON.stringify({ code: 1203, message: "not found" }) };

let emu: RunningEmulator;
let proxy: HostileProxy | undefined;
const t = suite("result links answering 404 within the 30 days");
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

const creates = () => Object.values(emu.stats().creates as Record<string, number>);
const deletedMarks = async (lockfile: string) =>
  Object.values((await readLockFile(lockfile))!.tasks).flatMap((task) => task.outputs.filter((o) => o.deleted_at !== undefined));

t("each link answers 404 twice, then the file: every result downloaded, nothing marked deleted, exit 0", async () => {
  emu.reset();
  const hits = new Map<string, number>();
  proxy = await startProxy(emu.url, {
    intercept: (req) => {
      if (!req.url.startsWith("/_files/")) return undefined;
      const path = req.url.split("?")[0]!;
      const n = (hits.get(path) ?? 0) + 1;
      hits.set(path, n);
      return n <= 2 ? notFound : undefined;
    },
  });
  const ws = workspace(yaml("link404-twice"));
  try {
    const run = await runCli(ws, ["--base-url", proxy.url, "--no-callbacks", "--quiet"], { OMNIBATCH_API_KEY: emu.apiKey });
    assert.is(run.exitCode, 0, run.all);
    await assertAllResults(ws);
    assert.equal(await deletedMarks(ws.lockfile), []);
    assert.ok(hits.size >= 3 && [...hits.values()].every((n) => n >= 3), "each link was refused twice first");
    assert.equal(creates(), [1, 1, 1]);
  } finally {
    ws.remove();
  }
});

t("every link answers 404 through a whole run: exit 3, nothing deleted or lost, no paying again offered; the next run downloads them", async () => {
  emu.reset();
  let refusing = true;
  proxy = await startProxy(emu.url, { intercept: (req) => (refusing && req.url.startsWith("/_files/") ? notFound : undefined) });
  const ws = workspace(yaml("link404-always"));
  try {
    const env = { OMNIBATCH_API_KEY: emu.apiKey };
    const first = await runCli(ws, ["--base-url", proxy.url, "--no-callbacks", "--json"], env);
    assert.is(first.exitCode, 3, first.all);
    const summary = JSON.parse(first.stdout.trim().split("\n").at(-1)!);
    assert.equal(summary.lost, []);
    assert.match(first.all, "not reachable yet");
    assert.not.match(first.all, "--recreate-lost");
    assert.equal(await deletedMarks(ws.lockfile), []);
    refusing = false;
    const second = await runCli(ws, ["--base-url", proxy.url, "--no-callbacks", "--quiet"], env);
    assert.is(second.exitCode, 0, second.all);
    await assertAllResults(ws);
    assert.equal(creates(), [1, 1, 1], "nothing created again");
  } finally {
    ws.remove();
  }
});

t.run();
