// The review gate through the built CLI, on the demo with `review: true` on its image
// job: the awaiting-review states in run, plan and status and the exit code (3, "a
// person is needed"); `review --list/--approve/--reject` with filters into data rows;
// bad filters and a damaged review file (exit 2, file:line:col); a run after the review
// (against a standalone emulator that keeps its tasks) makes clips only from approved
// stills; a decision on other bytes (sha256) does not count.

import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { readLockFile } from "../../src/state/readLockFile.js";
import { readReviewFile } from "../../src/review/readReviewFile.js";
import { cli, removeDir, reviewedDemo, startEmulatorProcess } from "./reviewFlow.js";

const M = "manifests/demo.yaml";

test("emulated: the run waits for review (exit 3), plan/status show it, the flags decide by filter, errors are exit 2", async () => {
  const dir = reviewedDemo();
  try {
    const run = await cli(dir, ["run", M, "--emulate", "--yes"]);
    assert.is(run.exitCode, 3, run.all);
    assert.match(run.all!, /review: {4}keyframes: 5 awaiting review; clips: 5 waiting on review/);
    assert.match(run.all!, /exit 3: emulated run: done all it can; outputs await review: a person is needed/);
    const json = await cli(dir, ["run", M, "--emulate", "--yes", "--json"]);
    const summary = json.stdout.trim().split("\n").map((l) => JSON.parse(l)).find((e) => e.type === "summary");
    assert.is(summary.outcome, "review");
    assert.is(summary.jobs.keyframes.awaitingReview, 5);
    assert.is(summary.jobs.clips.waitingOnReview, 5);
    assert.is(summary.created, 0, "a second run creates nothing while everything awaits review");

    const plan = await cli(dir, ["plan", M, "--emulate"]);
    assert.is(plan.exitCode, 0, plan.all);
    assert.match(plan.all!, /… 5 task\(s\) of clips, waiting on review of keyframes/);
    assert.match(plan.all!, /review: keyframes: 5 awaiting review \(0 approved, 0 rejected\); clips: 5 waiting on review/);
    const status = await cli(dir, ["status", M, "--emulate"]);
    assert.match(status.all!, /review: keyframes: 5 awaiting review \(0 approved, 0 rejected\); clips: 5 waiting on review/);

    // --approve with a dotted path into the data row: both styles of sku A-1.
    const approve = await cli(dir, ["review", M, "--emulate", "--approve", "keyframes product.sku=A-1"]);
    assert.is(approve.exitCode, 0, approve.all);
    assert.match(approve.stdout, /^approved 2 output\(s\); 5 output\(s\): 2 approved, 0 rejected, 3 awaiting review/);
    const reject = await cli(dir, ["review", M, "--emulate", "--reject", "keyframes product.sku=B-2 style=street"]);
    assert.match(reject.stdout, /^rejected 1 output\(s\); 5 output\(s\): 2 approved, 1 rejected, 2 awaiting review/);
    const file = readReviewFile(join(dir, "manifests", "demo.emulate.review.yaml"));
    assert.equal(file.outputs.map((e) => [e.file, e.decision]).sort(), [
      ["keyframes/A-1_street/image-1.png", "approved"],
      ["keyframes/A-1_studio/image-1.png", "approved"],
      ["keyframes/B-2_street/image-1.png", "rejected"],
    ]);
    // The real review file is untouched by --emulate.
    assert.throws(() => readFileSync(join(dir, "manifests", "demo.review.yaml")));

    const list = await cli(dir, ["review", M, "--emulate", "--list", "keyframes style=street"]);
    assert.is(list.exitCode, 0, list.all);
    assert.equal(
      list.stdout.trim().split("\n").slice(0, -1).map((l) => l.split(/\s+/).slice(0, 3).join(" ")).sort(),
      ["approved keyframes keyframes/A-1_street/image-1.png", "rejected keyframes keyframes/B-2_street/image-1.png"],
    );
    const listJson = JSON.parse((await cli(dir, ["review", M, "--emulate", "--list", "--json"])).stdout);
    assert.equal(listJson.counts, { approved: 2, rejected: 1, awaiting: 2 });

    const plan2 = await cli(dir, ["plan", M, "--emulate", "--json"]);
    const p = JSON.parse(plan2.stdout);
    const plus = p.entries.filter((e: any) => e.job === "clips" && e.mark === "+");
    assert.equal(plus.map((e: any) => e.dir).sort(), ["clips/A-1_street-1", "clips/A-1_studio-1"]);
    assert.equal(p.review, { keyframes: { awaiting: 2, approved: 2, rejected: 1 }, clips: { waitingOnReview: 2 } });

    for (const [args, pattern] of [
      [["--approve", "clips"], /job 'clips' has no 'review: true'; jobs under review: keyframes/],
      [["--approve", "nosuch"], /no job 'nosuch' in manifests\/demo\.yaml/],
      [["--approve", "keyframes sku"], /after the job id, each word is key=value/],
      [["--reject", "keyframes product.sku=Z-9"], /no recorded output matches 'keyframes product\.sku=Z-9'/],
      [["--approve", "keyframes", "--reject", "keyframes"], /give one of --approve, --reject and --list/],
    ] as const) {
      const r = await cli(dir, ["review", M, "--emulate", ...args]);
      assert.is(r.exitCode, 2, `${args.join(" ")}: ${r.all}`);
      assert.match(r.stderr, pattern);
    }

    // A damaged review file stops plan and run before anything is sent: exit 2, with its place.
    const reviewPath = join(dir, "manifests", "demo.emulate.review.yaml");
    const good = readFileSync(reviewPath, "utf8");
    writeFileSync(reviewPath, good.replace("decision: rejected", "decision: rejekted"));
    const bad = await cli(dir, ["run", M, "--emulate", "--yes"]);
    assert.is(bad.exitCode, 2, bad.all);
    assert.match(bad.stderr, /demo\.emulate\.review\.yaml:\d+:15: error: outputs\[\d\]\.decision must be one of "approved", "rejected"/);
    writeFileSync(reviewPath, good);

    // A decision on other bytes does not count: change the sha256 an approval was made on.
    const approvedSha = readReviewFile(reviewPath).outputs.find((e) => e.file === "keyframes/A-1_studio/image-1.png")!.sha256;
    writeFileSync(reviewPath, good.replace(approvedSha, "f".repeat(64)));
    const listedRun = await cli(dir, ["review", M, "--emulate", "--list", "keyframes product.sku=A-1 style=studio", "--json"]);
    assert.is(listedRun.exitCode, 0, listedRun.all);
    const listed = JSON.parse(listedRun.stdout);
    assert.is(listed.outputs[0].state, "awaiting");
    const plan3 = JSON.parse((await cli(dir, ["plan", M, "--emulate", "--json"])).stdout);
    assert.equal(plan3.entries.filter((e: any) => e.job === "clips" && e.mark === "+").map((e: any) => e.dir), ["clips/A-1_street-1"]);
  } finally {
    removeDir(dir);
  }
});

