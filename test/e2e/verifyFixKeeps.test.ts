// verify --fix on a store: a differing object is kept aside (`<key>.differs-<ms>`) before it
// is removed for the fetch, so a fetch that fails loses nothing. The record may be the wrong
// one (a hand edit or a bad merge of the committed lockfile) and the object the genuine paid
// result (found by an adversarial review: the object was deleted and never replaced).
import { readFileSync, writeFileSync } from "node:fs";
import { execa } from "execa";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { startEmulator, type RunningEmulator } from "../../src/emulator/Emulator.js";
import { readLockFile } from "../../src/state/readLockFile.js";
import { openS3Store } from "../../src/store/S3Store.js";
import { parseStoreUrl, type StoreLocation } from "../../src/fs/StoreUrl.js";
import { startS3rver, type S3rverHandle } from "../store/s3rverServer.js";
import { bin, manifestHead, runCli, stillsJob, workspace } from "./runFixture.js";

const t = suite<{ emu: RunningEmulator; s3: S3rverHandle }>("verify --fix keeps a differing object", {} as never);
t.before(async (ctx) => { ctx.emu = await startEmulator({ timing: { scale: 0.05 } }, { port: 0 }); ctx.s3 = await startS3rver(); });
t.after(async (ctx) => { await ctx.emu.close(); await ctx.s3.close(); });

t("an edited record and a refetch that fails: the object is kept aside, named, nothing created", async ({ emu, s3 }) => {
  const url = `s3://${s3.bucket}/audit/${Date.now()}`;
  const ws = workspace(`${manifestHead("stored", { outputs: url })}${stillsJob(["apple"])}`);
  const store = await openS3Store(parseStoreUrl(url) as StoreLocation, { env: s3.env });
  try {
    const env = { OMNIBATCH_API_KEY: emu.apiKey, ...s3.env };
    const first = await runCli(ws, ["--base-url", emu.url, "--no-callbacks"], env);
    assert.is(first.exitCode, 0, first.all);
    const lock = (await readLockFile(ws.lockfile))!;
    const o = Object.values(lock.tasks)[0]!.outputs.find((x) => x.path !== undefined)!;
    assert.ok(await store.head(o.path!), "genuine object there");
    // A hand edit / bad merge of the committed lockfile: one sha256 changed.
    writeFileSync(ws.lockfile, readFileSync(ws.lockfile, "utf8").replace(o.sha256!, "0".repeat(64)));
    // The service's result links fail now (cut off every time).
    emu.configure({ faults: { truncatedDownloadRate: 1 } });
    // Its download retries wait as a run's at OMNIBATCH_TIME_SCALE (the emulator is on loopback), not the live back-off.
    const fixed = await execa("node", [bin, "verify", ws.manifest, "--fix", "--base-url", emu.url], { cwd: ws.dir, reject: false, all: true, extendEnv: false, env: { PATH: process.env.PATH ?? "", OMNIBATCH_TIME_SCALE: "0.05", ...env }, timeout: 120_000 });
    assert.is(fixed.exitCode, 1, fixed.all);
    assert.match(fixed.all ?? "", ".differs-");
    const kept = [...(await store.list()).entries()].filter(([k]) => k.startsWith(`${o.path!}.differs-`));
    assert.is(kept.length, 1, `kept aside: ${kept.map(([k]) => k).join(", ")}`);
    assert.is(kept[0]![1].size, o.size, "the genuine object, whole");
    assert.equal(Object.values(emu.stats().creates), [1], "nothing created by --fix");
  } finally {
    emu.configure({ faults: { truncatedDownloadRate: 0 } });
    store.close();
    ws.remove();
  }
});
t.run();
