// The parts around the result-state rule: the scan of a lockfile against a real outputs
// folder (present / restorable / lost, superseded attempts left out), names by job and
// matrix values, the CI warning without a store, the lost section of billing.md, the
// --recreate-lost preview, and the rule for a downloaded task's next attempt.

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { Readable } from "node:stream";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { countResults, lostResults, resultName, scanResults } from "../../src/outputs/scanResults.js";
import { runnerOnlyWarning } from "../../src/outputs/runnerOnlyWarning.js";
import { folderSink } from "../../src/outputs/FolderSink.js";
import { SERVICE_RETENTION_MS } from "../../src/outputs/resultState.js";
import { lostMarkdown } from "../../src/report/lostMarkdown.js";
import { recreateQuestion } from "../../src/cli/confirmSpend.js";
import { recreatePlan } from "../../src/run/recreatePlan.js";
import { nextAfterDownloaded } from "../../src/engine/taskRules.js";
import type { LockTask } from "../../src/state/LockFile.js";

const t = suite("scan results");
const DAY = 86_400_000;
const made = 1_790_000_000_000;
const task = (job: string, vars: Record<string, unknown>, dir: string, extra: Partial<LockTask> = {}, size = 3): LockTask => ({
  job,
  kind: "image",
  vars,
  dir,
  request_hash: "h",
  take: 1,
  attempt: 1,
  state: "downloaded",
  created_at: made,
  finished_at: made,
  updated_at: made,
  outputs: [{ type: "image", index: 0, variant: "main", path: `${dir}/image-1.png`, size, sha256: "a".repeat(64) }],
  billing: [],
  ...extra,
});

