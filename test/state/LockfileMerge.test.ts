// The lockfile in git: two branches that ran different tasks of the same manifest
// (neighbouring lines included, plus a new task on each side) merge with plain
// `git merge`, no conflict and no merge driver, and the merged file holds both sides'
// changes. A run's diff has one changed line per changed task.

import { execFileSync } from "node:child_process";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Effect } from "effect";
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { LockTask } from "../../src/state/LockFile.js";
import { LockStore } from "../../src/state/LockStore.js";
import { readLockFile } from "../../src/state/readLockFile.js";
import { task, taskId } from "./lockTask.js";

const NAME = "spring-campaign";
const git = (cwd: string, ...args: string[]): string =>
  execFileSync("git", ["-c", "user.email=test@example.invalid", "-c", "user.name=test", "-c", "commit.gpgsign=false", ...args], {
    cwd,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
  });

type Change = [string, (t: LockTask | undefined) => LockTask];

const write = (path: string, changes: readonly Change[]) =>
  Effect.runPromise(
    LockStore.use(path, NAME, (store) =>
      Effect.gen(function* () {
        for (const [id, f] of changes) yield* store.put(id, f(yield* store.get(id)));
      }),
    ),
  );

const ran = (side: string) => (t: LockTask | undefined): LockTask => ({
  ...t!,
  state: "downloaded",
  task_id: `svc-${side}-${t!.request_hash}`,
  updated_at: t!.updated_at + 1000,
  outputs: [{ type: t!.kind, index: 0, variant: "main", path: `${t!.dir}/0.png`, size: 10, sha256: "b".repeat(64) }],
});

test("two branches that changed different tasks (neighbours included) and each added one merge without conflict", async () => {
  const repo = await mkdtemp(join(tmpdir(), "omnibatch-merge-"));
  const path = join(repo, "m.lock.json");
  git(repo, "init", "-q");
  const base = Array.from({ length: 40 }, (_, n) => n);
  await write(path, base.map((n) => [taskId(n), () => task(n)]));
  git(repo, "add", "m.lock.json");
  git(repo, "commit", "-q", "-m", "base");
  const trunk = git(repo, "rev-parse", "--abbrev-ref", "HEAD").trim();

  // Ids in file order: the two sides take neighbouring runs of lines.
  const sorted = base.map((n) => ({ n, id: taskId(n) })).sort((a, b) => (a.id < b.id ? -1 : 1));
  const sideA = sorted.slice(5, 15);
  const sideB = sorted.slice(15, 25);
  git(repo, "checkout", "-q", "-b", "a");
  await write(path, [...sideA.map(({ id }): Change => [id, ran("a")]), [taskId(1000), () => task(1000)]]);
  const diffA = git(repo, "diff", "--numstat", "--", "m.lock.json").trim().split(/\s+/).map(Number);
  git(repo, "commit", "-q", "-am", "a");

  git(repo, "checkout", "-q", trunk);
  git(repo, "checkout", "-q", "-b", "b");
  await write(path, [...sideB.map(({ id }): Change => [id, ran("b")]), [taskId(2001), () => task(2001)]]);
  git(repo, "commit", "-q", "-am", "b");

  let merged = true;
  let output = "";
  try {
    output = git(repo, "merge", "-q", "--no-edit", "a");
  } catch (error) {
    merged = false;
    output = `${(error as { stdout?: string }).stdout ?? ""}${(error as { stderr?: string }).stderr ?? ""}`;
  }
  assert.ok(merged, `git merge reported: ${output}\n${git(repo, "diff")}`);

  const lock = await readLockFile(path);
  assert.ok(lock);
  assert.is(Object.keys(lock!.tasks).length, 42);
  for (const { id } of sideA) assert.ok(lock!.tasks[id]!.task_id?.startsWith("svc-a-"), `${id} has side a's run`);
  for (const { id } of sideB) assert.ok(lock!.tasks[id]!.task_id?.startsWith("svc-b-"), `${id} has side b's run`);
  for (const { id } of [...sorted.slice(0, 5), ...sorted.slice(25)]) assert.is(lock!.tasks[id]!.state, "planned");
  assert.ok(lock!.tasks[taskId(1000)] && lock!.tasks[taskId(2001)], "both new tasks are there");

  // Side a's diff: one line out and one in per changed task, a new task is its line and its blank separator.
  assert.equal(diffA.slice(0, 2), [sideA.length + 2, sideA.length], `numstat of side a: ${diffA.join(" ")}`);
});

test.run();
