// The task state machine, event by event: what each answer does to a task's phase and
// which effects it asks for (a create, a lookup first, a record, a download). No I/O,
// no clock: every event carries its time.

import { Duration } from "effect";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { makePolicy } from "../../src/policy/Policy.js";
import { afterCreateError, lookupBeforeCreate, settleUnknown } from "../../src/engine/createRules.js";
import type { KnownRecord } from "../../src/engine/EngineEvent.js";
import { Machine, makeTable, ofTag, task, view } from "./machine.js";

const policy = makePolicy(1);

const admitted = (known?: KnownRecord) => {
  const m = new Machine(makeTable());
  const effects = m.feed({ _tag: "Admit", now: 0, task: task("a"), firstAttempt: 1, front: false, ...(known ? { known } : {}) });
  return { m, effects, entry: m.table.entries.get("a")! };
};

test("a new task is recorded planned and the next tick starts its create without a lookup", () => {
  const { m, effects } = admitted();
  assert.equal(ofTag(effects, "Record").map((r) => r.patch.state), ["planned"]);
  const tick = m.feed({ _tag: "Tick", now: 1 });
  const creates = ofTag(tick, "Create");
  assert.is(creates.length, 1);
  assert.is(creates[0]!.lookupFirst, false);
  assert.is(m.table.entries.get("a")!.phase, "creating");
});

test("a task left `submitting` by a killed run is outcome unknown: holds its slot, looked up with each poll, never created while the window lasts", () => {
  const window = 60_000;
  const { m, effects, entry } = admitted({ state: "submitting", submitted_at: 0 });
  assert.is(ofTag(effects, "Record").length, 0, "nothing recorded: the lockfile already says submitting");
  assert.is(entry.phase, "inflight");
  assert.is(entry.holding, 1, "it counts against the slot limit");
  assert.is(ofTag(m.feed({ _tag: "Tick", now: 1 }), "Create").length, 0);
  const tick = m.feed({ _tag: "Tick", now: 20_000 });
  assert.is(ofTag(tick, "Create").length, 0);
  const poll = ofTag(tick, "Poll")[0]!;
  assert.equal(poll.lookups, [{ id: "a", watermark: false }]);
  // Not found, the lookup started inside the window: still unknown, nothing sent.
  m.feed({ _tag: "Polled", now: 20_002, asked: [], views: [], lookedUp: { ids: ["a"], found: new Map(), startedAt: 20_000 } });
  assert.is(entry.phase, "inflight");
  assert.is(ofTag(m.feed({ _tag: "Tick", now: window - 1 }), "Create").length, 0);
  // Not found by a lookup that started after the window: a definite "not there".
  const settled = m.feed({ _tag: "Polled", now: window + 5, asked: [], views: [], lookedUp: { ids: ["a"], found: new Map(), startedAt: window } });
  assert.equal(ofTag(settled, "Record").map((r) => r.patch.state), ["planned"]);
  assert.is(entry.phase, "waiting");
  const creates = ofTag(m.feed({ _tag: "Tick", now: window + 6 }), "Create");
  assert.is(creates.length, 1);
  assert.is(creates[0]!.lookupFirst, false);
});

test("an outcome-unknown create (5xx after the body, a reset) is never sent again while unknown; a lookup that finds it adopts it", () => {
  const { m, entry } = admitted();
  m.feed({ _tag: "Tick", now: 0 });
  const effects = m.feed({ _tag: "Unknown", now: 10, id: "a", message: "HTTP 502", sentAt: 5, exists: false, intentRecorded: true });
  assert.is(ofTag(effects, "Record").length, 0, "stays submitting in the lockfile");
  assert.is(entry.phase, "inflight");
  assert.is(entry.holding, 1);
  assert.is(m.table.limiters.video.used, 1, "keeps its slot");
  let creates = 0;
  for (let t = 11; t < 60_000; t += 997) {
    const tick = m.feed({ _tag: "Tick", now: t });
    creates += ofTag(tick, "Create").length;
    const poll = ofTag(tick, "Poll")[0];
    if (poll) m.feed({ _tag: "Polled", now: t + 1, asked: [], views: [], lookedUp: { ids: poll.lookups.map((l) => l.id), found: new Map(), startedAt: poll.at } });
  }
  assert.is(creates, 0, "no second create inside the window");
  const found = m.feed({ _tag: "Polled", now: 59_999, asked: [], views: [], lookedUp: { ids: ["a"], found: new Map([["a", view("t9", "a", "processing", 50)]]), startedAt: 59_990 } });
  assert.equal(ofTag(found, "Record").map((r) => [r.patch.state, r.patch.task_id]), [["processing", "t9"]]);
  assert.is(entry.taskId, "t9");
  assert.is(entry.unknownSince, undefined);
  assert.is(m.table.counters.adopted, 1);
});

