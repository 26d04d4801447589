// A run frozen (SIGSTOP) while it holds the run lock, taken over by another run, then
// thawed (SIGCONT) must not send a single create (issue 9, item 4): every intent flush
// (before each create) confirms the lock is still ours. The frozen run is a real child
// process; it keeps a create due at all times (the emulator has no free slot: 1303, so it
// tries again every few ms), so on thawing its first act is a create. Real emulator.

import { execa } from "execa";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { startEmulator } from "../../src/emulator/Emulator.js";
import { makePolicy } from "../../src/policy/Policy.js";
import { runLoadedManifest } from "../../src/run/runLoadedManifest.js";
import { tempDir, testManifest } from "../engine/testManifest.js";
import { childScript } from "../childScript.js";

const t = suite("run lock: a frozen run thawed after a takeover");
const child = await childScript(new URL("./frozenRunChild.ts", import.meta.url));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const STALE_MS = 1500;

t("SIGSTOP, takeover by a second run, SIGCONT: the thawed run sends no create and stops; the second run ends done", async () => {
  const tmp = tempDir();
  const name = `frozen${Date.now().toString(36)}`;
  const emu = await startEmulator({ slots: { video: 0, image: 0 }, timing: { scale: 0.1 } }, { port: 0 });
  const creates = () => emu.stats().requests["video.create"] ?? 0;
  const a = execa("node", [...child, tmp.dir, name, emu.url, emu.apiKey, String(STALE_MS)], { reject: false, all: true, timeout: 90_000 });
  try {
    // A tries its creates (refused: no slot) again and again.
    const until = Date.now() + 30_000;
    while (creates() < 3 && Date.now() < until) await sleep(20);
    assert.ok(creates() >= 3, `A is sending creates (${creates()})`);
    a.kill("SIGSTOP");
    await sleep(STALE_MS + 700);
    const beforeB = creates();
    // B takes the stale lock over, and the service has slots again: B does all the work.
    emu.configure({ slots: { video: 2 } });
    const m = testManifest(tmp.dir, { name, concurrency: 2, tasks: Array.from({ length: 4 }, (_, i) => ({ job: "clips", kind: "video" as const, prompt: `clip ${i}` })) });
    const b = await runLoadedManifest(m, { baseUrl: emu.url, env: { OMNIBATCH_API_KEY: emu.apiKey }, policy: makePolicy(0.05), reports: false, callbacks: false, lockStore: { staleMs: STALE_MS } });
    assert.is(b.exitCode, 0, JSON.stringify(b));
    assert.ok(creates() > beforeB, "B sent creates");
    const afterB = creates();
    a.kill("SIGCONT");
    const r = await a;
    assert.is(creates(), afterB, `the thawed run sent ${creates() - afterB} create(s) after the takeover\n${r.all}`);
    // 9: the child's "the run ended with an error" (the CLI maps both to exit 3): RunLockLost
    // when the lost lock is seen first, LockfileWriteAfterSend when a write is refused first.
    assert.is(r.exitCode, 9, `the thawed run stops with the lock error: ${r.all}`);
    assert.match(r.all, /RunLockLost|LockfileWriteAfterSend/);
    assert.match(r.all, /stalled past the lock.s stale limit|taken over by another run/);
    assert.equal(Object.values(emu.stats().creates).filter((n) => n > 1), [], "no task created twice");
  } finally {
    a.kill("SIGCONT");
    a.kill("SIGKILL");
    await a.catch(() => undefined);
    await emu.close();
    tmp.remove();
  }
});

t.run();
