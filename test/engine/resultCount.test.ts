// How many results a finished task must list, and what a `succeeded` answer listing fewer
// leads to: the pure rules (resultCount.ts) and the state machine using them. A short
// answer is asked again, bounded in answers and time; then what is listed is fetched and
// the rest recorded lost, with why; past the 30 days it is final at once.

import { test } from "uvu";
import * as assert from "uvu/assert";
import { afterSucceeded, expectedResults, listedResults, withMissingResults } from "../../src/engine/resultCount.js";
import { makePolicy } from "../../src/policy/Policy.js";
import type { PlannedTask } from "../../src/manifest/PlannedTask.js";
import type { RemoteOutput } from "../../src/protocol/TaskView.js";
import type { LockOutput } from "../../src/state/LockFile.js";
import { Machine, makeTable, ofTag, task, view } from "./machine.js";

const DAY = 86_400_000;
const bounds = { answers: 5, waitMs: 60_000 };
const image = (request: Record<string, unknown>) => ({ kind: "image", request }) as unknown as Pick<PlannedTask, "kind" | "request">;

test("expectedResults: a video 1; an image n (1 when absent) for single, series_amount (4 when absent) for series, auto at least 1", () => {
  assert.is(expectedResults({ kind: "video", request: {} } as never), 1);
  assert.is(expectedResults(image({})), 1);
  assert.is(expectedResults(image({ n: 2 })), 2);
  assert.is(expectedResults(image({ result_type: "single", n: 9, series_amount: 3 })), 9);
  assert.is(expectedResults(image({ result_type: "series", n: 9, series_amount: 3 })), 3);
  assert.is(expectedResults(image({ result_type: "series" })), 4);
  assert.is(expectedResults(image({ result_type: "series", series_amount: "auto" })), 1);
});

test("listedResults: distinct positions of main files of the task's kind with a link (watermarks, audio, metadata and link-less items do not count)", () => {
  const outs: RemoteOutput[] = [
    { type: "image", index: 0, variant: "main", url: "http://x/0" },
    { type: "image", index: 0, variant: "watermark", url: "http://x/0w" },
    { type: "image", index: 1, variant: "main" },
    { type: "audio", index: 2, variant: "mp3", url: "http://x/a" },
  ];
  assert.is(listedResults("image", outs), 1);
  assert.is(listedResults("video", outs), 0);
  assert.is(listedResults("image", []), 0);
});

test("afterSucceeded: enough results fetch; a short answer is asked again until the count or the time bound, then given up with why", () => {
  assert.equal(afterSucceeded(2, 2, { count: 0, since: undefined }, 0, 0, bounds), { _tag: "Fetch" });
  assert.equal(afterSucceeded(1, 3, { count: 4, since: 0 }, 0, 0, bounds), { _tag: "Fetch" });
  assert.equal(afterSucceeded(2, 1, { count: 0, since: undefined }, 10, 0, bounds)._tag, "AskAgain");
  assert.equal(afterSucceeded(2, 1, { count: 3, since: 10 }, 20, 0, bounds)._tag, "AskAgain");
  const byCount = afterSucceeded(2, 1, { count: 4, since: 10 }, 20, 0, bounds);
  assert.is(byCount._tag, "GiveUp");
  assert.match((byCount as { why: string }).why, "lists 1 of the task's 2 results, in 5 answers");
  assert.is(afterSucceeded(1, 0, { count: 1, since: 10 }, 10 + 60_000, 0, bounds)._tag, "GiveUp", "the time bound ends it too");
});

test("afterSucceeded: past the 30 days after the task ended, a short answer is final at once (deleted at the service)", () => {
  const step = afterSucceeded(1, 0, { count: 0, since: undefined }, 31 * DAY, 0, bounds);
  assert.is(step._tag, "GiveUp");
  assert.match((step as { why: string }).why, "more than 30 days");
  assert.is(afterSucceeded(1, 0, { count: 0, since: undefined }, 29 * DAY, 0, bounds)._tag, "AskAgain");
  assert.is(afterSucceeded(1, 0, { count: 0, since: undefined }, 31 * DAY, undefined, bounds)._tag, "AskAgain", "no end time: not known to be past");
});

test("withMissingResults: every result the task must have is accounted for; missing ones are added or marked deleted, nothing else changes", () => {
  const got: LockOutput = { type: "image", index: 0, variant: "main", path: "s/image-1.png", size: 3, sha256: "a".repeat(64) };
  assert.equal(withMissingResults("image", 1, [got], 7), { outputs: [got], missing: 0 });
  assert.equal(withMissingResults("image", 2, [got], 7), { outputs: [got, { type: "image", index: 1, variant: "main", deleted_at: 7 }], missing: 1 });
  assert.equal(withMissingResults("video", 1, [], 7), { outputs: [{ type: "video", index: 0, variant: "main", deleted_at: 7 }], missing: 1 });
  // listed without a link: no file; marked deleted rather than left as if fine
  const linkless: LockOutput = { type: "image", index: 0, variant: "main" };
  assert.equal(withMissingResults("image", 1, [linkless], 7), { outputs: [{ ...linkless, deleted_at: 7 }], missing: 1 });
  // a record already deleted counts as accounted for; an audio item does not stand for the video
  const gone: LockOutput = { type: "video", index: 1, variant: "main", deleted_at: 3 };
  const audio: LockOutput = { type: "audio", index: 0, variant: "mp3", path: "v/a.mp3", size: 1, sha256: "b".repeat(64) };
  assert.equal(withMissingResults("video", 1, [audio, gone], 7), { outputs: [audio, gone], missing: 0 });
  assert.equal(withMissingResults("video", 2, [audio, gone], 7).outputs.at(-1), { type: "video", index: 0, variant: "main", deleted_at: 7 });
});

