// A charge that cannot be true stops submission, never the following and downloading of
// the other tasks in flight: one lying answer must not hold the others' paid results back
// (issue 27 item 11; an adversarial review found every run stopping at once, interrupting
// the downloads the same poll had started, run after run).
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { makePolicy } from "../../src/policy/Policy.js";
import { runLoadedManifest } from "../../src/run/runLoadedManifest.js";
import { startEmulator, type RunningEmulator } from "../../src/emulator/Emulator.js";
import { readLockFile } from "../../src/state/readLockFile.js";
import { tempDir, testManifest } from "./testManifest.js";

const policy = makePolicy(0.005);
let emu: RunningEmulator;
const t = suite("engine: a refused charge holds no other result back");
t.before(async () => {
  emu = await startEmulator({ timing: { scale: 0.1 } }, { port: 0 });
});
t.after(async () => {
  await emu.close();
});

t("one task whose answers carry a negative charge: the other five are downloaded in the same run, that one is left in flight, exit 5 naming it", async () => {
  const tmp = tempDir();
  try {
    const m = testManifest(tmp.dir, { tasks: Array.from({ length: 6 }, (_, i) => ({ job: "v", kind: "video" as const, prompt: `video ${i}` })), concurrency: 6 });
    const bad = m.tasks[0]!.id;
    emu.configure({ faults: { malformedTask: { rate: 0, externalIds: [bad], kind: "negative-charge" } } });
    const s = await runLoadedManifest(m, { baseUrl: emu.url, env: { OMNIBATCH_API_KEY: emu.apiKey }, policy, client: { timeoutMs: 5_000 } });
    assert.is(s.exitCode, 5);
    assert.is(s.outcome, "charge");
    assert.equal(s.refusedCharges?.map((r) => r.id), [bad]);
    const lock = (await readLockFile(m.lockfilePath))!;
    const created = emu.stats().creates;
    let downloaded = 0;
    for (const [id, rec] of Object.entries(lock.tasks)) {
      if (id === bad) {
        assert.ok(rec.state === "submitted" || rec.state === "processing", `${id}: ${rec.state}`);
        assert.equal(rec.billing, [], "the refused charge is never recorded");
      } else if (created[id] === 1) {
        assert.is(rec.state, "downloaded", `${id}: its paid result is downloaded`);
        downloaded++;
      } else assert.is(rec.state, "planned", `${id}: never created (the account's 5 slots were full), nothing more submitted`);
    }
    // The account's 5 video slots: 5 created (once each), 4 of them besides the lying one.
    assert.is(downloaded, 4);
    assert.ok(Object.values(created).every((n) => n === 1), JSON.stringify(created));
  } finally {
    emu.configure({ faults: { malformedTask: { rate: 0, externalIds: [], kind: "negative-charge" } } });
    tmp.remove();
  }
});

t.run();
