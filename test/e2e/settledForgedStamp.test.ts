// Found by review: the stamp's `key` is a plain sha256 of its own content, so whoever can
// write the stamp can make its key again. The stamp now lives in this machine's cache folder
// (settledCache.ts), never in the committed lockfile, so only someone who can already write
// this user's files can touch it; and a replay no settled run could have told (an exit code
// other than 0, an outcome other than done, work made) is no stamp whatever its key.

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execa } from "execa";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { startEmulator, type RunningEmulator } from "../../src/emulator/Emulator.js";
import { makeStamp, readStamp } from "../../src/state/SettledStamp.js";
import { settledStampFile } from "../../src/state/settledCache.js";
import { bin } from "./runFixture.js";

let emu: RunningEmulator;
const t = suite("a forged settled stamp");
t.before(async () => {
  emu = await startEmulator({ timing: { scale: 0.1 }, slots: { video: 20, image: 40 } }, { port: 0 });
});
t.after(async () => {
  await emu.close();
});

t("a stamp whose replay was edited and its key recomputed is not told", async () => {
  const dir = mkdtempSync(join(tmpdir(), "omnibatch-fpreview-"));
  const env = { OMNIBATCH_API_KEY: emu.apiKey, OMNIBATCH_BASE_URL: emu.url, OMNIBATCH_TIME_SCALE: "0.05", OMNIBATCH_SETTLED: "debug", OMNIBATCH_CACHE_DIR: join(dir, ".cache") };
  const run = () => execa("node", [bin, "run", "m.yaml", "--json"], { cwd: dir, reject: false, env, extendEnv: false });
  try {
    writeFileSync(join(dir, "m.yaml"), `version: 1\nname: mx\noutputs: out\njobs:\n  stills:\n    kind: image\n    matrix: { subject: [apple, boat] }\n    prompt: "a {{ subject }}"\n`);
    assert.is((await run()).exitCode, 0);
    assert.is((await run()).exitCode, 0); // stamps
    const path = settledStampFile(join(dir, "m.lock.json"), env.OMNIBATCH_CACHE_DIR);
    const { key: _key, ...body } = readStamp(JSON.parse(readFileSync(path, "utf8")))!;
    const summary0 = body.replay.summary as { jobs: { stills: { total: number; done: number } }; exitCode: number };
    summary0.jobs.stills.total = 99;
    summary0.jobs.stills.done = 99;
    summary0.exitCode = 7;
    writeFileSync(path, JSON.stringify(makeStamp(body)));
    const r = await run();
    assert.match(r.stderr, /settled fast path not taken: no settled stamp/);
    const summary = JSON.parse(r.stdout.trim().split("\n").at(-1)!);
    assert.is(summary.jobs.stills.total, 2, "the counts told must be the lockfile's (2 tasks), not the stamp's");
    assert.is(r.exitCode, 0, "exit 7 is no exit code of omnibatch");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

t.run();
