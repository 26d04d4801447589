// Cues that lend slots (issue 13, "with callbacks"): a callback saying a video ended lends
// its slot to the next waiting create at once; the service's 1303 (nothing created) says
// the cue was wrong, the slot goes back, lending pauses, and the quota is not lowered. The
// cued task's state is recorded only from a query, which may wait for a few more ends.
// The pure rules (cueRules.ts) by example; the table over event sequences; and a hostile
// run on the real emulator: a proxy that forwards the service's callbacks and posts
// forged "succeeded" cues for every other task in flight must not make the run pay twice,
// record anything forged, or send more than one refused create per task.

import { createServer } from "node:http";
import { readFileSync } from "node:fs";
import { Duration } from "effect";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { cueQueryAt, lendPauseMs, mayLend } from "../../src/engine/cueRules.js";
import { startEmulator } from "../../src/emulator/Emulator.js";
import { makePolicy } from "../../src/policy/Policy.js";
import { runLoadedManifest } from "../../src/run/runLoadedManifest.js";
import { readLockFile } from "../../src/state/readLockFile.js";
import { Machine, makeTable, ofTag, task, view } from "./machine.js";
import { tempDir, testManifest } from "./testManifest.js";
import { filesUnder, freePort, listen, readBody } from "./loopback.js";

const t = suite("cues that lend slots");

t("mayLend: only a cued task in flight, holding its slot, that never lent before, and not while lending pauses", () => {
  const l = { inflight: true, cued: true, lent: false, lentOnce: false, holding: 1 };
  assert.ok(mayLend(l, 1, 0, 10));
  assert.not.ok(mayLend({ ...l, cued: false }, 1, 0, 10));
  assert.not.ok(mayLend({ ...l, inflight: false }, 1, 0, 10));
  assert.not.ok(mayLend({ ...l, lent: true }, 1, 0, 10));
  assert.not.ok(mayLend({ ...l, lentOnce: true }, 1, 0, 10));
  assert.not.ok(mayLend({ ...l, holding: 0 }, 1, 0, 10));
  assert.not.ok(mayLend(l, 2, 0, 10), "a create needing more slots than the lender holds");
  assert.not.ok(mayLend(l, 1, 11, 10), "paused");
  assert.ok(mayLend(l, 1, 10, 10));
});

t("cueQueryAt: a cue still holding its slot is asked after the spacing; lent ones wait for the batch or the hold; nothing cued, never", () => {
  const timing = { lastCueQuery: 100, spacingMs: 10, holdMs: 500, batch: 3 };
  assert.is(cueQueryAt({ holding: 0, lent: 0, oldestLentAt: Infinity }, timing), Infinity);
  assert.is(cueQueryAt({ holding: 1, lent: 0, oldestLentAt: Infinity }, timing), 110);
  assert.is(cueQueryAt({ holding: 1, lent: 2, oldestLentAt: 50 }, timing), 110);
  assert.is(cueQueryAt({ holding: 0, lent: 1, oldestLentAt: 200 }, timing), 700);
  assert.is(cueQueryAt({ holding: 0, lent: 2, oldestLentAt: 200 }, timing), 700);
  assert.is(cueQueryAt({ holding: 0, lent: 3, oldestLentAt: 200 }, timing), 110);
  assert.is(cueQueryAt({ holding: 0, lent: 1, oldestLentAt: -1000 }, timing), 110, "never sooner than the spacing");
});

t("lendPauseMs doubles with each cue proved wrong, capped", () => {
  assert.equal([1, 2, 3, 4].map((s) => lendPauseMs(s, 100)), [100, 200, 400, 800]);
  assert.is(lendPauseMs(50, 100), 6400);
});

const policy = makePolicy(1);
const holdMs = Duration.toMillis(policy.cueHold);
const spacingMs = Duration.toMillis(policy.cueQuerySpacing);