test("a 1201 saying the id is in use proves the task exists: never rejected, never sent again, adopted once visible", () => {
  const { m, entry } = admitted();
  m.feed({ _tag: "Tick", now: 0 });
  const effects = m.feed({ _tag: "Unknown", now: 10, id: "a", message: "external_task_id a already used by task t7", sentAt: 5, exists: true, intentRecorded: true });
  assert.is(ofTag(effects, "Record").length, 0);
  assert.is(entry.phase, "inflight");
  // Even a lookup long after the window does not let it be sent again.
  const late = m.feed({ _tag: "Polled", now: 200_000, asked: [], views: [], lookedUp: { ids: ["a"], found: new Map(), startedAt: 199_000 } });
  assert.is(ofTag(late, "Record").length, 0);
  assert.is(entry.phase, "inflight");
  assert.is(ofTag(m.feed({ _tag: "Tick", now: 200_001 }), "Create").length, 0);
  m.feed({ _tag: "Polled", now: 200_100, asked: [], views: [], lookedUp: { ids: ["a"], found: new Map([["a", view("t7", "a", "succeeded", 50)]]), startedAt: 200_050 } });
  assert.is(entry.phase, "fetching");
  assert.is(entry.taskId, "t7");
});

test("an answer holding a task that was not asked for is ignored with a notice", () => {
  const m = new Machine(makeTable());
  m.feed({ _tag: "Admit", now: 0, task: task("a"), firstAttempt: 1, front: false, known: { state: "processing", task_id: "t1" } });
  const effects = m.feed({ _tag: "Polled", now: 5, asked: [{ id: "a", taskId: "t1", createdAt: 0, watermark: false }], views: [view("t1", "a", "processing", 4), view("zz", "other", "succeeded", 4)] });
  assert.equal(ofTag(effects, "Download").length, 0);
  assert.match(ofTag(effects, "Emit").map((e) => (e.event.type === "notice" ? e.event.message : "")).join("\n"), "not asked for (zz)");
});

test("an unreadable task of an answer is reported with what was wrong and asked again (not counted missing)", () => {
  const m = new Machine(makeTable());
  m.feed({ _tag: "Admit", now: 0, task: task("a"), firstAttempt: 1, front: false, known: { state: "processing", task_id: "t1" } });
  m.feed({ _tag: "Admit", now: 0, task: task("b"), firstAttempt: 1, front: false, known: { state: "processing", task_id: "t2" } });
  const asked = [
    { id: "a", taskId: "t1", createdAt: 0, watermark: false },
    { id: "b", taskId: "t2", createdAt: 0, watermark: false },
  ];
  let said = "";
  for (let i = 1; i <= 6; i++) {
    const effects = m.feed({ _tag: "Polled", now: 700_000 + i, asked, views: [view("t1", "a", "succeeded", 4)], odd: [{ taskId: "t2", problems: "/billing/0/amount: must be a finite non-negative decimal" }] });
    said += ofTag(effects, "Emit").map((e) => (e.event.type === "notice" ? e.event.message : "")).join("\n");
  }
  assert.is(m.table.entries.get("a")!.phase, "fetching", "the good task proceeds");
  assert.is(m.table.entries.get("b")!.phase, "inflight", "the odd one is asked again, never left as missing");
  assert.match(said, "b: the service's answer could not be read (/billing/0/amount");
});