test("a run after the review makes clips only from the approved stills, then ends done once nothing awaits", async () => {
  const dir = reviewedDemo();
  const emulator = await startEmulatorProcess();
  try {
    const first = await cli(dir, ["run", M, "--yes"], emulator.env);
    assert.is(first.exitCode, 3, first.all);
    assert.match(first.all!, /keyframes: 5 awaiting review; clips: 5 waiting on review/);
    assert.is((await cli(dir, ["review", M, "--approve", "keyframes product.sku=A-1"])).exitCode, 0);
    assert.is((await cli(dir, ["review", M, "--reject", "keyframes product.sku=B-2"])).exitCode, 0);
    const second = await cli(dir, ["run", M, "--yes"], emulator.env);
    assert.is(second.exitCode, 3, second.all);
    assert.match(second.all!, /keyframes: 1 awaiting review; clips: 1 waiting on review/);
    const lock = (await readLockFile(join(dir, "manifests", "demo.lock.json")))!;
    const clips = Object.values(lock.tasks).filter((t) => t.job === "clips");
    const stills = new Map(Object.entries(lock.tasks).filter(([, t]) => t.job === "keyframes").map(([id, t]) => [id, t.dir]));
    assert.equal(clips.map((c) => stills.get(c.upstream!.task)).sort(), ["keyframes/A-1_street", "keyframes/A-1_studio"]);
    assert.ok(clips.every((c) => c.state === "downloaded"), JSON.stringify(clips.map((c) => c.state)));
    // The last still: approved, the run makes its clip and ends done (exit 0).
    assert.is((await cli(dir, ["review", M, "--approve", "keyframes product.sku=C-3"])).exitCode, 0);
    const third = await cli(dir, ["run", M, "--yes"], emulator.env);
    assert.is(third.exitCode, 0, third.all);
    const after = (await readLockFile(join(dir, "manifests", "demo.lock.json")))!;
    assert.is(Object.values(after.tasks).filter((t) => t.job === "clips").length, 3);
  } finally {
    await emulator.stop();
    removeDir(dir);
  }
});

test("review must be true or false in the manifest (schema, described), at its place", async () => {
  const dir = reviewedDemo('"yes"');
  try {
    const r = await cli(dir, ["validate", M]);
    assert.is(r.exitCode, 2, r.all);
    assert.match(r.all!, /demo\.yaml:\d+:13: error: jobs\.keyframes\.review must be true or false/);
  } finally {
    removeDir(dir);
  }
});

test.run();
