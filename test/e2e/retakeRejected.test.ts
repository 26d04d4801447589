// New takes after a rejection (`review: { retake_rejected: 1 }`, issue 31), through the
// built CLI on `--emulate` as a user runs it, counting creates at the emulated service (its
// saved state, M.emulate.state.json, holds every task created there, by external id): a
// rejected still gets one new take, planned with its estimate and reason and created once
// (a rerun creates nothing more); approved, its clip is made, never the rejected still's; a
// second rejection makes no third take, and the plan says why.

import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { execa } from "execa";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { readLockFile } from "../../src/state/readLockFile.js";
import { bin } from "./runFixture.js";
import { reviewedDemoCopy } from "../checkoutFiles.js";

const t = suite("review: { retake_rejected: 1 }");

const M = "manifests/demo.yaml";
const cli = (dir: string, args: readonly string[]) =>
  execa("node", [bin, ...args], { cwd: dir, reject: false, all: true, extendEnv: false, env: { PATH: process.env["PATH"] ?? "" }, timeout: 120_000 });

const summaryOf = (stdout: string) => JSON.parse(stdout.trim().split("\n").at(-1)!) as { exitCode: number; outcome: string; created: number };

/** Creates at the emulated service, per external id (its kept state: every task it was asked to create). */
const createsAt = (dir: string): Map<string, number> => {
  const state = JSON.parse(readFileSync(join(dir, "manifests/demo.emulate.state.json"), "utf8")) as { tasks: { external_id: string }[] };
  const out = new Map<string, number>();
  for (const task of state.tasks) out.set(task.external_id, (out.get(task.external_id) ?? 0) + 1);
  return out;
};

const lockOf = async (dir: string) => (await readLockFile(join(dir, "manifests/demo.emulate.lock.json")))!;

const run = async (dir: string, exitCode: number) => {
  const r = await cli(dir, ["run", M, "--emulate", "--json"]);
  assert.is(r.exitCode, exitCode, r.all);
  return summaryOf(r.stdout);
};

const review = async (dir: string, flag: "--approve" | "--reject", filter: string, count: number) => {
  const r = await cli(dir, ["review", M, "--emulate", flag, filter]);
  assert.is(r.exitCode, 0, r.all);
  assert.match(r.stdout, `${flag === "--approve" ? "approved" : "rejected"} ${count} output(s)`);
};

/**
 * The demo with `retake_rejected: 1` run once (5 stills), every still approved but A-1
 * studio's, which is rejected; then the plan and the run that make its new take. Returns
 * the folder and the new take's id.
 */