test("a task in flight by the lockfile is followed (polled), not created", () => {
  const { m, entry } = admitted({ state: "processing", task_id: "t1", created_at: 5 });
  assert.is(entry.phase, "inflight");
  const tick = m.feed({ _tag: "Tick", now: 10_000 });
  assert.is(ofTag(tick, "Create").length, 0);
  assert.equal(ofTag(tick, "Poll")[0]!.tasks.map((t) => t.taskId), ["t1"]);
});

test("a create answered: recorded submitted with the service's id; a poll saying succeeded starts its download", () => {
  const { m } = admitted();
  m.feed({ _tag: "Tick", now: 1 });
  const created = m.feed({ _tag: "Created", now: 2, id: "a", taskId: "t1", createdAt: 2 });
  assert.equal(ofTag(created, "Record")[0]!.patch, { state: "submitted", task_id: "t1", created_at: 2 });
  const polled = m.feed({ _tag: "Polled", now: 5, asked: [{ id: "a", taskId: "t1", createdAt: 2, watermark: false }], views: [view("t1", "a", "succeeded", 4)] });
  assert.equal(ofTag(polled, "Record").map((r) => r.patch.state), ["succeeded"]);
  assert.is(ofTag(polled, "Download").length, 1);
  const fetched = m.feed({ _tag: "Fetched", now: 6, id: "a", outputs: [{ type: "video", index: 0, variant: "main", path: "a/0.mp4", sha256: "x" } as never], urls: [] });
  assert.equal(ofTag(fetched, "Record").map((r) => r.patch.state), ["downloaded"]);
  assert.is(m.table.entries.get("a")!.phase, "done");
  assert.is(m.table.counters.downloaded, 1);
});

test("an unconfirmed create (outcome unknown) is looked up before it is sent again, after the wait", () => {
  const { m } = admitted();
  m.feed({ _tag: "Tick", now: 0 });
  m.feed({ _tag: "SendFailed", now: 1, id: "a", message: "timeout", lookupFirst: true, intentRecorded: true });
  const entry = m.table.entries.get("a")!;
  assert.is(entry.phase, "waiting");
  assert.is(ofTag(m.feed({ _tag: "Tick", now: 2 }), "Create").length, 0, "not before sendFailedWait");
  const later = ofTag(m.feed({ _tag: "Tick", now: 1 + 10_000 }), "Create");
  assert.is(later.length, 1);
  assert.is(later[0]!.lookupFirst, true);
});

test("a 1303 puts the task back in line without a lookup (nothing was created) and lowers the slot limit", () => {
  const { m } = admitted();
  m.feed({ _tag: "Tick", now: 0 });
  const effects = m.feed({ _tag: "NoSlot", now: 1, id: "a" });
  assert.equal(ofTag(effects, "Record").map((r) => r.patch.state), ["planned"]);
  const entry = m.table.entries.get("a")!;
  assert.is(entry.lookupFirst, false);
  assert.is(entry.notBefore, 1 + 2_000);
  assert.is(m.table.counters.noSlotAnswers, 1);
});

test("a 1303 with Retry-After waits what the service asked when longer than the policy's wait, never past the cap", () => {
  const waitAfter = (retryAfterMs: number) => {
    const { m } = admitted();
    m.feed({ _tag: "Tick", now: 0 });
    m.feed({ _tag: "NoSlot", now: 1, id: "a", retryAfterMs });
    return m.table.entries.get("a")!.notBefore! - 1;
  };
  assert.is(waitAfter(500), 2_000, "shorter: the policy's wait");
  assert.is(waitAfter(7_000), 7_000);
  assert.is(waitAfter(3_600_000), 20_000, "an hour asked: the cap");
});

test("a refusal after an earlier send keeps the task submitting (looked up next time) and stops submitting", () => {
  const { m } = admitted();
  m.feed({ _tag: "Tick", now: 0 });
  const effects = m.feed({ _tag: "Refused", now: 1, id: "a", message: "balance", keepSubmitting: true, intentRecorded: true });
  assert.is(ofTag(effects, "Record").length, 0);
  assert.is(m.table.entries.get("a")!.lookupFirst, true);
  assert.is(m.table.stop, "refused");
  m.feed({ _tag: "Tick", now: 2 });
  assert.equal(m.table.loop, { _tag: "Stop" });
});

