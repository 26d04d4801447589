// The end-to-end guarantee against the worst service the emulator can play: a reused
// external id CREATES A SECOND TASK (and charges it), new tasks stay invisible to lookups
// for a while, creates are carried out and then answered 5xx or cut off, and the built
// CLI is killed with SIGKILL at random (seeded) moments on three runs in a row. Then it
// is rerun until done: 0 external ids created twice, every result on disk.

import { suite } from "uvu";
import * as assert from "uvu/assert";
import { startEmulator, type RunningEmulator } from "../../src/emulator/Emulator.js";
import { readLockFile } from "../../src/state/readLockFile.js";
import { assertAllResults, manifestYaml, runCli, workspace } from "./runFixture.js";

/** A small seeded generator (mulberry32): a failure names its seed and replays. */
const seeded = (seed: number) => {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
};

const KILLED_RUNS = 3;
const SEEDS = [11, 12];

const t = suite("never twice against a duplicate-creating, lagging, 5xx-after-create service, killed at random moments");
let emu: RunningEmulator;

t.before(async () => {
  emu = await startEmulator(
    {
      timing: { scale: 0.15 },
      slots: { video: 40, image: 80 },
      faults: {
        seed: 5,
        duplicateExternalId: "create-second",
        // The CLI runs at OMNIBATCH_TIME_SCALE 0.05: its unknown-outcome window is 60 s × 0.05 = 3 s.
        visibilityLagMs: 1_200,
        errorAfterCreateRate: 0.25,
        resetAfterRate: 0.15,
      },
    },
    { port: 0 },
  );
});
t.after(async () => {
  await emu.close();
});

t(`${SEEDS.length} workspaces, each killed at random moments on ${KILLED_RUNS} runs, then rerun: 0 ids created twice, every task downloaded`, async () => {
  const started = Date.now();
  await Promise.all(
    SEEDS.map(async (seed) => {
      const random = seeded(seed);
      const name = `hostile${seed}`;
      const ws = workspace(manifestYaml(name));
      const env = { OMNIBATCH_API_KEY: emu.apiKey };
      const args = ["--base-url", emu.url, "--quiet"];
      try {
        let killed = 0;
        for (let run = 0; run < KILLED_RUNS; run++) {
          const child = runCli(ws, args, env);
          const at = 300 + Math.floor(random() * 3_500);
          const timer = setTimeout(() => child.kill("SIGKILL"), at);
          const result = await child;
          clearTimeout(timer);
          if (result.signal === "SIGKILL") killed++;
          // The lockfile (with its journal) reads back after every kill.
          await readLockFile(ws.lockfile);
        }
        let exitCode: number | undefined;
        let last = "";
        for (let i = 0; i < 6 && exitCode !== 0; i++) {
          const again = await runCli(ws, args, env);
          exitCode = again.exitCode;
          last = again.all ?? "";
        }
        assert.is(exitCode, 0, `seed ${seed}: the reruns end done (last output: ${last})`);
        const lock = await assertAllResults(ws);
        const ids = Object.keys(lock.tasks);
        assert.is(ids.length, 4 + 3 + 8, `seed ${seed}: every task planned and downstream is in the lockfile`);
        const twice = Object.entries(emu.stats().creates).filter(([id, n]) => id.startsWith(`${name}-`) && n !== 1);
        assert.equal(twice, [], `seed ${seed}: external ids created more than once (id, creates)`);
        for (const id of ids) assert.is(emu.stats().creates[id], 1, `seed ${seed}: ${id} created once`);
        assert.ok(killed >= 1, `seed ${seed}: runs killed mid-way: ${killed}`);
      } finally {
        ws.remove();
      }
    }),
  );
  const f = emu.stats().faults;
  assert.ok(Object.values(f).reduce((a, b) => a + b, 0) >= 3, `faults fired: ${JSON.stringify(f)}`);
  assert.ok(Date.now() - started < 240_000, "bounded in time");
});

t.run();