t("a scan of a real folder: the file with its size is present, a missing one restorable, a deleted missing one lost; a later attempt supersedes an earlier one and its downstream", () => {
  const out = mkdtempSync(join(tmpdir(), "omnibatch-scan-"));
  try {
    mkdirSync(join(out, "stills", "apple"), { recursive: true });
    writeFileSync(join(out, "stills", "apple", "image-1.png"), "png");
    const deleted = (t: LockTask): LockTask => ({ ...t, outputs: t.outputs.map((o) => ({ ...o, deleted_at: made + 31 * DAY })) });
    const tasks: Record<string, LockTask> = {
      a: task("stills", { subject: "apple" }, "stills/apple"),
      b: task("stills", { subject: "boat" }, "stills/boat", { created_at: made + 20 * DAY, finished_at: made + 20 * DAY }),
      c: deleted(task("stills", { subject: "chair" }, "stills/chair")),
      // chair made again: attempt 2 in the same place supersedes attempt 1 (c) and the clip made from it (d).
      c2: task("stills", { subject: "chair" }, "stills/chair", { attempt: 2, created_at: made + 32 * DAY, finished_at: made + 32 * DAY }),
      d: deleted(task("clips", { item: { index: 0, vars: { subject: "chair" } } }, "clips/chair-1", { upstream: { job: "stills", task: "c", output: 0 } })),
      e: deleted(task("clips", { item: { index: 0, vars: { subject: "boat" } } }, "clips/boat-1", { upstream: { job: "stills", task: "b", output: 0 } })),
      meta: { ...task("voices", {}, "voices"), outputs: [{ type: "voice", index: 0, variant: "meta", meta: { id: "v" } }] },
    };
    const scanned = scanResults(tasks, out, made + 33 * DAY);
    assert.equal(
      scanned.map((r) => [r.id, r.verdict.state]),
      [["a", "present"], ["b", "restorable"], ["c2", "restorable"], ["e", "lost"]],
    );
    assert.equal(countResults(scanned), { present: 1, restorable: 2, lost: 1 });
    assert.equal(lostResults(scanned), [{ task: "e", job: "clips", vars: tasks.e!.vars, path: "clips/boat-1/image-1.png", why: "deleted", at: made + 31 * DAY }]);
    assert.is(resultName(scanned.at(-1)!), "clips output=1 subject=boat (clips/boat-1/image-1.png)");
    // A file of another size is not the result.
    writeFileSync(join(out, "stills", "apple", "image-1.png"), "png!");
    assert.is(scanResults({ a: tasks.a! }, out, made)[0]!.verdict.state, "restorable");
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
});

t("a scan against a store's listing: an object with the recorded size and ETag is present; a missing or different one (other size, or same size and another ETag) is restorable within the service's 30 days, lost after", () => {
  const withEtag = (t: LockTask, etag: string): LockTask => ({ ...t, outputs: t.outputs.map((o) => ({ ...o, etag })) });
  const tasks: Record<string, LockTask> = {
    a: withEtag(task("stills", { subject: "apple" }, "stills/apple"), "0cc175b9"),
    b: withEtag(task("stills", { subject: "boat" }, "stills/boat"), "92eb5ffe"),
    c: withEtag(task("stills", { subject: "chair" }, "stills/chair"), "4a8a08f0"),
    d: withEtag(task("stills", { subject: "desk" }, "stills/desk"), "8277e091"),
    // Written before the fingerprint was recorded: compared by size.
    e: task("stills", { subject: "easel" }, "stills/easel"),
  };
  const listing = new Map([
    ["stills/apple/image-1.png", { size: 3, etag: "0cc175b9c0f1b6a831c399e269772661" }],
    ["stills/boat/image-1.png", { size: 3, etag: "ffffffffc0f1b6a831c399e269772661" }],
    ["stills/chair/image-1.png", { size: 4, etag: "4a8a08f09d37b73795649038408b5f33" }],
    ["stills/easel/image-1.png", { size: 3, etag: "e1671797c52e15f763380b45e841ec32" }],
    ["stills/other/image-1.png", { size: 3, etag: "0cc175b9c0f1b6a831c399e269772661" }],
  ]);
  const within = scanResults(tasks, listing, made + 10 * DAY);
  assert.equal(
    within.map((r) => [r.id, r.verdict.state]),
    [["a", "present"], ["b", "restorable"], ["c", "restorable"], ["d", "restorable"], ["e", "present"]],
  );
  const after = scanResults(tasks, listing, made + 31 * DAY);
  assert.equal(
    after.map((r) => [r.id, r.verdict.state]),
    [["a", "present"], ["b", "lost"], ["c", "lost"], ["d", "lost"], ["e", "present"]],
  );
  assert.equal(lostResults(after).map((l) => [l.job, l.vars.subject, l.path]), [
    ["stills", "boat", "stills/boat/image-1.png"],
    ["stills", "chair", "stills/chair/image-1.png"],
    ["stills", "desk", "stills/desk/image-1.png"],
  ]);
});

t("what a run saw spares the reports a stat: a file the sink found with its size or wrote counts as present without a second look; one it found missing, of another size, or never looked at is looked at", async () => {
  const out = mkdtempSync(join(tmpdir(), "omnibatch-scan-"));
  try {
    for (const s of ["apple", "boat", "chair"]) mkdirSync(join(out, "stills", s), { recursive: true });
    writeFileSync(join(out, "stills", "apple", "image-1.png"), "png");
    writeFileSync(join(out, "stills", "boat", "image-1.png"), "png!"); // another size than recorded
    const tasks: Record<string, LockTask> = {
      a: task("stills", { subject: "apple" }, "stills/apple"),
      b: task("stills", { subject: "boat" }, "stills/boat"),
      c: task("stills", { subject: "chair" }, "stills/chair"),
      d: task("stills", { subject: "desk" }, "stills/desk"),
    };
    const sink = folderSink(out);
    // The run's start check looks at a, b and c (not d: say, a task the manifest no longer makes).
    assert.is(sink.holds(tasks.a!.outputs), true);
    assert.is(sink.holds(tasks.b!.outputs), false);
    assert.is(sink.holds(tasks.c!.outputs), false);
    assert.is(sink.seen!("stills/apple/image-1.png", 3), true);
    assert.is(sink.seen!("stills/apple/image-1.png", 4), false, "the size must be the recorded one");
    assert.is(sink.seen!("stills/boat/image-1.png", 3), false);
    assert.is(sink.seen!("stills/chair/image-1.png", 3), false);
    // A file the sink writes is seen with the size it wrote.
    const written = await sink.write("stills/eel/image-1.png", { body: Readable.from([Buffer.from("png!!")]), type: "image", cap: 100 }, new AbortController().signal);
    assert.is(written.size, 5);
    assert.is(sink.seen!("stills/eel/image-1.png", 5), true);
    // d's file appears after the start check; c's is still missing.
    mkdirSync(join(out, "stills", "desk"), { recursive: true });
    writeFileSync(join(out, "stills", "desk", "image-1.png"), "png");
    const states = () => scanResults(tasks, out, made + DAY, undefined, sink.seen).map((r) => [r.id, r.verdict.state]);
    assert.equal(states(), [["a", "present"], ["b", "restorable"], ["c", "restorable"], ["d", "present"]]);
    // The trade (docs/benchmarks-log.md, "Throughput and resume, 2026-11-24 01:10 to 02:05 UTC"): a file removed after the run saw it is not looked at again by
    // this run's reports; the next run's start check stats every recorded file and fetches it again.
    rmSync(join(out, "stills", "apple", "image-1.png"));
    assert.equal(states()[0], ["a", "present"]);
    assert.equal(scanResults(tasks, out, made + DAY)[0]!.verdict.state, "restorable", "without the run's record, the scan looks");
    assert.is(sink.holds(tasks.a!.outputs), false, "the next look notices the missing file");
    assert.is(sink.seen!("stills/apple/image-1.png", 3), false, "and forgets it was seen");
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
});

t("the CI warning: only in CI, only without a store, only when results were absent at start; it names the earliest deletion date", () => {
  const out = mkdtempSync(join(tmpdir(), "omnibatch-scan-"));
  try {
    const scanned = scanResults({ a: task("stills", { subject: "apple" }, "stills/apple"), b: task("stills", { subject: "boat" }, "stills/boat", { created_at: made - DAY }) }, out, made + DAY);
    assert.is(runnerOnlyWarning(scanned, { ci: false, store: false }), undefined);
    assert.is(runnerOnlyWarning(scanned, { ci: true, store: true }), undefined);
    assert.is(runnerOnlyWarning([], { ci: true, store: false }), undefined);
    const text = runnerOnlyWarning(scanned, { ci: true, store: false })!;
    assert.match(text, "results live only on this runner: the outputs folder started without 2 of the 2 result(s)");
    assert.match(text, "Configure a store");
    assert.match(text, `the first on ${new Date(made - DAY + SERVICE_RETENTION_MS).toISOString().slice(0, 10)}`);
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
});

t("billing.md's lost section names each lost result; nothing when none; names cannot break the table", () => {
  assert.is(lostMarkdown([]), "");
  const md = lostMarkdown([{ task: "t", job: "stills", vars: { subject: "a|b\nc" }, path: "stills/a/image-1.png", why: "deleted", at: made }]);
  assert.match(md, "### Lost results: 1");
  assert.match(md, "| stills subject=a\\|b c (stills/a/image-1.png) | deleted at the service 2026-09-21 |");
});

t("the --recreate-lost preview lists the tasks and the estimate, and asks only when told to", () => {
  const plan = { tasks: [{ id: "x", name: "stills subject=apple", results: 1, estimate: { currency: "USD", amount: "0.02" } }], estimate: { USD: "0.02" }, unpriced: 0, downstream: 1 };
  const shown = recreateQuestion(plan, false)!;
  assert.match(shown, "--recreate-lost: 1 lost result(s) of 1 task(s) are made again, as new attempts with new ids, and 1 lost downstream task(s) from their new results:");
  assert.match(shown, "  stills subject=apple  ~0.02 USD");
  assert.match(shown, "Estimated cost: 0.02 USD");
  assert.not.match(shown, "[y/N]");
  assert.ok(recreateQuestion(plan, true)!.endsWith("Pay to make them again? [y/N] "));
  assert.is(recreateQuestion({ tasks: [], estimate: {}, unpriced: 0, downstream: 0 }, true), undefined);
});

t("the --recreate-lost preview with a store: results past the service's 30 days whose objects are in the store are not lost; a missing or replaced one is", () => {
  const tasks: Record<string, LockTask> = {
    a: { ...task("stills", { subject: "apple" }, "stills/apple"), outputs: [{ ...task("stills", {}, "stills/apple").outputs[0]!, etag: "0cc175b9" }] },
    b: { ...task("stills", { subject: "boat" }, "stills/boat"), outputs: [{ ...task("stills", {}, "stills/boat").outputs[0]!, etag: "92eb5ffe" }] },
    c: task("stills", { subject: "chair" }, "stills/chair"),
  };
  const listing = new Map([
    ["stills/apple/image-1.png", { size: 3, etag: "0cc175b9c0f1b6a831c399e269772661" }],
    ["stills/boat/image-1.png", { size: 3, etag: "ffffffffc0f1b6a831c399e269772661" }],
  ]);
  const manifest = { tasks: [], outputsDir: "s3://results/x", downstreamEstimate: () => undefined };
  const lock = { lockfile_version: 2 as const, name: "m", tasks };
  assert.equal(recreatePlan(manifest, lock, made + 40 * DAY, listing).tasks.map((x) => x.id), ["b", "c"]);
  // Without the listing, nothing of a store is on this disk: every expired result would be called lost.
  assert.equal(recreatePlan(manifest, lock, made + 40 * DAY).tasks.map((x) => x.id), ["a", "b", "c"]);
});

t("a downloaded task: followed to its later attempt when one is recorded; made again only when asked and results are lost", () => {
  assert.is(nextAfterDownloaded(true, false, 0), "follow");
  assert.is(nextAfterDownloaded(false, false, 3), "stay", "paying again is never automatic");
  assert.is(nextAfterDownloaded(false, true, 0), "stay", "nothing lost: nothing made again");
  assert.is(nextAfterDownloaded(false, true, 1), "recreate");
});

t.run();