test("a refusal of the first send records the task planned again (nothing was created)", () => {
  const { m } = admitted();
  m.feed({ _tag: "Tick", now: 0 });
  const effects = m.feed({ _tag: "Refused", now: 1, id: "a", message: "balance", keepSubmitting: false, intentRecorded: true });
  assert.equal(ofTag(effects, "Record").map((r) => r.patch.state), ["planned"]);
});

test("a refusal lets the creates already in flight report (each recorded), at most policy.refusedDrainWait, then the loop stops; nothing more is created", () => {
  const m = new Machine(makeTable());
  for (const id of ["a", "b", "c"]) m.feed({ _tag: "Admit", now: 0, task: task(id), firstAttempt: 1, front: false });
  assert.is(ofTag(m.feed({ _tag: "Tick", now: 1 }), "Create").length, 3);
  m.feed({ _tag: "Refused", now: 2, id: "a", code: 1202, message: "the service at x has no POST /omni-video/svc-o1", keepSubmitting: false, intentRecorded: true });
  const drain = Duration.toMillis(m.table.config.policy.refusedDrainWait);
  const waiting = m.feed({ _tag: "Tick", now: 3 });
  assert.equal(m.table.loop, { _tag: "Wait", until: 2 + drain }, "b and c are still in flight: their answers are awaited");
  assert.is(ofTag(waiting, "Create").length, 0);
  // b's answer is the same refusal: planned again (nothing was created).
  const b = m.feed({ _tag: "Refused", now: 4, id: "b", code: 1202, message: "again", keepSubmitting: false, intentRecorded: true });
  assert.equal(ofTag(b, "Record").map((r) => r.patch.state), ["planned"]);
  assert.is(m.table.refusal, "the service at x has no POST /omni-video/svc-o1", "the first refusal is the one told");
  m.feed({ _tag: "Tick", now: 5 });
  assert.is(m.table.loop._tag, "Wait", "c is still in flight");
  // c never answers: the run stops once the drain time is over.
  m.feed({ _tag: "Tick", now: 2 + drain });
  assert.equal(m.table.loop, { _tag: "Stop" });
});

test("an interrupt while a refused run's creates in flight report stops the loop at once", () => {
  const m = new Machine(makeTable());
  for (const id of ["a", "b"]) m.feed({ _tag: "Admit", now: 0, task: task(id), firstAttempt: 1, front: false });
  m.feed({ _tag: "Tick", now: 1 });
  m.feed({ _tag: "Refused", now: 2, id: "a", code: 1202, message: "no such API", keepSubmitting: false, intentRecorded: true });
  m.feed({ _tag: "Tick", now: 3 });
  assert.is(m.table.loop._tag, "Wait");
  m.feed({ _tag: "Stop", reason: "signal", now: 4 });
  m.feed({ _tag: "Tick", now: 5 });
  assert.equal(m.table.loop, { _tag: "Stop" });
  assert.is(m.table.stop, "refused", "the run's outcome stays the refusal");
});

test("a refusal with no create in flight stops the loop at the next tick", () => {
  const { m } = admitted();
  m.feed({ _tag: "Tick", now: 0 });
  m.feed({ _tag: "Refused", now: 1, id: "a", message: "balance", keepSubmitting: false, intentRecorded: true });
  m.feed({ _tag: "Tick", now: 2 });
  assert.equal(m.table.loop, { _tag: "Stop" });
});

test("a failed task with retries left is recorded failed and its next attempt is admitted", () => {
  const m = new Machine(makeTable());
  m.feed({ _tag: "Admit", now: 0, task: task("a", "video", 1, 1), firstAttempt: 1, front: false, known: { state: "processing", task_id: "t1" } });
  const effects = m.feed({ _tag: "Polled", now: 5, asked: [{ id: "a", taskId: "t1", createdAt: 0, watermark: false }], views: [view("t1", "a", "failed", 4, "5000 render error")] });
  const rec = ofTag(effects, "Record")[0]!;
  assert.is(rec.patch.state, "failed");
  assert.is(rec.patch.error?.code, 5000);
  assert.equal(ofTag(effects, "Retry").map((r) => r.task.id), ["a-a2"]);
  assert.not.ok(m.table.entries.has("a"), "the failed attempt leaves the table");
});

