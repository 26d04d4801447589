// Several manifests in one run (src/run/runManifests.ts), the pure parts: the worst exit
// code, manifests that would share a lockfile or outputs folder, and one slot pool per
// product shared by the runs (each run's own concurrency still caps it).

import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { SlotLimiter } from "../../src/engine/SlotLimiter.js";
import { slotShareRule, makePolicy } from "../../src/policy/Policy.js";
import { loadManifest } from "../../src/manifest/loadManifest.js";
import { loadEach, overlapOf, runManifests, SharedSlots, sharedBefore, worstExitCode } from "../../src/run/runManifests.js";

const rule = slotShareRule(makePolicy(1));

test("the exit code of several runs is the worst: invalid over refused over lost over budget over failed over pending over done", () => {
  assert.is(worstExitCode([]), 0);
  assert.is(worstExitCode([0, 0]), 0);
  assert.is(worstExitCode([0, 3]), 3);
  assert.is(worstExitCode([3, 1, 0]), 1);
  assert.is(worstExitCode([1, 4]), 4);
  assert.is(worstExitCode([4, 6, 1]), 6);
  assert.is(worstExitCode([6, 5]), 5);
  assert.is(worstExitCode([5, 2, 0]), 2);
  assert.is(worstExitCode([2, 70]), 70, "a bug outranks everything");
});

test("two manifests that would write one lockfile or one outputs folder are named", () => {
  const m = (file: string, lockfilePath: string, outputsDir: string) => ({ file, lockfilePath, outputsDir });
  assert.is(overlapOf([m("a.yaml", "a.lock.json", "out-a"), m("b.yaml", "b.lock.json", "out-b")]), undefined);
  assert.match(overlapOf([m("a.yaml", "x.lock.json", "out-a"), m("b.yaml", "x.lock.json", "out-b")]) ?? "", "a.yaml and b.yaml would share the lockfile x.lock.json");
  assert.match(overlapOf([m("a.yaml", "a.lock.json", "out"), m("b.yaml", "b.lock.json", "out")]) ?? "", "share the outputs folder out");
});

test("every file is loaded, whatever the others did, so each invalid one is reported", async () => {
  const tried: string[] = [];
  const r = await loadEach(["a", "b", "c"], async (f) => {
    tried.push(f);
    if (f !== "b") throw new Error(`bad ${f}`);
    return f.toUpperCase();
  });
  assert.equal(tried, ["a", "b", "c"]);
  assert.equal(r.loaded, ["B"]);
  assert.equal(r.errors.map((e) => e.file), ["a", "c"]);
});

test("sharedBefore: a manifest waits for each earlier one that asks for one of its requests, never for a later one or one that shares nothing", () => {
  const m = (...hashes: string[]) => ({ tasks: hashes.map((requestHash) => ({ requestHash })) as never });
  assert.equal(sharedBefore([]), []);
  assert.equal(sharedBefore([m("x", "y"), m("z")]), [[], []], "nothing shared: all start at once");
  assert.equal(sharedBefore([m("x", "y"), m("y", "z"), m("w")]), [[], [0], []]);
  // The first to ask is the one waited for: c waits for a (x) and b (z), not for b's copy of x.
  assert.equal(sharedBefore([m("x"), m("x", "z"), m("z", "x")]), [[], [0], [0, 1]]);
  assert.equal(sharedBefore([m("x"), m("x"), m("x")]), [[], [0], [0]]);
});

test("runs sharing a pool never hold more than it between them, and each stays within its own concurrency", () => {
  const pools = new SharedSlots(5);
  const pool = pools.pool("video", rule);
  assert.is(pools.pool("video", rule), pool, "one pool per product");
  assert.ok(pools.pool("image", rule) !== pool, "images have their own");
  const a = new SlotLimiter(5, rule, pool);
  const b = new SlotLimiter(3, rule, pool);
  let now = 0;
  for (let i = 0; i < 10; i++) {
    if (a.fits(1, now)) a.take(1);
    if (b.fits(1, now)) b.take(1);
  }
  assert.is(a.used + b.used, 5, "the pool is full");
  assert.is(pool.used, 5);
  assert.ok(b.used <= 3);
  assert.not.ok(a.fits(1, now) || b.fits(1, now));
  // One of a's tasks ends: the slot is free for either run.
  a.release(1);
  a.onFinished();
  assert.ok(b.used < 3 ? b.fits(1, now) : a.fits(1, now));
  // A 1303 seen by one run (another process took the slot) quiets the pool for both.
  now = 1_000;
  const until = b.onNoSlot(1, now);
  assert.ok(until > now);
  assert.is(a.quietUntil, until);
  assert.not.ok(a.fits(1, now));
  // Releasing more than a run holds never frees another run's slots in the pool.
  b.release(99);
  assert.is(b.used, 0);
  assert.is(pool.used, a.used);
});

test("a run held back only by the slots the other runs hold starts as soon as they end, not at its loop's next minute", async () => {
  const dir = mkdtempSync(join(tmpdir(), "omnibatch-pool-"));
  try {
    const yaml = (name: string) =>
      `version: 1\nname: ${name}\noutputs: out-${name}\nconcurrency: 2\ndefaults:\n  image: { resolution: 1k }\njobs:\n  stills:\n    kind: image\n    matrix:\n      i: [0, 1, 2, 3]\n    prompt: "${name} still {{ i }}"\n`;
    writeFileSync(join(dir, "a.yaml"), yaml("a"));
    writeFileSync(join(dir, "b.yaml"), yaml("b"));
    const loaded = [await loadManifest(join(dir, "a.yaml")), await loadManifest(join(dir, "b.yaml"))];
    const started = Date.now();
    // Each on its own in-process emulator (--emulate), sharing one pool of 2 image slots:
    // one run holds both at first, the other has nothing in flight to wake its loop.
    const outcomes = await runManifests(loaded, { emulate: true, callbacks: false, env: {} });
    const took = Date.now() - started;
    assert.equal(outcomes.map((o) => o.summary?.exitCode), [0, 0], JSON.stringify(outcomes.map((o) => o.error ?? o.summary?.reason)));
    assert.equal(outcomes.map((o) => o.summary?.created), [4, 4]);
    assert.ok(took < 40_000, `both done in ${took} ms (a loop asleep until its next minute would take 60 s)`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