const upToTheNewTake = async () => {
  const ws = reviewedDemoCopy("retake-rejected-");
  const file = join(ws.dir, M);
  writeFileSync(file, readFileSync(file, "utf8").replace("    review: true\n", "    review: { retake_rejected: 1 }\n"));
  assert.is((await run(ws.dir, 3)).created, 5);
  await review(ws.dir, "--approve", "keyframes product.sku=A-1 style=street", 1);
  await review(ws.dir, "--approve", "keyframes product.sku=B-2", 2);
  await review(ws.dir, "--approve", "keyframes product.sku=C-3", 1);
  await review(ws.dir, "--reject", "keyframes product.sku=A-1 style=studio", 1);

  const before = await lockOf(ws.dir);
  const rejected = Object.entries(before.tasks).find(([, x]) => x.job === "keyframes" && x.dir === "keyframes/A-1_studio")![0];
  const plan = await cli(ws.dir, ["plan", M, "--emulate", "--json"]);
  assert.is(plan.exitCode, 0, plan.all);
  const entries = (JSON.parse(plan.stdout) as { entries: { mark: string; id: string; job: string; note?: string; estimate?: { amount: string }; files?: string[] }[] }).entries;
  const newTake = entries.filter((e) => e.job === "keyframes" && e.mark === "+");
  assert.is(newTake.length, 1, "one new take");
  assert.is(newTake[0]!.note, "new take: take 1 rejected in review (1 of retake_rejected: 1)");
  assert.equal(newTake[0]!.estimate, { currency: "USD", amount: "0.02" }, "estimated like any still");
  assert.equal(newTake[0]!.files, ["keyframes/A-1_studio-take-2/image-1.png"]);
  const id = newTake[0]!.id;
  assert.ok(!before.tasks[id], "not created yet");
  const text = await cli(ws.dir, ["plan", M, "--emulate"]);
  assert.match(text.stdout, `+ ${id}  keyframes/A-1_studio-take-2/image-1.png  (new take: take 1 rejected in review (1 of retake_rejected: 1); ~0.02 USD)`);

  // The run creates it (and the four approved stills' clips); it awaits review in turn.
  const second = await run(ws.dir, 3);
  assert.is(second.created, 5, "the new take and four clips");
  const creates = createsAt(ws.dir);
  assert.is(creates.get(id), 1, "the new take created once");
  assert.is([...creates.values()].reduce((a, b) => a + b, 0), 10);
  const lock = await lockOf(ws.dir);
  assert.is(lock.tasks[id]?.state, "downloaded");
  assert.is(lock.tasks[id]?.take, 2);
  assert.ok(!Object.values(lock.tasks).some((x) => x.job === "clips" && x.upstream?.task === rejected), "no clip of the rejected still");

  // A rerun creates nothing more: the new take's id is stable, found in the lockfile.
  assert.is((await run(ws.dir, 3)).created, 0);
  assert.is(createsAt(ws.dir).get(id), 1);
  return { ws, id, rejected };
};

t("a rejected still gets one new take, created once; approved, its clip is made, and the rejected still's is not", async () => {
  const { ws, id, rejected } = await upToTheNewTake();
  try {
    // take=2 tells the new take from the rejected one (same matrix values).
    await review(ws.dir, "--approve", "keyframes product.sku=A-1 style=studio take=2", 1);
    const third = await run(ws.dir, 0);
    assert.is(third.outcome, "done");
    assert.is(third.created, 1, "the new take's clip");
    const lock = await lockOf(ws.dir);
    const clips = Object.values(lock.tasks).filter((x) => x.job === "clips");
    assert.is(clips.length, 5);
    assert.is(clips.filter((x) => x.upstream?.task === id).length, 1);
    assert.is(clips.filter((x) => x.upstream?.task === rejected).length, 0);
    assert.ok(clips.every((x) => x.state === "downloaded"));
    assert.is((await run(ws.dir, 0)).created, 0, "then nothing more");
    const creates = createsAt(ws.dir);
    assert.is([...creates.values()].reduce((a, b) => a + b, 0), 11, "5 stills, 1 new take, 5 clips");
    assert.ok([...creates.values()].every((n) => n === 1), "each request created once");
  } finally {
    ws.remove();
  }
});

t("a second rejection makes no third take, and the plan says why", async () => {
  const { ws, id, rejected } = await upToTheNewTake();
  try {
    await review(ws.dir, "--reject", "keyframes product.sku=A-1 style=studio take=2", 1);
    const plan = await cli(ws.dir, ["plan", M, "--emulate"]);
    assert.is(plan.exitCode, 0, plan.all);
    assert.match(plan.stdout, `= ${id}  keyframes/A-1_studio-take-2  (downloaded; take 2 rejected in review: no new take (retake_rejected: 1 per combination, made or planned already))`);
    assert.match(plan.stdout, "a run would create nothing");
    const fourth = await run(ws.dir, 0);
    assert.is(fourth.created, 0, "no third take, no clip of either rejected still");
    const lock = await lockOf(ws.dir);
    assert.is(Object.values(lock.tasks).filter((x) => x.job === "keyframes").length, 6);
    assert.ok(!Object.values(lock.tasks).some((x) => x.job === "clips" && (x.upstream?.task === id || x.upstream?.task === rejected)));
    assert.is([...createsAt(ws.dir).values()].reduce((a, b) => a + b, 0), 10, "5 stills, 1 new take, 4 clips");
  } finally {
    ws.remove();
  }
});

t.run();
