// Decisions made at the same time are all kept: the page's server takes them one at a
// time, and every writer of the review file (the server, `review --approve/--reject` in a
// terminal, another page) re-reads and writes it under one lock (src/review/
// reviewFileLock.ts, the run lock's mechanism), so none writes over a decision made
// meanwhile. The built CLI on the demo with `review: true` and two images per keyframe
// task (10 outputs), run with --emulate.

import { hostname } from "node:os";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { readReviewFile } from "../../src/review/readReviewFile.js";
import { withDecisions } from "../../src/review/reviewDecision.js";
import { withReviewFileLock } from "../../src/review/reviewFileLock.js";
import { writeReviewFile } from "../../src/review/writeReviewFile.js";
import { runLockPathOf } from "../../src/state/RunLock.js";
import { readLockFile } from "../../src/state/readLockFile.js";
import { cli, removeDir, reviewedDemo, startReviewPage, type ReviewPage } from "./reviewFlow.js";

const M = "manifests/demo.yaml";

interface Output {
  readonly task: string;
  readonly output: number;
  readonly sha256: string;
  readonly sku: string;
}

const t = suite<{ dir: string; reviewFile: string; outputs: Output[]; page?: ReviewPage }>("review decisions made at the same time", {} as never);

t.before(async (ctx) => {
  ctx.dir = reviewedDemo();
  const path = join(ctx.dir, M);
  const text = readFileSync(path, "utf8");
  const two = text.replace("    review: true\n", () => "    review: true\n    n: 2\n");
  if (two === text) throw new Error("the demo manifest changed shape: cannot ask for two images");
  writeFileSync(path, two);
  const run = await cli(ctx.dir, ["run", M, "--emulate", "--yes"]);
  assert.is(run.exitCode, 3, run.all);
  const lock = (await readLockFile(join(ctx.dir, "manifests", "demo.emulate.lock.json")))!;
  ctx.outputs = Object.entries(lock.tasks)
    .filter(([, x]) => x.job === "keyframes")
    .flatMap(([task, x]) => x.outputs.map((o) => ({ task, output: o.index, sha256: o.sha256!, sku: (x.vars.product as { sku: string }).sku })));
  assert.is(ctx.outputs.length, 10);
  ctx.reviewFile = join(ctx.dir, "manifests", "demo.emulate.review.yaml");
});
t.after((ctx) => {
  ctx.page?.kill();
  removeDir(ctx.dir);
});

const decisions = (reviewFile: string): Map<string, string> =>
  new Map(readReviewFile(reviewFile).outputs.map((e) => [`${e.task}#${e.output}`, e.decision]));

const post = async (page: ReviewPage, decision: "approved" | "rejected", targets: readonly { task: string; output: number }[]) => {
  const r = await fetch(`${page.url}api/decide`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ decision, targets }) });
  return r.status;
};

t("ten decisions posted at once to the page are ten decisions in the review file", async (ctx) => {
  ctx.page = await startReviewPage(ctx.dir, [M, "--emulate"]);
  const statuses = await Promise.all(ctx.outputs.map((o) => post(ctx.page!, "rejected", [{ task: o.task, output: o.output }])));
  assert.equal(statuses, Array(10).fill(200));
  const kept = decisions(ctx.reviewFile);
  assert.is(kept.size, 10, `kept: ${[...kept.keys()].join(", ")}`);
  for (const o of ctx.outputs) assert.is(kept.get(`${o.task}#${o.output}`), "rejected");
});

t("a writer holding the lock: the page and `review --reject` in a terminal wait, then keep its decision and theirs", async (ctx) => {
  // Nothing decided yet: the page approves one output, the other writer another, the terminal rejects C-3's two.
  await writeReviewFile(ctx.reviewFile, { version: 1, outputs: [] });
  const [byPage, byOther] = ctx.outputs.filter((o) => o.sku !== "C-3");
  const byCli = ctx.outputs.filter((o) => o.sku === "C-3");
  assert.is(byCli.length, 2);
  let cliDone: ReturnType<typeof cli> | undefined;
  let pageDone: Promise<number> | undefined;
  await withReviewFileLock(ctx.reviewFile, async () => {
    // Another writer's read, then (after the others tried to write) its write.
    const before = readReviewFile(ctx.reviewFile);
    pageDone = post(ctx.page!, "approved", [{ task: byPage!.task, output: byPage!.output }]);
    cliDone = cli(ctx.dir, ["review", M, "--emulate", "--reject", "keyframes product.sku=C-3"]);
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    const mine = { task: byOther!.task, output: byOther!.output, sha256: byOther!.sha256, decision: "approved" as const, at: new Date().toISOString(), job: "keyframes" };
    await writeReviewFile(ctx.reviewFile, withDecisions(before, [mine]));
  });
  assert.is(await pageDone!, 200);
  const done = await cliDone!;
  assert.is(done.exitCode, 0, done.all);
  const kept = decisions(ctx.reviewFile);
  assert.is(kept.get(`${byPage!.task}#${byPage!.output}`), "approved", "the page's decision");
  assert.is(kept.get(`${byOther!.task}#${byOther!.output}`), "approved", "the other writer's decision");
  for (const o of byCli) assert.is(kept.get(`${o.task}#${o.output}`), "rejected", "the terminal's decision");
  assert.is(kept.size, 4);
});

t("a lock left by a killed process (its pid gone) is taken over: the next decision is made at once", async (ctx) => {
  const lock = runLockPathOf(ctx.reviewFile);
  mkdirSync(lock);
  // A pid that is no process here: past the kernel's largest pid.
  writeFileSync(join(lock, "owner.json"), `${JSON.stringify({ pid: 2 ** 22 + 17, host: hostname(), started: Date.now(), token: "0123456789abcdef" })}\n`);
  const o = ctx.outputs[0]!;
  const done = await cli(ctx.dir, ["review", M, "--emulate", "--reject", `keyframes product.sku=${o.sku}`]);
  assert.is(done.exitCode, 0, done.all);
  assert.is(decisions(ctx.reviewFile).get(`${o.task}#${o.output}`), "rejected");
  const stopped = await ctx.page!.stop();
  assert.is(stopped.exitCode, 0, stopped.stderr);
});

t.run();
