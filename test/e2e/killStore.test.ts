// The built CLI, its outputs in a store (s3rver on loopback), killed with SIGKILL while
// results are being uploaded, then run again until done: every object the lockfile
// records is in the store with the recorded sha256, and no task was created twice.

import { createHash } from "node:crypto";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { startEmulator, type RunningEmulator } from "../../src/emulator/Emulator.js";
import { readLockFile } from "../../src/state/readLockFile.js";
import { openS3Store } from "../../src/store/S3Store.js";
import { parseStoreUrl, type StoreLocation } from "../../src/fs/StoreUrl.js";
import { startS3rver, type S3rverHandle } from "../store/s3rverServer.js";
import { manifestYaml, runCli, workspace } from "./runFixture.js";

const t = suite<{ emu: RunningEmulator; s3: S3rverHandle }>("kill -9 during uploads to a store", {} as never);
t.before(async (ctx) => {
  ctx.emu = await startEmulator({ timing: { scale: 0.15 }, slots: { video: 40, image: 80 } }, { port: 0 });
  ctx.s3 = await startS3rver();
});
t.after(async (ctx) => {
  await ctx.emu.close();
  await ctx.s3.close();
});

const putsOf = (s3: S3rverHandle, prefix: string) => s3.seen.filter((r) => r.method === "PUT" && r.url.includes(`/${prefix}/`)).length;

const scenario = async (emu: RunningEmulator, s3: S3rverHandle, puts: number, index: number): Promise<string | undefined> => {
  const name = `killstore${index}`;
  const ws = workspace(manifestYaml(name));
  const url = `s3://${s3.bucket}/${name}`;
  try {
    const env = { OMNIBATCH_API_KEY: emu.apiKey, ...s3.env };
    const child = runCli(ws, ["--base-url", emu.url, "--quiet", "--outputs", url], env);
    const started = Date.now();
    await new Promise<void>((resolve) => {
      const timer = setInterval(() => {
        if (putsOf(s3, name) >= puts || child.exitCode !== null || Date.now() - started > 30_000) {
          clearInterval(timer);
          child.kill("SIGKILL");
          resolve();
        }
      }, 2);
    });
    const first = await child;
    await readLockFile(ws.lockfile);
    let exitCode = first.exitCode;
    let last = "";
    for (let i = 0; i < 4 && exitCode !== 0; i++) {
      const again = await runCli(ws, ["--base-url", emu.url, "--quiet", "--outputs", url], env);
      exitCode = again.exitCode;
      last = again.all ?? "";
    }
    assert.is(exitCode, 0, last);
    const lock = await readLockFile(ws.lockfile);
    const ids = Object.keys(lock!.tasks);
    assert.is(ids.length, 4 + 3 + 8, "every task planned and downstream is in the lockfile");
    for (const id of ids) assert.is(emu.stats().creates[id], 1, `${id} created once`);
    const store = await openS3Store(parseStoreUrl(url) as StoreLocation, { env: s3.env });
    try {
      let checked = 0;
      for (const task of Object.values(lock!.tasks)) {
        assert.is(task.state, "downloaded");
        for (const o of task.outputs) {
          if (!o.path) continue;
          const got = await store.get(o.path);
          assert.ok(got, `${o.path} is in the store`);
          const hash = createHash("sha256");
          let size = 0;
          for await (const chunk of got!.body) {
            hash.update(chunk as Buffer);
            size += (chunk as Buffer).length;
          }
          assert.is(size, o.size, o.path);
          assert.is(hash.digest("hex"), o.sha256, o.path);
          checked++;
        }
      }
      assert.is(checked, 8 + 3 + 8);
    } finally {
      store.close();
    }
    return first.signal ?? undefined;
  } finally {
    ws.remove();
  }
};

t("killed at 4 points during uploads, rerun until done: each stored object matches its recorded sha256, each task created once", async ({ emu, s3 }) => {
  const points = [1, 4, 8, 14];
  let killed = 0;
  for (const [i, p] of points.entries()) if ((await scenario(emu, s3, p, i)) === "SIGKILL") killed++;
  assert.ok(killed >= 3, `runs actually killed mid-way: ${killed}`);
});

t.run();
