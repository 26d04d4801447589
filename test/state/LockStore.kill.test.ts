// Kills a process writing through LockStore with SIGKILL at random moments and checks,
// after each kill, that the lockfile is valid and holds every change it had flushed;
// also while a version-1 lockfile is being rewritten as version 3, and while a large
// lockfile's full rewrite is streamed in chunks.

import { spawn } from "node:child_process";
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { LockTask } from "../../src/state/LockFile.js";
import { encodeLockFile } from "../../src/state/LockfileText.js";
import { readLockFile } from "../../src/state/readLockFile.js";
import { sameJson } from "../../src/state/sameJson.js";
import { stableJson } from "../../src/state/stableJson.js";
import { childScript } from "../childScript.js";
import { task, taskId } from "./lockTask.js";

// Plain Node runs the writers (test/childScript.ts): 22 starts under tsx cost about 40 s of CPU.
const writer = await childScript(new URL("./lockWriter.ts", import.meta.url));
const rewriter = await childScript(new URL("./lockRewriter.ts", import.meta.url));
const root = fileURLToPath(new URL("../..", import.meta.url));
const TASKS_PER_STEP = 10;
const writerTaskId = (round: number, step: number, i: number) => `r${round}-s${step}-t${i}`;

/** Runs the writer, kills it `afterMs` after it is ready; resolves with the last step it reported flushed. */
const runAndKill = (path: string, round: number, afterMs: number): Promise<number> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...writer, path, String(round)], {
      cwd: root,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    let lastFlushed = -1;
    const guard = setTimeout(() => child.kill("SIGKILL"), 20_000);
    child.stdout.setEncoding("utf8");
    child.stderr.setEncoding("utf8").on("data", (d: string) => (err += d));
    child.stdout.on("data", (d: string) => {
      out += d;
      for (const m of out.matchAll(/flushed (\d+)\n/g)) lastFlushed = Math.max(lastFlushed, Number(m[1]));
      // Odd rounds count from the first flush, so those kills land among appends and full
      // writes even on a slow machine; even rounds from "ready" (startup and journal fold).
      const started = round % 2 === 1 ? out.includes("flushed 0\n") : out.startsWith("ready\n");
      if (started && !(child as { timer?: unknown }).timer) {
        (child as { timer?: unknown }).timer = setTimeout(() => child.kill("SIGKILL"), afterMs);
      }
    });
    child.on("exit", (code, signal) => {
      clearTimeout(guard);
      if (signal !== "SIGKILL") reject(new Error(`writer ended by itself (${code}): ${err}`));
      else resolve(lastFlushed);
    });
  });

