// Why a changed task (`~`) is a new task, in words (issue 31): each case from the facts the
// lockfile's record and the recorded request give: the manifest's name (the same request),
// the job's id, the take, the request's fields, an upstream result, an earlier record of a
// later attempt, and what cannot be known without a recorded request. Ids are made by the
// manifest's own rule (TaskIdentity.ts), names and jobs with dashes in them included.

import { test } from "uvu";
import * as assert from "uvu/assert";
import { changeReason, namePartOf, type ChangeFacts, type ChangedTask } from "../../src/plan/changeReason.js";
import { requestHash, taskId } from "../../src/manifest/TaskIdentity.js";

const INTENT = "a".repeat(64);
const OTHER_INTENT = "b".repeat(64);

const task = (name: string, job: string, intent = INTENT, take = 1, attempt = 1, upstream?: ChangedTask["upstream"]): ChangedTask => {
  const hash = requestHash(intent, take, attempt);
  return { id: taskId(name, job, hash), job, take, attempt, requestHash: hash, ...(upstream ? { upstream } : {}) };
};

/** The lockfile's record of a task as `task` made it. */
const before = (t: ChangedTask): ChangeFacts["before"] => ({
  id: t.id,
  record: { job: t.job, take: t.take, attempt: t.attempt, request_hash: t.requestHash, ...(t.upstream ? { upstream: t.upstream } : {}) },
});

test("namePartOf: the name before `-<job>-<hash>`, dashes in name and job kept; another job's id: undefined", () => {
  const t = task("spring-campaign", "key-frames");
  assert.is(namePartOf(t.id, "key-frames"), "spring-campaign");
  assert.is(namePartOf(t.id, "frames"), "spring-campaign-key");
  assert.is(namePartOf(t.id, "stills"), undefined);
  assert.is(namePartOf("short", "stills"), undefined);
});

test("the manifest renamed, the request the same: the rename is the reason, never 'the take or an input's content'", () => {
  const old = task("demo", "keyframes");
  const now = task("demo2", "keyframes");
  const reason = changeReason({ task: now, before: before(old), fields: [] });
  assert.equal(reason, [
    "the manifest's name changed: demo → demo2 (a task's id is made from it)",
    "the request is the same (prompt, settings, inputs by content): only the task's id changed",
  ]);
  // Also when no report recorded the old request: the lockfile alone says it.
  assert.equal(changeReason({ task: now, before: before(old), fields: undefined }), reason);
  // An input's path that moved (an upstream result in another folder) is not part of the request: not listed.
  assert.equal(changeReason({ task: now, before: before(old), fields: ["contents[1].url (first_frame): a/0.png → a-x/0.png"] }), reason);
});

test("the job's id changed: said, with the request the same", () => {
  const old = task("demo", "stills");
  const now = task("demo", "keyframes");
  assert.equal(changeReason({ task: now, before: before(old), fields: [] }), [
    "the job's id changed: stills → keyframes",
    "the request is the same (prompt, settings, inputs by content): only the task's id changed",
  ]);
});

test("the take changed: said, and nothing more made up", () => {
  const old = task("demo", "keyframes", INTENT, 1);
  const now = task("demo", "keyframes", INTENT, 2);
  assert.equal(changeReason({ task: now, before: before(old), fields: [] }), ["the take changed: 1 → 2"]);
});

test("a field of the request changed: the fields as the recorded request says, after the rename when both changed", () => {
  const old = task("demo", "clips");
  const fields = ["settings.duration: 5 → 10"];
  assert.equal(changeReason({ task: task("demo", "clips", OTHER_INTENT), before: before(old), fields }), fields);
  assert.equal(changeReason({ task: task("demo2", "clips", OTHER_INTENT), before: before(old), fields }), [
    "the manifest's name changed: demo → demo2 (a task's id is made from it)",
    ...fields,
  ]);
});

test("an input's content changed: the input named by its field and file (as the recorded request gives it)", () => {
  const old = task("demo", "keyframes");
  const fields = ["image_list[0].image @ref: assets/mug.png changed (sha256 1d6b53df52d4 → 8aecd54d8446)"];
  assert.equal(changeReason({ task: task("demo", "keyframes", OTHER_INTENT), before: before(old), fields }), fields);
});

test("a downstream task made from another upstream result: names both, also with no recorded request; the same result under a renamed manifest is not a change", () => {
  const upA = task("demo", "keyframes");
  const upB = task("demo", "keyframes", OTHER_INTENT);
  const old = task("demo", "clips", INTENT, 1, 1, { job: "keyframes", task: upA.id, output: 0 });
  const now = task("demo", "clips", OTHER_INTENT, 1, 1, { job: "keyframes", task: upB.id, output: 0 });
  const line = `made from another keyframes result: ${upA.id}#0 → ${upB.id}#0`;
  assert.equal(changeReason({ task: now, before: before(old), fields: [] }), [line]);
  assert.equal(changeReason({ task: now, before: before(old), fields: undefined }), [line]);
  // The upstream task renamed (same hash part), something else not recorded changed: not blamed on the upstream.
  const renamedUp = { job: "keyframes", task: task("demo2", "keyframes").id, output: 0 };
  const other = task("demo", "clips", OTHER_INTENT, 1, 1, renamedUp);
  assert.equal(changeReason({ task: other, before: before(old), fields: undefined }), [
    `what changed is not known: no report recorded the request of ${old.id}; 'omnibatch report' keeps it from now on`,
  ]);
});

test("a replaced record of a later attempt: compared at that attempt (hashAt), so a rename still reads as a rename", () => {
  const old = task("demo", "keyframes", INTENT, 1, 2);
  const now = task("demo2", "keyframes", INTENT, 1, 1);
  const hashAt = (a: number) => requestHash(INTENT, 1, a);
  assert.equal(changeReason({ task: now, before: before(old), fields: [], hashAt }), [
    "the manifest's name changed: demo → demo2 (a task's id is made from it)",
    "the request is the same (prompt, settings, inputs by content): only the task's id changed",
  ]);
  // Without hashAt the attempts cannot be compared: the rename is said, and that the rest is as shown.
  const without = changeReason({ task: now, before: before(old), fields: [] });
  assert.is(without[0], "the manifest's name changed: demo → demo2 (a task's id is made from it)");
  assert.match(without[1]!, /^prompt, settings and inputs as shown are the same: something the report does not show changed/);
});

test("nothing recorded differs and the request did: says so, never names a take or an id part that did not change", () => {
  const old = task("demo", "clips");
  const reason = changeReason({ task: task("demo", "clips", OTHER_INTENT), before: before(old), fields: [] });
  assert.is(reason.length, 1);
  assert.match(reason[0]!, /^prompt, settings and inputs as shown are the same: something the report does not show changed \(the video model/);
  assert.not.match(reason[0]!, /take|name/);
});

test.run();
