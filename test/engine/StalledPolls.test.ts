// --max-wait and the interrupt while the service stalls in the middle of a run (issue 9,
// item 10): the emulator answers the creates, then its stall switch holds every answer
// (never / drip), so the run's polls hang until the client's 30 s timeout and retries.
// The deadline and the abort signal must end the run within about a second anyway.
// Real emulator over loopback, the real client with its real (30 s) request timeout.

import { suite } from "uvu";
import * as assert from "uvu/assert";
import { startEmulator } from "../../src/emulator/Emulator.js";
import { makePolicy } from "../../src/policy/Policy.js";
import { runLoadedManifest } from "../../src/run/runLoadedManifest.js";
import { tempDir, testManifest } from "./testManifest.js";

const t = suite("engine: a service that stalls mid-run");

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

for (const [mode, stop] of [
  ["never", "deadline"],
  ["drip", "deadline"],
  ["never", "signal"],
] as const) {
  t(`stall '${mode}' after the creates, stopped by the ${stop}: ends pending within ~1.5 s of it, nothing created twice`, async () => {
    const tmp = tempDir();
    // Slow tasks: still running when the stall begins.
    const emu = await startEmulator({ slots: { video: 4, image: 4 }, timing: { scale: 3 } }, { port: 0 });
    const abort = new AbortController();
    try {
      const m = testManifest(tmp.dir, { tasks: Array.from({ length: 3 }, (_, i) => ({ job: "clips", kind: "video" as const, prompt: `clip ${i}` })), concurrency: 3 });
      const started = Date.now();
      const stopAfterMs = 6_000;
      const run = runLoadedManifest(m, {
        baseUrl: emu.url,
        env: { OMNIBATCH_API_KEY: emu.apiKey },
        policy: makePolicy(0.05),
        reports: false,
        callbacks: false,
        signal: abort.signal,
        ...(stop === "deadline" ? { maxWaitMs: stopAfterMs } : {}),
      });
      const until = Date.now() + 5_000;
      while ((emu.stats().requests["video.create"] ?? 0) < 3 && Date.now() < until) await sleep(10);
      assert.is(emu.stats().requests["video.create"], 3, "the creates were answered");
      emu.configure({ faults: { stall: { rate: 1, mode, dripMs: 1_000 } } });
      if (stop === "signal") {
        await sleep(Math.max(0, started + stopAfterMs - Date.now()));
        abort.abort();
      }
      const summary = await run;
      const took = Date.now() - started;
      assert.is(summary.exitCode, 3, JSON.stringify(summary));
      assert.ok(took < stopAfterMs + 1_500, `ended after ${took} ms (stop at ${stopAfterMs} ms)`);
      assert.ok((emu.stats().faults["stall"] ?? 0) > 0, `the polls stalled: ${JSON.stringify(emu.stats().faults)}`);
      assert.equal(Object.values(emu.stats().creates), [1, 1, 1]);
    } finally {
      await emu.close();
      tmp.remove();
    }
  });
}

t.run();