test("a task the service no longer shows by its id is looked up by its external id after enough polls and time, then left stuck, never created again", () => {
  const m = new Machine(makeTable());
  m.feed({ _tag: "Admit", now: 0, task: task("a"), firstAttempt: 1, front: false, known: { state: "submitted", task_id: "t1" } });
  const asked = [{ id: "a", taskId: "t1", createdAt: 0, watermark: false }];
  for (let i = 1; i <= 4; i++) m.feed({ _tag: "Polled", now: 700_000 + i, asked, views: [] });
  assert.is(m.table.entries.get("a")!.phase, "inflight");
  const missing = m.feed({ _tag: "Polled", now: 700_010, asked, views: [] });
  const entry = m.table.entries.get("a")!;
  assert.is(entry.phase, "inflight");
  assert.is(entry.taskId, undefined, "its task id may not be its own");
  assert.is(entry.existsAtService, true);
  assert.match(ofTag(missing, "Emit").map((e) => (e.event.type === "notice" ? e.event.message : "")).join("\n"), "looking it up by its external id (not created again)");
  const tick = m.feed({ _tag: "Tick", now: 760_000 });
  assert.is(ofTag(tick, "Create").length, 0);
  assert.equal(ofTag(tick, "Poll")[0]!.lookups, [{ id: "a", watermark: false }]);
  const effects = m.feed({ _tag: "Polled", now: 1_400_020, asked: [], views: [], lookedUp: { ids: ["a"], found: new Map(), startedAt: 1_400_015 } });
  assert.is(m.table.entries.get("a")!.phase, "stuck");
  const said = ofTag(effects, "Emit").map((e) => (e.event.type === "notice" ? e.event.message : ""));
  assert.match(said.join("\n"), "not created again");
  assert.is(ofTag(m.feed({ _tag: "Tick", now: 1_500_000 }), "Create").length, 0);
});

test("a task not shown by its id, found by its external id under another id: adopted with its own id", () => {
  const m = new Machine(makeTable());
  m.feed({ _tag: "Admit", now: 0, task: task("a"), firstAttempt: 1, front: false, known: { state: "submitted", task_id: "wrong" } });
  const asked = [{ id: "a", taskId: "wrong", createdAt: 0, watermark: false }];
  for (let i = 1; i <= 5; i++) m.feed({ _tag: "Polled", now: 700_000 + i, asked, views: [] });
  const found = m.feed({ _tag: "Polled", now: 760_000, asked: [], views: [], lookedUp: { ids: ["a"], found: new Map([["a", view("t7", "a", "succeeded", 5)]]), startedAt: 759_000 } });
  assert.equal(ofTag(found, "Record").map((r) => r.patch.task_id), ["t7"]);
  assert.is(ofTag(found, "Download").length, 1);
});

test("a callback before the create's answer is kept as a cue: once the create is confirmed, the task is queried, nothing recorded from the callback", () => {
  const { m } = admitted();
  m.feed({ _tag: "Tick", now: 0 });
  const early = m.feed({ _tag: "Callback", now: 1, observation: { kind: "video", taskId: "t1", externalId: "a", status: "succeeded" } });
  assert.is(early.length, 0);
  const created = m.feed({ _tag: "Created", now: 2, id: "a", taskId: "t1", createdAt: 1 });
  assert.equal(ofTag(created, "Record").map((r) => r.patch.state), ["submitted"]);
  const next = m.feed({ _tag: "Tick", now: 3 });
  assert.equal(ofTag(next, "Poll").map((p) => p.tasks.map((t) => t.taskId)), [["t1"]]);
  assert.is(ofTag(next, "Record").length + ofTag(next, "Download").length, 0);
});

