// Whether `run --emulate` takes up the emulated service it kept (emulatorStart, pure), and
// reading a kept state file as untrusted input (readEmulatorState: absent, damaged, read).

import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { EmulatorState } from "../../src/emulator/EmulatorState.js";
import { emulatorTaskId, type Task } from "../../src/emulator/Task.js";
import { emulatorStatePath } from "../../src/run/EmulatedRun.js";
import { emulatorStart, readEmulatorState, type StateRead } from "../../src/run/keptEmulator.js";
import type { LockTask } from "../../src/state/LockFile.js";
import { task } from "../state/lockTask.js";

const FILE = "/p/demo.emulate.state.json";

const emuTask = (epoch: number, seq: number): Task => ({
  seq,
  id: emulatorTaskId(epoch, seq),
  kind: "image",
  watermark: false,
  createdAt: 1_000 + seq,
  processingAt: 2_000 + seq,
  endAt: 3_000 + seq,
  outcome: "succeeded",
  failMessage: "",
  slots: 1,
  charge: { mode: "cash", cashType: "balance", currency: "USD", packageType: "image", listMicros: 1n, amountMicros: 1n, unitMicros: 0n },
  image: { modelName: "m", resolution: "1k", resultType: "single", count: 1, autoCount: false, aspectRatio: "1:1" },
});

const stateOf = (epoch: number, count: number): StateRead => ({
  kind: "read",
  state: { clock: { offsetMs: 0, lastMs: 10_000 }, store: { epoch, prng: 1, tasks: Array.from({ length: count }, (_, i) => emuTask(epoch, i + 1)) } } satisfies EmulatorState,
});

const records = (...list: Partial<LockTask>[]): ReadonlyMap<string, LockTask> => new Map(list.map((o, i) => [`demo-j-${i}`, task(i, o)] as const));

test("emulatorStatePath: beside the emulated lockfile", () => {
  assert.is(emulatorStatePath("/p/manifests/demo.emulate.lock.json"), "/p/manifests/demo.emulate.state.json");
  assert.is(emulatorStatePath("/p/odd"), "/p/odd.state");
});

test("a state beside records that are all in it is taken up, downloaded tasks of other epochs included", () => {
  const start = emulatorStart(stateOf(3, 2), records({ state: "downloaded", task_id: emulatorTaskId(3, 1) }, { state: "processing", task_id: emulatorTaskId(3, 2) }, { state: "downloaded", task_id: emulatorTaskId(1, 9) }), FILE);
  assert.is(start.kind, "kept");
});

test("no state file, or a lockfile without records (deleted to start over): a new service, no warning, an epoch no recorded id uses", () => {
  const none = emulatorStart({ kind: "absent" }, records(), FILE);
  assert.equal(none, { kind: "fresh", epoch: 0 });
  const absent = emulatorStart({ kind: "absent" }, records({ state: "downloaded", task_id: emulatorTaskId(0, 1) }, { state: "failed", task_id: emulatorTaskId(1, 2) }), FILE);
  assert.equal(absent, { kind: "fresh", epoch: 2 });
  const deleted = emulatorStart(stateOf(4, 3), records(), FILE);
  assert.equal(deleted, { kind: "fresh", epoch: 5 }, "the state of a deleted lockfile is replaced");
});

test("a damaged state: a new service and a warning naming the file and the problem", () => {
  const start = emulatorStart({ kind: "damaged", problem: "tasks[0].kind: must be one of video, image" }, records({ state: "downloaded", task_id: emulatorTaskId(0, 1) }), FILE);
  assert.is(start.kind, "fresh");
  if (start.kind !== "fresh") return;
  assert.is(start.epoch, 1);
  assert.match(start.warning ?? "", `cannot use the emulated service's saved state ${FILE}: tasks[0].kind`);
  assert.match(start.warning ?? "", "a new emulated service starts");
});

test("a state older than the lockfile (a task at the service it does not hold): a new service, with a warning", () => {
  for (const state of ["submitted", "processing", "succeeded"] as const) {
    const start = emulatorStart(stateOf(2, 1), records({ state: "downloaded", task_id: emulatorTaskId(2, 1) }, { state, task_id: emulatorTaskId(2, 2) }), FILE);
    assert.is(start.kind, "fresh", state);
    if (start.kind === "fresh") {
      assert.is(start.epoch, 3);
      assert.match(start.warning ?? "", "is older than the emulated lockfile (1 task(s) in flight there are not in it");
    }
  }
  // Finished locally, abandoned or never sent: nothing the service must hold.
  for (const o of [{ state: "downloaded" }, { state: "failed" }, { state: "rejected" }, { state: "submitting" }, { state: "processing", abandoned: { service: "x", at: 1 } }] as Partial<LockTask>[]) {
    assert.is(emulatorStart(stateOf(2, 1), records({ ...o, task_id: emulatorTaskId(2, 5) }), FILE).kind, "kept", JSON.stringify(o));
  }
});

test("readEmulatorState: absent, damaged (not JSON, a folder) or read", () => {
  const dir = mkdtempSync(join(tmpdir(), "kept-emulator-"));
  try {
    const file = join(dir, "m.emulate.state.json");
    assert.equal(readEmulatorState(file), { kind: "absent" });
    writeFileSync(file, "{\"format\":");
    const bad = readEmulatorState(file);
    assert.is(bad.kind, "damaged");
    if (bad.kind === "damaged") assert.match(bad.problem, "not valid JSON");
    const folder = join(dir, "f.emulate.state.json");
    mkdirSync(folder);
    const f = readEmulatorState(folder);
    assert.is(f.kind, "damaged");
    if (f.kind === "damaged") assert.match(f.problem, "is a folder");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