/** Two tasks in flight on two slots (a, b), two waiting (c, d). */
const full = () => {
  const m = new Machine(makeTable({ concurrency: 2, callbacks: true }, policy));
  for (const id of ["a", "b", "c", "d"]) m.feed({ _tag: "Admit", now: 0, task: task(id), firstAttempt: 1, front: false });
  m.feed({ _tag: "Tick", now: 1 });
  m.feed({ _tag: "Created", now: 2, id: "a", taskId: "svc-a", createdAt: 2 });
  m.feed({ _tag: "Created", now: 2, id: "b", taskId: "svc-b", createdAt: 2 });
  return m;
};
const cue = (m: Machine, id: string, now: number, status: "succeeded" | "failed" = "succeeded") =>
  m.feed({ _tag: "Callback", now, observation: { kind: "video", taskId: `svc-${id}`, externalId: id, status } });

t("a cue lends its slot: the next create leaves at once; the cued task is queried only later (hold), and recorded from the answer", () => {
  const m = full();
  assert.equal(ofTag(m.feed({ _tag: "Tick", now: 3 }), "Create"), [], "slots full");
  assert.equal(cue(m, "a", 10), [], "a callback alone does nothing");
  const tick = m.feed({ _tag: "Tick", now: 11 });
  assert.equal(ofTag(tick, "Create").map((e) => e.entry.task.id), ["c"]);
  assert.equal(ofTag(tick, "Poll"), [], "no query yet: the slot is already in use");
  assert.equal(ofTag(tick, "Record").filter((e) => e.task.id === "a"), [], "nothing recorded for a from its cue");
  m.feed({ _tag: "Created", now: 12, id: "c", taskId: "svc-c", createdAt: 12 });
  assert.is(m.table.limiters.video.used, 2, "b and c hold the slots; a lent its own");
  assert.equal(ofTag(m.feed({ _tag: "Tick", now: 100 }), "Poll"), []);
  // The hold passes: one query asks about every video in flight.
  const later = m.feed({ _tag: "Tick", now: 11 + holdMs });
  const poll = ofTag(later, "Poll");
  assert.equal(poll.map((p) => p.tasks.map((x) => x.id).sort()), [["a", "b", "c"]]);
  const answer = m.feed({ _tag: "Polled", now: 12 + holdMs, asked: poll[0]!.tasks, views: [view("svc-a", "a", "succeeded", 5), view("svc-b", "b", "processing"), view("svc-c", "c", "processing")] });
  assert.equal(ofTag(answer, "Record").filter((e) => e.task.id === "a").map((e) => e.patch.state), ["succeeded"]);
  assert.equal(ofTag(answer, "Download").map((e) => e.entry.task.id), ["a"]);
  assert.is(m.table.limiters.video.used, 2, "a's end gave back nothing more");
  assert.is(m.table.counters.lent, 1);
});

t("a forged cue: the create on the lent slot gets 1303, the slot goes back, the quota is not lowered, lending pauses, and the task never lends again", () => {
  const m = full();
  cue(m, "a", 10);
  assert.equal(ofTag(m.feed({ _tag: "Tick", now: 11 }), "Create").map((e) => e.entry.task.id), ["c"]);
  const noSlot = m.feed({ _tag: "NoSlot", now: 12, id: "c" });
  assert.equal(ofTag(noSlot, "Record").map((e) => [e.task.id, e.patch.state]), [["c", "planned"]]);
  assert.is(m.table.limiters.video.limit, 2, "the limit stays: the 1303 was about the cue");
  assert.is(m.table.limiters.video.used, 2, "a holds its slot again");
  assert.ok(m.table.lendPausedUntil > 12);
  // a is still cued and holds its slot: asked soon, as any cue.
  const soon = m.feed({ _tag: "Tick", now: 12 + spacingMs });
  assert.equal(ofTag(soon, "Poll").map((p) => p.tasks.map((x) => x.id).sort()), [["a", "b"]]);
  m.feed({ _tag: "Polled", now: 2000, asked: ofTag(soon, "Poll")[0]!.tasks, views: [view("svc-a", "a", "processing"), view("svc-b", "b", "processing")] });
  // Another forged cue for a, after the pause: a lent once, so nothing is sent.
  cue(m, "a", 1_000_000);
  assert.equal(ofTag(m.feed({ _tag: "Tick", now: 1_000_001 }), "Create"), []);
  assert.is(m.table.counters.lentRefused, 1);
});