const imageTask = (id: string, n: number): PlannedTask => {
  const t = task(id, "image");
  return { ...t, request: { ...(t.request as object), n } } as unknown as PlannedTask;
};
const imageView = (taskId: string, id: string, at: number, images: number) => ({
  ...view(taskId, id, "succeeded", at),
  outputs: Array.from({ length: images }, (_, index): RemoteOutput => ({ type: "image", index, variant: "main", url: `http://127.0.0.1/${taskId}/${index}.png` })),
});
const asked = [{ id: "a", taskId: "t1", createdAt: 0, watermark: false }];

test("machine: a succeeded answer listing 1 of an n: 2 task's images records the charge but downloads nothing and asks again; the next full answer downloads", () => {
  const m = new Machine(makeTable());
  m.feed({ _tag: "Admit", now: 0, task: imageTask("a", 2), firstAttempt: 1, front: false, known: { state: "processing", task_id: "t1" } });
  const short = m.feed({ _tag: "Polled", now: 5, asked, views: [imageView("t1", "a", 4, 1)] });
  assert.equal(ofTag(short, "Record").map((r) => r.patch.state), ["succeeded"], "charged: recorded succeeded with its billing");
  assert.is(ofTag(short, "Download").length, 0);
  assert.match(ofTag(short, "Emit").map((e) => (e.event.type === "notice" ? e.event.message : "")).join("\n"), "listing 1 of the task's 2 result(s); asking again");
  const entry = m.table.entries.get("a")!;
  assert.is(entry.phase, "inflight");
  assert.is(entry.holding, 0, "a finished task holds no slot");
  assert.equal(ofTag(m.feed({ _tag: "Tick", now: 60_000 }), "Poll")[0]!.tasks.map((t) => t.taskId), ["t1"], "asked again");
  const full = m.feed({ _tag: "Polled", now: 60_001, asked, views: [imageView("t1", "a", 4, 2)] });
  assert.is(ofTag(full, "Download").length, 1);
});

test("machine: short answers past the bound download what is listed and record the rest lost with why (never 'downloaded' without it)", () => {
  const policy = makePolicy(1);
  const m = new Machine(makeTable({}, policy));
  m.feed({ _tag: "Admit", now: 0, task: imageTask("a", 2), firstAttempt: 1, front: false, known: { state: "processing", task_id: "t1" } });
  let downloads = 0;
  for (let i = 0; i < policy.shortAnswers; i++) downloads += ofTag(m.feed({ _tag: "Polled", now: 5 + i, asked, views: [imageView("t1", "a", 4, 1)] }), "Download").length;
  assert.is(downloads, 1, `given up after ${policy.shortAnswers} short answers`);
  const got: LockOutput = { type: "image", index: 0, variant: "main", path: "a/image-1.png", size: 3, sha256: "a".repeat(64) };
  const fetched = m.feed({ _tag: "Fetched", now: 100, id: "a", outputs: [got], urls: [] });
  const rec = ofTag(fetched, "Record")[0]!.patch;
  assert.is(rec.state, "downloaded");
  assert.equal(rec.outputs, [got, { type: "image", index: 1, variant: "main", deleted_at: 100 }]);
  assert.match(rec.error!.message, "1 result(s) lost: the service lists 1 of the task's 2 results, in 5 answers");
});

test("machine: a task whose succeeded answer lists nothing more than 30 days after it ended is given up at once, its result recorded lost", () => {
  const m = new Machine(makeTable());
  m.feed({ _tag: "Admit", now: 0, task: task("a"), firstAttempt: 1, front: false, known: { state: "processing", task_id: "t1" } });
  const polled = m.feed({ _tag: "Polled", now: 31 * DAY, asked, views: [{ ...view("t1", "a", "succeeded", 1000), outputs: [] }] });
  assert.is(ofTag(polled, "Download").length, 1);
  const fetched = m.feed({ _tag: "Fetched", now: 31 * DAY + 1, id: "a", outputs: [], urls: [] });
  const rec = ofTag(fetched, "Record")[0]!.patch;
  assert.equal(rec.outputs, [{ type: "video", index: 0, variant: "main", deleted_at: 31 * DAY + 1 }]);
  assert.match(rec.error!.message, "more than 30 days after it ended");
});

test.run();
