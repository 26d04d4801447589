// A run's end reads the records it reports on from a frozen snapshot (LockStore
// frozenSnapshot: each held line decoded when read, none kept), no longer from a snapshot
// of every record decoded at once. The reports must not tell the difference: every file
// writeReports writes (the five reports, each task's task.json, each job's metadata.jsonl)
// is byte for byte the one written from the snapshot; and a real run's reports (supersessions
// recorded at its end included) are those writeReports makes from the lockfile read back.

import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { types } from "node:util";
import { dirname, join, relative, sep } from "node:path";
import { Effect } from "effect";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { loadManifest } from "../../src/manifest/loadManifest.js";
import { makePolicy } from "../../src/policy/Policy.js";
import { REPORT_FILES, writeReports } from "../../src/report/writeReports.js";
import { emulatedManifest } from "../../src/run/EmulatedRun.js";
import { runLoadedManifest } from "../../src/run/runLoadedManifest.js";
import type { LockTask } from "../../src/state/LockFile.js";
import { LockStore } from "../../src/state/LockStore.js";
import type { TaskRecords } from "../../src/state/TaskRecords.js";
import { readLockFile } from "../../src/state/readLockFile.js";
import { randomTask, rng } from "../state/randomTask.js";
import { fixtureLock, NOW } from "./fixtureLock.js";

/** Every file under `dir`, by path relative to it. */
const tree = (dir: string): Map<string, string> => {
  const out = new Map<string, string>();
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else out.set(relative(dir, p), readFileSync(p, "utf8"));
    }
  };
  walk(dir);
  return out;
};