t("a cue for a task still running, when the service had room anyway: the create stands, and the answer gives the lender its slot back (over the limit until a task ends)", () => {
  const m = full();
  cue(m, "a", 10);
  m.feed({ _tag: "Tick", now: 11 });
  m.feed({ _tag: "Created", now: 12, id: "c", taskId: "svc-c", createdAt: 12 });
  const poll = ofTag(m.feed({ _tag: "Tick", now: 11 + holdMs }), "Poll")[0]!;
  m.feed({ _tag: "Polled", now: 12 + holdMs, asked: poll.tasks, views: [view("svc-a", "a", "processing"), view("svc-b", "b", "processing"), view("svc-c", "c", "processing")] });
  assert.is(m.table.limiters.video.used, 3);
  assert.equal(ofTag(m.feed({ _tag: "Tick", now: 13 + holdMs }), "Create"), [], "nothing starts while over the limit");
  assert.ok(m.table.lendPausedUntil > 12 + holdMs, "lending pauses");
});

t("a lender that goes missing at the service while its slot is lent: left stuck, and a refused create on its slot gives the slot back to the pool, not to the stuck task", () => {
  const m = full();
  cue(m, "a", 10);
  assert.equal(ofTag(m.feed({ _tag: "Tick", now: 11 }), "Create").map((e) => e.entry.task.id), ["c"]);
  // c's create is slow; meanwhile the service stops showing a (deleted, another account).
  let now = 12;
  for (let i = 0; i < 40 && m.table.entries.get("a")!.phase !== "stuck"; i++) {
    now += Duration.toMillis(policy.missingAfter);
    const polls = ofTag(m.feed({ _tag: "Tick", now }), "Poll");
    // Not shown by its id, a is looked up by its external id before it is left: not found either.
    for (const p of polls) {
      const lookedUp = p.lookups.length > 0 ? { ids: p.lookups.map((l) => l.id), found: new Map(), startedAt: now } : undefined;
      m.feed({ _tag: "Polled", now: now + 1, asked: p.tasks, views: [view("svc-b", "b", "processing")], ...(lookedUp ? { lookedUp } : {}) });
    }
  }
  assert.is(m.table.entries.get("a")!.phase, "stuck", "a is left for a later run");
  // The create on a's lent slot is refused: nothing created, the slot is free again.
  m.feed({ _tag: "NoSlot", now: now + 2, id: "c" });
  assert.is(m.table.limiters.video.used, 1, "only b holds a slot (the stuck task holds none)");
  // The 1303 came while we held one slot, so the run now believes in one slot (a may still
  // run at the service). Once b ends, that slot is free and the limit grows by one
  // (src/policy/slotShare.ts): the waiting tasks go on (had the stuck task taken the lent
  // slot back, it would hold the only slot for the rest of the run).
  now += 2 + Duration.toMillis(policy.noSlotWait) * 200;
  let created: string[] = [];
  for (let i = 0; i < 40 && created.length === 0; i++) {
    now += Duration.toMillis(policy.missingAfter);
    const effects = m.feed({ _tag: "Tick", now });
    created = ofTag(effects, "Create").map((e) => e.entry.task.id);
    for (const p of ofTag(effects, "Poll")) m.feed({ _tag: "Polled", now: now + 1, asked: p.tasks, views: [view("svc-b", "b", "succeeded", 5)] });
  }
  assert.is(m.table.limiters.video.limit, 2);
  assert.is(created.length, 2, `creates start on the slot b freed and the one the limit grew by: ${JSON.stringify(created)}`);
  assert.is(m.table.limiters.video.used, 2, "the stuck task holds none of them");
});

// ---- a hostile run on the real emulator