test("a forged 'succeeded' or 'failed' callback records, downloads and retries nothing; it only leads to one query, spaced", () => {
  const { m } = admitted();
  m.feed({ _tag: "Tick", now: 0 });
  m.feed({ _tag: "Created", now: 2, id: "a", taskId: "t1", createdAt: 1 });
  m.feed({ _tag: "Polled", now: 3, asked: [{ id: "a", taskId: "t1", createdAt: 1, watermark: false }], views: [] });
  for (const status of ["succeeded", "failed"] as const) {
    const effects = m.feed({ _tag: "Callback", now: 10, observation: { kind: "video", taskId: "t1", externalId: "a", status } });
    assert.equal(effects, []);
  }
  // A callback naming another task id (a forged one) is no cue for ours.
  m.feed({ _tag: "Callback", now: 10, observation: { kind: "video", taskId: "evil", externalId: "a", status: "succeeded" } });
  const first = m.feed({ _tag: "Tick", now: 11 });
  assert.is(ofTag(first, "Poll").length, 1);
  assert.is(ofTag(first, "Record").length + ofTag(first, "Download").length + ofTag(first, "Retry").length, 0);
  assert.is(m.table.entries.get("a")!.phase, "inflight");
  // Another flood right after: no second query within the spacing.
  m.feed({ _tag: "Callback", now: 12, observation: { kind: "video", taskId: "t1", externalId: "a", status: "succeeded" } });
  assert.is(ofTag(m.feed({ _tag: "Tick", now: 13 }), "Poll").length, 0);
});

test("the deadline stops the loop; nothing is started after it", () => {
  const m = new Machine(makeTable({ deadline: 100 }));
  m.feed({ _tag: "Admit", now: 0, task: task("a"), firstAttempt: 1, front: false });
  const effects = m.feed({ _tag: "Tick", now: 100 });
  assert.is(ofTag(effects, "Create").length, 0);
  assert.is(m.table.stop, "time");
  assert.equal(m.table.loop, { _tag: "Stop" });
});

test("the budget stops submission before a task whose estimate would pass it", () => {
  const m = new Machine(makeTable({ budget: { max: "1", currency: "USD" } }));
  m.feed({ _tag: "Admit", now: 0, task: { ...task("a"), estimate: { currency: "USD", amount: "0.6" } }, firstAttempt: 1, front: false });
  m.feed({ _tag: "Admit", now: 0, task: { ...task("b"), estimate: { currency: "USD", amount: "0.6" } }, firstAttempt: 1, front: false });
  const effects = m.feed({ _tag: "Tick", now: 1 });
  assert.equal(ofTag(effects, "Create").map((c) => c.entry.task.id), ["a"]);
  assert.ok(m.table.budgetStopped);
});

test("after a create error: an unknown outcome or a 1201 naming the id is never sent again by the worker; 1303 and 'retry' never look up", () => {
  const at = { id: "x", sends: 0, linkRefreshes: 0, sendFailures: 0, downstream: false };
  assert.equal(afterCreateError({ errorClass: "unknown-outcome", code: undefined, message: "reset" }, at, policy), { _tag: "Unknown", exists: false });
  assert.equal(afterCreateError({ errorClass: "no-slot", code: 1303, message: "" }, at, policy), { _tag: "NoSlot" });
  assert.equal(afterCreateError({ errorClass: "retry", code: 5000, message: "" }, at, policy), { _tag: "SendFailed", lookupFirst: false });
  assert.equal(afterCreateError({ errorClass: "refused", code: 1102, message: "" }, { ...at, sends: 1 }, policy), { _tag: "Refused", keepSubmitting: true });
  assert.equal(afterCreateError({ errorClass: "task-rejected", code: 1201, message: "external_task_id x already exists" }, at, policy), { _tag: "Unknown", exists: true });
  assert.equal(afterCreateError({ errorClass: "task-rejected", code: 1201, message: "aspect_ratio is invalid" }, at, policy), { _tag: "Lookup", then: { _tag: "Rejected" } });
  const link = { errorClass: "task-rejected" as const, code: 1201, message: "could not fetch image: 403" };
  assert.equal(afterCreateError(link, { ...at, downstream: true }, policy), { _tag: "Lookup", then: { _tag: "RefreshLinks" } });
  assert.equal(afterCreateError({ ...link, code: 1200 }, { ...at, downstream: true, linkRefreshes: 3 }, policy), { _tag: "SendFailed", lookupFirst: false });
  assert.equal(afterCreateError({ ...link, code: 1200 }, { ...at, downstream: true, linkRefreshes: 3, sendFailures: 5 }, policy), { _tag: "Rejected" });
});

