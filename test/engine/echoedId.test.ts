// An answer naming another task (the external id it echoes is not ours) is never taken
// as ours: the rule (createRules.ts `echoesAnotherTask`) and the state machine. The task
// is then "outcome unknown, exists": looked up by its own external id with each poll,
// adopted when found, never created again.

import { test } from "uvu";
import * as assert from "uvu/assert";
import { echoesAnotherTask } from "../../src/engine/createRules.js";
import { Machine, makeTable, ofTag, task, view } from "./machine.js";

test("echoesAnotherTask: only an echoed external id that is present and differs from ours", () => {
  assert.is(echoesAnotherTask("a", "b"), true);
  assert.is(echoesAnotherTask("a", "a"), false);
  assert.is(echoesAnotherTask("a", undefined), false);
  assert.is(echoesAnotherTask("a", ""), false);
});

const started = () => {
  const m = new Machine(makeTable());
  for (const id of ["a", "b"]) {
    m.feed({ _tag: "Admit", now: 0, task: task(id), firstAttempt: 1, front: false });
  }
  m.feed({ _tag: "Tick", now: 1 });
  // Both creates answered with the same task id: b's answer named a's task.
  m.feed({ _tag: "Created", now: 2, id: "a", taskId: "t1", createdAt: 2 });
  m.feed({ _tag: "Created", now: 2, id: "b", taskId: "t1", createdAt: 2 });
  return m;
};
const asked = [
  { id: "a", taskId: "t1", createdAt: 2, watermark: false },
  { id: "b", taskId: "t1", createdAt: 2, watermark: false },
];

test("a poll answer whose external id is another task's: nothing of it recorded for ours, which is looked up by its own external id, never created again", () => {
  const m = started();
  const polled = m.feed({ _tag: "Polled", now: 10, asked, views: [view("t1", "a", "succeeded", 5)] });
  const downloads = ofTag(polled, "Download");
  assert.equal(downloads.map((d) => d.entry.task.id), ["a"], "a's answer is a's, and only a's");
  assert.equal(ofTag(polled, "Record").map((r) => r.task.id), ["a"], "nothing recorded for b (no state, charge or task id)");
  assert.match(ofTag(polled, "Emit").map((e) => (e.event.type === "notice" ? e.event.message : "")).join("\n"), "b: the service's answer for task t1 names another task (external id a)");
  const b = m.table.entries.get("b")!;
  assert.is(b.phase, "inflight");
  assert.is(b.taskId, undefined);
  assert.is(b.existsAtService, true);
  assert.is(b.holding, 1, "it holds its slot while its outcome is unknown");
  const tick = m.feed({ _tag: "Tick", now: 10 + 120_000 });
  assert.is(ofTag(tick, "Create").length, 0, "never created again");
  const poll = ofTag(tick, "Poll")[0]!;
  assert.equal(poll.lookups, [{ id: "b", watermark: false }]);
  // Not found for long: never sent again (exists); found: adopted with its own task.
  const notFound = m.feed({ _tag: "Polled", now: 10 + 120_001, asked: [], views: [], lookedUp: { ids: ["b"], found: new Map(), startedAt: 10 + 120_000 } });
  assert.is(ofTag(notFound, "Create").length, 0);
  assert.is(m.table.entries.get("b")!.recorded !== "planned", true, "not put back in line");
  const found = m.feed({ _tag: "Polled", now: 10 + 120_002, asked: [], views: [], lookedUp: { ids: ["b"], found: new Map([["b", view("t2", "b", "succeeded", 6)]]), startedAt: 10 + 120_001 } });
  assert.equal(ofTag(found, "Record").map((r) => [r.task.id, r.patch.task_id]), [["b", "t2"]]);
  assert.equal(ofTag(found, "Download").map((d) => d.view.taskId), ["t2"]);
});

test("an answer echoing no external id is taken as ours (nothing to compare)", () => {
  const m = new Machine(makeTable());
  m.feed({ _tag: "Admit", now: 0, task: task("a"), firstAttempt: 1, front: false, known: { state: "processing", task_id: "t1" } });
  const polled = m.feed({ _tag: "Polled", now: 5, asked: [{ id: "a", taskId: "t1", createdAt: 0, watermark: false }], views: [{ ...view("t1", "a", "succeeded", 4), externalId: undefined }] });
  assert.is(ofTag(polled, "Download").length, 1);
});

test.run();
