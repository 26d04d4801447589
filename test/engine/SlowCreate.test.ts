// Adversarial: a create the service carries out just before the client gives up (a slow
// answer, then the client's timeout) with a visibility lag well inside the unknown-outcome
// window, and a service that makes a second task for a reused external id. The window
// must run from when the create could last have landed (the timeout), not from its send,
// or a lookup one window after the send misses the late task and pays for it twice.
// Loopback emulator; one task; bounded by the run's --max-wait.

import { suite } from "uvu";
import * as assert from "uvu/assert";
import { Duration } from "effect";
import { makePolicy } from "../../src/policy/Policy.js";
import { runLoadedManifest } from "../../src/run/runLoadedManifest.js";
import { startEmulator, type RunningEmulator } from "../../src/emulator/Emulator.js";
import type { RunEvent } from "../../src/engine/RunEvent.js";
import { tempDir, testManifest } from "./testManifest.js";

// Scaled from the real figures: window 60 s, client timeout 30 s, the create carried out
// at 25 s and its answer held, visibility lag 45 s (less than the window).
const scale = 0.02;
const policy = makePolicy(scale);
const window = Duration.toMillis(policy.unknownOutcomeWindow); // 1200 ms
const timeoutMs = window / 2; // 600 ms
const t = suite("slow create");
let emu: RunningEmulator;

t.before(async () => {
  emu = await startEmulator({ timing: { scale: 0.01 } }, { port: 0 });
});
t.after(async () => {
  await emu.close();
});

t("a create carried out just before the client's timeout is adopted, not created a second time", async () => {
  const tmp = tempDir();
  emu.reset();
  emu.configure({
    faults: {
      endpoints: ["video.create"],
      slowRate: 1,
      slowMs: timeoutMs - 100,
      // Carried out, then the answer is held: the client's timeout always ends the create.
      stall: { rate: 1, mode: "never", dripMs: 1_000 },
      duplicateExternalId: "create-second",
      visibilityLagMs: Math.round(window * 0.75),
    },
  });
  try {
    const m = testManifest(tmp.dir, { tasks: [{ job: "v", kind: "video", prompt: "slow" }], concurrency: 1 });
    const notices: string[] = [];
    await runLoadedManifest(m, {
      baseUrl: emu.url,
      env: { OMNIBATCH_API_KEY: emu.apiKey },
      policy,
      client: { timeoutMs },
      maxWaitMs: 8_000,
      onEvent: (e: RunEvent) => {
        if (e.type === "notice") notices.push(e.message);
      },
    });
    const id = m.tasks[0]!.id;
    assert.ok(notices.some((n) => n.includes("outcome unknown")), `the create's outcome was unknown:\n${notices.join("\n")}`);
    assert.is(emu.stats().creates[id], 1, `created once:\n${notices.join("\n")}`);
  } finally {
    tmp.remove();
  }
});

t.run();
