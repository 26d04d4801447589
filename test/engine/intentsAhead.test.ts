// Intents written ahead (issue 13, "Slots kept busy"): while every slot is busy, the
// `submitting` records of the next waiting tasks are flushed ahead, so a freed slot costs
// only the create's round trip. The pure rule (createRules.ts `intentsToWrite`) by example
// and over random lines; the table's side (a stop leaves no unsent intent); and a real run
// on the emulator: the intents are on disk before their creates leave, a stop sets the
// unsent ones back to planned, and the next run creates every task once.

import { suite } from "uvu";
import * as assert from "uvu/assert";
import { intentsToWrite, type AheadCandidate } from "../../src/engine/createRules.js";
import { startEmulator } from "../../src/emulator/Emulator.js";
import { makePolicy } from "../../src/policy/Policy.js";
import { runLoadedManifest } from "../../src/run/runLoadedManifest.js";
import { readLockFile } from "../../src/state/readLockFile.js";
import { Machine, makeTable, ofTag, seeded, task } from "./machine.js";
import { tempDir, testManifest } from "./testManifest.js";

const t = suite("intents written ahead");

const c = (intent?: "writing" | "ready", lookupFirst = false): AheadCandidate => ({ intent, lookupFirst });

t("intentsToWrite: the first tasks in line without an intent, until `ahead` have one; a task to be looked up first is passed over", () => {
  assert.equal(intentsToWrite([c(), c(), c(), c(), c()], 3), [0, 1, 2]);
  assert.equal(intentsToWrite([c("ready"), c(), c("writing"), c(), c()], 3), [1]);
  assert.equal(intentsToWrite([c("ready"), c("ready"), c("writing")], 3), []);
  assert.equal(intentsToWrite([c(undefined, true), c(), c(undefined, true), c()], 2), [1, 3]);
  assert.equal(intentsToWrite([c(), c()], 0), []);
  assert.equal(intentsToWrite([], 4), []);
});

t("intentsToWrite over random lines: exactly the tasks without an intent among the first `ahead` that may have one", () => {
  const r = seeded(13);
  for (let i = 0; i < 3000; i++) {
    const line = Array.from({ length: r.int(12) }, () => c(r.pick([undefined, undefined, "writing", "ready"] as const), r.chance(0.3)));
    const ahead = r.int(6);
    const got = intentsToWrite(line, ahead);
    // Reference: the first `ahead` tasks that hold or may take an intent; those without one are chosen.
    const counted = line.map((x, idx) => ({ x, idx })).filter(({ x }) => x.intent !== undefined || !x.lookupFirst).slice(0, ahead);
    assert.equal(got, counted.filter(({ x }) => x.intent === undefined).map(({ idx }) => idx), JSON.stringify({ line, ahead }));
    for (const idx of got) assert.ok(line[idx]!.intent === undefined && !line[idx]!.lookupFirst);
    assert.ok(got.length + line.filter((x) => x.intent !== undefined).length >= Math.min(ahead, counted.length));
  }
});