test("after each of 10 SIGKILLs mid-write the lockfile is valid and holds every flushed change", async () => {
  const dir = await mkdtemp(join(tmpdir(), "omnibatch-kill-"));
  try {
    const path = join(dir, "m.lock.json");
    const flushedByRound: number[] = [];
    // Deterministic pseudo-random kill moments spread over 5..255 ms of writing.
    let seed = 42;
    const next = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed / 2 ** 31);
    for (let round = 0; round < 10; round++) {
      const afterMs = 5 + Math.floor(next() * 250);
      flushedByRound.push(await runAndKill(path, round, afterMs));
      const file = await readLockFile(path); // rejects if the file is not valid
      // A kill before the first flush ended may leave no file yet (round 0 counts from
      // "ready"); once any round reported a flush, the file must be there.
      if (flushedByRound.some((n) => n >= 0)) assert.ok(file, `round ${round}: a lockfile exists`);
      for (let r = 0; r <= round; r++) {
        const last = flushedByRound[r]!;
        for (let step = 0; step <= last; step++) {
          for (let i = 0; i < TASKS_PER_STEP; i++) {
            const t = file!.tasks[writerTaskId(r, step, i)];
            assert.ok(t, `round ${round}: flushed task ${writerTaskId(r, step, i)} is present`);
            if (step < last) assert.is(t!.state, "submitted", `round ${round}: flushed update of ${writerTaskId(r, step, i)} is present`);
          }
        }
      }
    }
    const total = flushedByRound.reduce((a, b) => a + b + 1, 0);
    console.log(`  kill -9 rounds: flushed steps per round ${flushedByRound.join(", ")} (${total * TASKS_PER_STEP} tasks verified)`);
    assert.ok(flushedByRound.filter((n) => n >= 0).length >= 5, "at least the odd rounds flushed before the kill");
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test("killed at random moments while a large version-1 lockfile is rewritten as version 3, the lockfile keeps every old task and every flushed change", async () => {
  const dir = await mkdtemp(join(tmpdir(), "omnibatch-kill-v1-"));
  try {
    const path = join(dir, "m.lock.json");
    // 20,000 tasks in the version-1 format (pretty, key-sorted document): about 15 MB, so
    // the full rewrite the first flush makes takes long enough for kills to land in it.
    const old: Record<string, LockTask> = {};
    for (let n = 0; n < 20_000; n++) old[taskId(n)] = task(n, { state: "downloaded", task_id: `svc-${n}` });
    const v1 = stableJson({ lockfile_version: 1, name: "killed", tasks: old });
    let seed = 7;
    const next = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed / 2 ** 31);
    const versions = new Set<string>();
    for (let round = 0; round < 6; round++) {
      await writeFile(path, v1);
      await rm(`${path}.journal`, { force: true });
      // Even rounds: the kill timer starts at "ready", so it lands in the first (converting) flush.
      // Half the kills early (in the conversion), half later (among the appends after it).
      const last = await runAndKill(path, round * 2, Math.floor(round < 3 ? next() * 400 : 500 + next() * 2500));
      const file = await readLockFile(path);
      assert.ok(file, `round ${round}: a lockfile exists`);
      versions.add((await readFile(path, "utf8")).startsWith('{"lockfile_version":3') ? "v3" : "v1");
      for (const [id, t] of Object.entries(old)) {
        if (!sameJson(file!.tasks[id], t)) assert.equal(file!.tasks[id], t, `round ${round}: old task ${id} kept`);
      }
      for (let step = 0; step <= last; step++) {
        for (let i = 0; i < TASKS_PER_STEP; i++) assert.ok(file!.tasks[writerTaskId(round * 2, step, i)], `round ${round}: flushed step ${step} present`);
      }
    }
    console.log(`  v1 -> v3 kill rounds: file found as ${[...versions].join(" and ")} after the kills`);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

/** Runs the rewriter, kills it `afterMs` after "ready"; resolves with the last step it reported compacted. */
const rewriteAndKill = (path: string, afterMs: number): Promise<number> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...rewriter, path], { cwd: root, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    let timer: NodeJS.Timeout | undefined;
    const guard = setTimeout(() => child.kill("SIGKILL"), 30_000);
    child.stdout.setEncoding("utf8").on("data", (d: string) => {
      out += d;
      if (!timer && out.startsWith("ready\n")) timer = setTimeout(() => child.kill("SIGKILL"), afterMs);
    });
    child.stderr.setEncoding("utf8").on("data", (d: string) => (err += d));
    child.on("exit", (code, signal) => {
      clearTimeout(guard);
      if (timer) clearTimeout(timer);
      if (signal !== "SIGKILL") return reject(new Error(`rewriter ended by itself (${code}): ${err}`));
      let last = -1;
      for (const m of out.matchAll(/compacted (\d+)\n/g)) last = Math.max(last, Number(m[1]));
      resolve(last);
    });
  });

test("killed at random moments while a large lockfile's full rewrite is streamed in chunks, the lockfile is one whole rewrite: every task, all from the same one, the last reported or the next", async () => {
  const dir = await mkdtemp(join(tmpdir(), "omnibatch-kill-stream-"));
  try {
    const path = join(dir, "m.lock.json");
    // 20,000 tasks, about 4 MB: each rewrite is about 250 chunks of 16 KB.
    const tasks = new Map<string, LockTask>();
    for (let n = 0; n < 20_000; n++) tasks.set(taskId(n), task(n, { state: "downloaded", task_id: `svc-${n}` }));
    await writeFile(path, encodeLockFile("killed", tasks));
    let seed = 99;
    const next = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed / 2 ** 31);
    let prevTake = 0;
    let midWrite = 0;
    const seen: string[] = [];
    for (let round = 0; round < 6; round++) {
      const last = await rewriteAndKill(path, 100 + Math.floor(next() * 1500));
      // A temp file left beside the lockfile: the kill landed inside a streamed rewrite.
      if ((await readdir(dir)).some((f) => f.endsWith(".tmp"))) midWrite++;
      const file = await readLockFile(path); // rejects if the file is not valid
      const takes = new Set(Object.values(file!.tasks).map((t) => t.take));
      assert.is(Object.keys(file!.tasks).length, tasks.size, `round ${round}: every task`);
      assert.is(takes.size, 1, `round ${round}: every task from the same rewrite (takes ${[...takes].join(", ")})`);
      const take = [...takes][0]!;
      // The rewrite reported last, or the one after it (written, killed before it said so);
      // step s of this round wrote the take found before it + s + 1.
      assert.ok(take === prevTake + last + 1 || take === prevTake + last + 2, `round ${round}: take ${take} after compacted ${last} over take ${prevTake}`);
      prevTake = take;
      seen.push(`${last}:${take}`);
      for (const [id, t] of tasks) assert.is(file!.tasks[id]!.task_id, t.task_id, `round ${round}: ${id} kept`);
    }
    console.log(`  streamed rewrite kill rounds (last reported:found): ${seen.join(", ")}; ${midWrite} of 6 kills inside a rewrite`);
    assert.ok(midWrite >= 1, "at least one kill landed inside a streamed rewrite");
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test.run();
