// Adversarial: a rerun with a changed manifest. A task created (paid for) by an earlier
// run and still in flight is no longer in the manifest; the rerun must not drop its
// result silently: it says which task is left behind (the lockfile still holds it).
// Loopback emulator; two short runs bounded by --max-wait.

import { suite } from "uvu";
import * as assert from "uvu/assert";
import { makePolicy } from "../../src/policy/Policy.js";
import { runLoadedManifest } from "../../src/run/runLoadedManifest.js";
import { startEmulator, type RunningEmulator } from "../../src/emulator/Emulator.js";
import type { RunEvent } from "../../src/engine/RunEvent.js";
import { readLockFile } from "../../src/state/readLockFile.js";
import { tempDir, testManifest } from "./testManifest.js";

const policy = makePolicy(0.01);
const t = suite("orphaned paid task");
let emu: RunningEmulator;

t.before(async () => {
  // Videos take 0.8 to 3 s: the first run stops while its task is in flight.
  emu = await startEmulator({ timing: { scale: 1 } }, { port: 0 });
});
t.after(async () => {
  await emu.close();
});

t("a paid task in flight that a changed manifest no longer lists is named by the rerun, not silently dropped", async () => {
  const tmp = tempDir();
  try {
    const first = testManifest(tmp.dir, { name: "orph", tasks: [{ job: "v", kind: "video", prompt: "first" }] });
    // Stopped the moment its create is confirmed (as Ctrl-C would): in flight, whatever the machine's load.
    // (A fixed --max-wait raced the start-up: under load the create had not gone out yet.)
    const stop = new AbortController();
    await runLoadedManifest(first, {
      baseUrl: emu.url,
      env: { OMNIBATCH_API_KEY: emu.apiKey },
      policy,
      maxWaitMs: 60_000,
      signal: stop.signal,
      onEvent: (e: RunEvent) => {
        if (e.type === "task" && e.state === "submitted") stop.abort();
      },
    });
    const paid = first.tasks[0]!.id;
    const lock = (await readLockFile(first.lockfilePath))!;
    assert.ok(["submitted", "processing"].includes(lock.tasks[paid]!.state), `in flight after the first run: ${lock.tasks[paid]!.state}`);
    assert.is(emu.stats().creates[paid], 1);

    // The user edits the manifest: the job is renamed; the paid task is not in it any more.
    const second = testManifest(tmp.dir, { name: "orph", tasks: [{ job: "w", kind: "video", prompt: "first" }] });
    const said: string[] = [];
    const summary = await runLoadedManifest(second, {
      baseUrl: emu.url,
      env: { OMNIBATCH_API_KEY: emu.apiKey },
      policy,
      maxWaitMs: 8_000,
      onEvent: (e: RunEvent) => {
        if (e.type === "notice") said.push(e.message);
      },
    });
    const text = `${said.join("\n")}\n${JSON.stringify(summary)}`;
    assert.ok(text.includes(paid), `the rerun names ${paid}, paid for and not in the manifest any more:\n${text}`);
  } finally {
    tmp.remove();
  }
});

t.run();