t("the table: while the slots are full the next tasks' intents are recorded (quietly) and flushed; their creates skip the write only once the flush said so", () => {
  const m = new Machine(makeTable({ concurrency: 1, callbacks: false }));
  for (const id of ["a", "b", "c", "d", "e", "f", "g"]) m.feed({ _tag: "Admit", now: 0, task: task(id), firstAttempt: 1, front: false });
  const first = m.feed({ _tag: "Tick", now: 1 });
  assert.equal(ofTag(first, "Create").map((e) => [e.entry.task.id, e.intentReady]), [["a", false]]);
  // The next four (policy.intentsAhead) are recorded `submitting` without a task event, then flushed once.
  const ahead = ofTag(first, "Record").filter((e) => e.patch.state === "submitting");
  assert.equal(ahead.map((e) => [e.task.id, e.quiet]), [["b", true], ["c", true], ["d", true], ["e", true]]);
  assert.equal(ofTag(first, "FlushIntents").map((e) => e.ids), [["b", "c", "d", "e"]]);
  // No more while those are pending.
  assert.equal(ofTag(m.feed({ _tag: "Tick", now: 2 }), "FlushIntents"), []);
  m.feed({ _tag: "IntentsWritten", now: 3, ids: ["b", "c", "d", "e"], ok: true });
  m.feed({ _tag: "Created", now: 4, id: "a", taskId: "svc-a", createdAt: 4 });
  // a ends: b takes the slot with its intent ready, and f's intent is written ahead.
  const next = m.feed({ _tag: "Polled", now: 5, asked: [{ id: "a", taskId: "svc-a", createdAt: 4, watermark: false }], views: [{ taskId: "svc-a", externalId: "a", status: "failed", createdAt: 4, updatedAt: 5, message: "x", outputs: [], billing: [] }] });
  assert.equal(next.filter((e) => e._tag === "Create"), []);
  const tick = m.feed({ _tag: "Tick", now: 6 });
  assert.equal(ofTag(tick, "Create").map((e) => [e.entry.task.id, e.intentReady]), [["b", true]]);
  assert.equal(ofTag(tick, "FlushIntents").map((e) => e.ids), [["f"]]);
  // A failed flush: f's create writes and flushes its own intent.
  m.feed({ _tag: "IntentsWritten", now: 7, ids: ["f"], ok: false });
  // A 1303 for b: back in line, recorded planned, its intent gone (written again before it goes).
  const noSlot = m.feed({ _tag: "NoSlot", now: 8, id: "b" });
  assert.equal(ofTag(noSlot, "Record").map((e) => [e.task.id, e.patch.state]), [["b", "planned"]]);
  // A stop: the tasks still waiting with an intent are the ones the Runner sets back to planned.
  m.feed({ _tag: "Stop", now: 9, reason: "signal" });
  assert.equal(m.table.intentsUnsent().map((e) => e.task.id).sort(), ["c", "d", "e"]);
  assert.equal(ofTag(m.feed({ _tag: "Tick", now: 10 }), "FlushIntents"), [], "nothing more is written ahead after a stop");
});

t("a real run: intents of waiting tasks are on disk before their creates; a stop sets the unsent ones back to planned; the next run creates each task once", async () => {
  const tmp = tempDir();
  // Two slots, tasks of 3 to 9 s: the others wait, with their intents written ahead.
  const emu = await startEmulator({ slots: { video: 2, image: 2 }, timing: { scale: 3 } }, { port: 0 });
  const sleep = (ms: number) => new Promise((res) => setTimeout(res, ms));
  try {
    const m = testManifest(tmp.dir, { concurrency: 2, tasks: Array.from({ length: 6 }, (_, i) => ({ job: "clips", kind: "video" as const, prompt: `clip ${i}` })) });
    const created = () => new Set(Object.keys(emu.stats().creates).filter((id) => id.startsWith(`${m.name}-`)));
    const abort = new AbortController();
    const running = runLoadedManifest(m, { baseUrl: emu.url, env: { OMNIBATCH_API_KEY: emu.apiKey }, policy: makePolicy(0.01), reports: false, callbacks: false, signal: abort.signal });
    // Bounded: at most 15 s for two creates and an intent on disk for a task not created.
    let ahead: string[] = [];
    for (const until = Date.now() + 15_000; Date.now() < until; await sleep(20)) {
      const lock = await readLockFile(m.lockfilePath).catch(() => undefined);
      const made = created();
      ahead = Object.entries(lock?.tasks ?? {}).filter(([id, rec]) => rec.state === "submitting" && !made.has(id)).map(([id]) => id);
      if (made.size === 2 && ahead.length > 0) break;
    }
    assert.is(created().size, 2, "both slots busy");
    assert.ok(ahead.length > 0, "a waiting task's intent is durable before its create");
    abort.abort();
    const first = await running;
    assert.is(first.exitCode, 3);
    const made = created();
    const lock = (await readLockFile(m.lockfilePath))!;
    for (const [id, rec] of Object.entries(lock.tasks)) {
      if (!made.has(id)) assert.is(rec.state, "planned", `${id} was never sent: planned again, not submitting`);
    }
    emu.configure({ timing: { scale: 0.1 } });
    const again = await runLoadedManifest(m, { baseUrl: emu.url, env: { OMNIBATCH_API_KEY: emu.apiKey }, policy: makePolicy(0.01), reports: false, callbacks: false });
    assert.is(again.exitCode, 0, JSON.stringify(again.failures));
    const creates = Object.entries(emu.stats().creates).filter(([id]) => id.startsWith(`${m.name}-`));
    assert.is(creates.length, 6);
    for (const [id, n] of creates) assert.is(n, 1, `${id} created once`);
  } finally {
    await emu.close();
    tmp.remove();
  }
});

t.run();