test("writeReports writes the same bytes from a frozen snapshot as from a snapshot: reports, task.json and metadata.jsonl", async () => {
  const r = rng(29);
  const tasks = new Map<string, LockTask>(Object.entries(fixtureLock.tasks));
  for (let n = 0; n < 3_000; n++) {
    const { id, task } = randomTask(r, "spring", n);
    tasks.set(id, n % 5 === 0 ? { ...task, upstream: { job: "stills", task: [...tasks.keys()][n % tasks.size]!, output: n % 3 } } : task);
  }
  const { plain, frozen, lines } = await Effect.runPromise(
    Effect.gen(function* () {
      const store = yield* LockStore;
      for (const [id, t] of tasks) yield* store.put(id, t);
      yield* store.flush;
      const view = yield* store.view;
      return { plain: yield* store.snapshot, frozen: yield* store.frozenSnapshot, lines: (view as TaskRecords).linesHeld() };
    }).pipe(Effect.scoped, Effect.provide(LockStore.memory("spring", undefined, { frozenFrom: 0 }))),
  );
  assert.ok(lines > 200, `${lines} downloaded records, held as lines`);
  assert.ok(types.isProxy(frozen.tasks), "records decoded as read");
  const root = mkdtempSync(join(tmpdir(), "omnibatch-frozen-reports-"));
  try {
    const written: Map<string, string>[] = [];
    for (const [name, lock] of [
      ["plain", plain],
      ["frozen", frozen],
    ] as const) {
      const out = join(root, name);
      // The task folders exist (sidecars are written only into those), and some result files.
      for (const t of tasks.values()) mkdirSync(join(out, ...t.dir.split("/")), { recursive: true });
      for (const t of [...tasks.values()].slice(0, 200)) {
        for (const o of t.outputs) {
          if (!o.path) continue;
          const path = join(out, ...o.path.split("/"));
          mkdirSync(dirname(path), { recursive: true });
          writeFileSync(path, "x".repeat(Math.min(o.size ?? 1, 100)));
        }
      }
      const result = await writeReports({ lock, outputsDir: out, manifestName: "spring", now: NOW, env: {} });
      assert.is(result.written, true);
      written.push(tree(out));
    }
    const [a, b] = written as [Map<string, string>, Map<string, string>];
    const sidecars = [...a.keys()].filter((k) => k.endsWith("task.json")).length;
    assert.ok(sidecars > 20, `${sidecars} sidecars written`);
    assert.ok([...a.keys()].some((k) => k.endsWith("metadata.jsonl")));
    for (const name of REPORT_FILES) assert.ok(a.has(name), name);
    assert.equal([...b.keys()].sort(), [...a.keys()].sort());
    // A folder several tasks share gets the task.json of whichever of its writers came last (they write concurrently).
    const writers = new Map<string, number>();
    for (const t of tasks.values()) if (t.outputs.some((o) => o.path !== undefined)) writers.set(t.dir, (writers.get(t.dir) ?? 0) + 1);
    const shared = (path: string) => path.endsWith("task.json") && (writers.get(dirname(path).split(sep).join("/")) ?? 0) > 1;
    assert.ok([...a.keys()].filter((k) => k.endsWith("task.json") && !shared(k)).length > 20);
    for (const [path, text] of a) if (!shared(path)) assert.ok(b.get(path) === text, `${path} differs`);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

const manifest = (colours: string, prompt: string) => `version: 1
name: ends
outputs: out
jobs:
  pics:
    kind: image
    matrix: { c: [${colours}] }
    prompt: "${prompt}"
  clips:
    kind: video
    for_each: pics.outputs
    contents:
      - first_frame: "{{ item.url }}"
        id: start
    prompt: "@start turns slowly"
    settings: { duration: 5 }
`;

test("a run's reports, written at its end from the frozen records, are writeReports' from the lockfile read back (a run that supersedes tasks included)", async () => {
  const dir = mkdtempSync(join(tmpdir(), "omnibatch-frozen-run-"));
  try {
    const file = join(dir, "m.yaml");
    const policy = makePolicy(0.01);
    // New tasks; the same positions with another prompt (8 tasks superseded at the end);
    // one value added and one removed (its two tasks orphaned: no supersession, the standings from the end's plan).
    for (const [colours, prompt, superseded, orphaned] of [
      ["red, green, blue, teal", "a {{ c }} mug", 0, 0],
      ["red, green, blue, teal", "a {{ c }} cup", 8, 0],
      ["red, green, blue, plum", "a {{ c }} cup", 8, 2],
    ] as const) {
      writeFileSync(file, manifest(colours, prompt));
      const loaded = await loadManifest(file);
      // frozenFrom 0: the end reads the records decoded as read, however few.
      const summary = await runLoadedManifest(loaded, { emulate: true, policy, env: {}, lockStore: { frozenFrom: 0 } });
      assert.is(summary.exitCode, 0, `${summary.outcome}`);
      assert.is(summary.reports.length, REPORT_FILES.length);
      const m = emulatedManifest(loaded);
      const lock = (await readLockFile(m.lockfilePath))!;
      assert.is(Object.values(lock.tasks).filter((t) => t.superseded_by !== undefined).length, superseded, "the end's supersession pass recorded every replaced task");
      const standing = readFileSync(join(m.outputsDir, "results.jsonl"), "utf8").trimEnd().split("\n").map((l) => (JSON.parse(l) as { standing: string }).standing);
      assert.is(standing.filter((x) => x === "orphaned").length, orphaned);
      const before = tree(m.outputsDir);
      const copy = join(dir, "before");
      rmSync(copy, { recursive: true, force: true });
      cpSync(m.outputsDir, copy, { recursive: true });
      const again = await writeReports({ lock, outputsDir: m.outputsDir, manifestName: m.name, env: {}, emulated: true, manifest: m, force: true });
      assert.is(again.written, true);
      const after = tree(m.outputsDir);
      assert.equal([...after.keys()].sort(), [...before.keys()].sort());
      const stamp = (text: string) => text.replace(/"generated_at":"[^"]*"/, '"generated_at":""');
      for (const [path, text] of before) {
        if (path === ".reports-source") continue;
        assert.ok(stamp(after.get(path)!) === stamp(text), `${path} differs`);
      }
      assert.ok([...before.keys()].filter((k) => k.endsWith("task.json")).length >= 8);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