t("forged cues for every task in flight: each task created once, nothing forged recorded, at most one refused create per task, queries bounded", async () => {
  const tmp = tempDir();
  const TASKS = 10;
  const emu = await startEmulator({ slots: { video: 2, image: 2 }, timing: { scale: 0.5 } }, { port: 0 });
  const listenPort = await freePort();
  const target = (token: string) => `http://127.0.0.1:${listenPort}/omnibatch/cb/${token}`;
  // Every task seen in a real callback, with its ids; `ended`: the service said it finished.
  const known = new Map<string, { id: unknown; create_time: unknown; token: string; ended: boolean }>();
  let forged = 0;
  const proxy = createServer(async (req, res) => {
    const body = await readBody(req);
    const token = (req.url ?? "").split("/").at(-1) ?? "";
    const status = await fetch(target(token), { method: "POST", headers: { "content-type": "application/json" }, body }).then((r) => r.status);
    res.writeHead(status).end();
    let task: Record<string, unknown>;
    try {
      task = JSON.parse(body) as Record<string, unknown>;
    } catch {
      return;
    }
    const ext = String(task["external_id"]);
    const ended = task["status"] === "succeeded" || task["status"] === "failed";
    known.set(ext, { id: task["id"], create_time: task["create_time"], token, ended: ended || known.get(ext)?.ended === true });
    // On every real callback: a forged "succeeded" for each other task still running, with
    // the attacker's charge and reason (nothing of it may be recorded).
    for (const [other, k] of known) {
      if (other === ext || k.ended) continue;
      forged++;
      const fake = { id: k.id, external_id: other, status: "succeeded", message: "FORGEDMARK", create_time: k.create_time, update_time: Date.now(), outputs: [], billing: [{ amount: "777", currency: "USD" }] };
      await fetch(target(k.token), { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(fake) }).catch(() => undefined);
    }
  });
  const proxyPort = await listen(proxy);
  try {
    const m = testManifest(tmp.dir, { concurrency: 2, tasks: Array.from({ length: TASKS }, (_, i) => ({ job: "clips", kind: "video" as const, prompt: `clip ${i}` })) });
    const summary = await runLoadedManifest(m, {
      baseUrl: emu.url,
      policy: makePolicy(0.02),
      reports: false,
      env: { OMNIBATCH_API_KEY: emu.apiKey },
      callbacks: { url: `http://127.0.0.1:${proxyPort}/fwd`, host: "127.0.0.1", port: listenPort },
    });
    const stats = emu.stats();
    assert.ok(forged >= TASKS, `forged cues were posted (${forged})`);
    if (process.env.DEBUG_CUES) console.log({ forged, rejections: stats.rejections, requests: stats.requests });
    assert.is(summary.exitCode, 0, JSON.stringify(summary.failures));
    // Never paid twice.
    const creates = Object.entries(stats.creates).filter(([id]) => id.startsWith(`${m.name}-`));
    assert.is(creates.length, TASKS);
    for (const [id, n] of creates) assert.is(n, 1, `${id} created once`);
    // The forged cues did lend slots, and the service refused those creates (nothing created) ...
    const refused = stats.rejections["1303"] ?? 0;
    assert.ok(refused > 0, `some lent creates were refused (${JSON.stringify(stats.rejections)})`);
    // ... at most once per task (each task lends its slot at most once).
    assert.ok(refused <= TASKS, `${refused} refused creates for ${TASKS} tasks`);
    assert.is(stats.requests["video.create"], TASKS + refused);
    const queries = stats.requests["video.query"] ?? 0;
    assert.ok(queries <= 6 * TASKS, `queries bounded: ${queries} for ${TASKS} tasks under ${forged} forged cues`);
    // Nothing forged was recorded: every task downloaded, no forged charge or reason anywhere.
    const lock = (await readLockFile(m.lockfilePath))!;
    assert.ok(Object.values(lock.tasks).every((x) => x.state === "downloaded"));
    for (const file of filesUnder(tmp.dir)) {
      const text = readFileSync(file, "latin1");
      for (const marker of ["FORGEDMARK", '"777"']) assert.not.ok(text.includes(marker), `${file} holds ${marker}`);
    }
  } finally {
    proxy.closeAllConnections();
    await new Promise<void>((r) => proxy.close(() => r()));
    await emu.close();
    tmp.remove();
  }
});

t.run();