test("settleUnknown: found adopts; not found settles only after the visibility window (never, when the service said it exists)", () => {
  const w = 60_000;
  assert.equal(settleUnknown({ unknownSince: 1_000, exists: false }, true, 1_001, policy), { _tag: "Adopt" });
  assert.equal(settleUnknown({ unknownSince: 1_000, exists: false }, false, 1_000 + w - 1, policy), { _tag: "KeepLooking" });
  assert.equal(settleUnknown({ unknownSince: 1_000, exists: false }, false, 1_000 + w, policy), { _tag: "SendAgain" });
  assert.equal(settleUnknown({ unknownSince: 1_000, exists: true }, false, 1_000 + w * 5, policy), { _tag: "KeepLooking" });
  assert.equal(settleUnknown({ unknownSince: 1_000, exists: true }, false, 1_000 + 600_000, policy), { _tag: "LeaveForLater" });
});

test("a task the lockfile records as planned (or not at all) is looked up before its first create, on a service that may hold it", () => {
  const m = new Machine(makeTable({ lookupFirst: true }));
  m.feed({ _tag: "Admit", now: 0, task: task("a"), firstAttempt: 1, front: false, known: { state: "planned" } });
  const creates = ofTag(m.feed({ _tag: "Tick", now: 1 }), "Create");
  assert.is(creates[0]!.lookupFirst, true);
});

test("lookupBeforeCreate: only a task the lockfile does not know, made from a parent this run created, skips the lookup (and not when the lockfile may lack creates)", () => {
  const live = { lookupFirst: true };
  assert.is(lookupBeforeCreate(live, false, true), false);
  assert.is(lookupBeforeCreate(live, false, false), true, "parent adopted or from an earlier run");
  assert.is(lookupBeforeCreate(live, true, true), true, "the lockfile knows it: its state decides");
  assert.is(lookupBeforeCreate({ lookupFirst: true, mayLackCreates: true }, false, true), true, "restored lockfile");
  assert.is(lookupBeforeCreate({ lookupFirst: false }, false, false), false, "fresh service");
});

test("a downstream task or retry admitted mid-run from a task this run created is created without a lookup; from an adopted one, with one", () => {
  for (const parentCreatedHere of [true, false]) {
    const m = new Machine(makeTable({ lookupFirst: true }));
    m.feed({ _tag: "Admit", now: 0, task: task("down"), firstAttempt: 1, front: true, parentCreatedHere });
    m.feed({ _tag: "AdmitRetry", now: 0, task: task("r", "video", 2), firstAttempt: 1, parentCreatedHere });
    const creates = ofTag(m.feed({ _tag: "Tick", now: 1 }), "Create");
    assert.is(creates.length, 2);
    for (const c of creates) assert.is(c.lookupFirst, !parentCreatedHere, `${c.entry.task.id}, parent created here: ${parentCreatedHere}`);
  }
});

test("Created marks the entry created here; Adopted does not", () => {
  const m = new Machine(makeTable({ lookupFirst: true }));
  m.feed({ _tag: "Admit", now: 0, task: task("a"), firstAttempt: 1, front: false });
  m.feed({ _tag: "Admit", now: 0, task: task("b"), firstAttempt: 1, front: false });
  m.feed({ _tag: "Tick", now: 1 });
  m.feed({ _tag: "Created", now: 2, id: "a", taskId: "t-a", createdAt: 2 });
  assert.is(m.table.entries.get("a")!.createdHere, true);
  assert.not.ok(m.table.entries.get("b")!.createdHere);
});

test.run();
