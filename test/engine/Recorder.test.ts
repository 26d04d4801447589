// The recorder's index of recorded attempts and the store's change count, which let a
// rerun with nothing to do skip work: a downloaded task's next attempt is worked out only
// when some record is that attempt of that job (hasAttempt must never say no to a record
// that exists, including one put during the run), and the end of a run reuses the start's
// plan only when no put changed a record (changes).

import { Effect } from "effect";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { Recorder } from "../../src/engine/Recorder.js";
import type { PlannedTask } from "../../src/manifest/PlannedTask.js";
import { LOCKFILE_VERSION, type LockTask } from "../../src/state/LockFile.js";
import { LockStore } from "../../src/state/LockStore.js";

const rec = (job: string, attempt: number, extra: Partial<LockTask> = {}): LockTask =>
  ({ job, kind: "image", vars: {}, dir: `${job}/x`, request_hash: "h", take: 1, attempt, state: "downloaded", updated_at: 1, outputs: [], billing: [], ...extra }) as LockTask;

test("hasAttempt: true exactly for the (job, attempt) pairs of the records, including one put after the first question", async () => {
  const initial = { a: rec("stills", 1), b: rec("stills", 2), c: rec("clips", 1) };
  await Effect.runPromise(
    Effect.gen(function* () {
      const store = yield* LockStore;
      const recorder = new Recorder(store, () => undefined, "", yield* store.view);
      assert.is(recorder.hasAttempt("stills", 1), true);
      assert.is(recorder.hasAttempt("stills", 2), true);
      assert.is(recorder.hasAttempt("stills", 3), false);
      assert.is(recorder.hasAttempt("clips", 2), false);
      assert.is(recorder.hasAttempt("voices", 1), false);
      // A new attempt recorded during the run (--recreate-lost): seen at once.
      yield* recorder.put("d", rec("clips", 2));
      assert.is(recorder.hasAttempt("clips", 2), true);
    }).pipe(Effect.scoped, Effect.provide(LockStore.memory("m", { lockfile_version: LOCKFILE_VERSION, name: "m", tasks: initial }))),
  );
});

test("a record made in this run has its matrix values and upstream link in the key order the lockfile reads back, so reports do not depend on whether a write came first", async () => {
  await Effect.runPromise(
    Effect.gen(function* () {
      const store = yield* LockStore;
      const recorder = new Recorder(store, () => undefined, "", yield* store.view);
      const planned = { id: "t", job: "clips", kind: "video", vars: { shot: "b", angle: { z: 1, a: 2 } }, dir: "clips/t", requestHash: "h", take: 1, attempt: 1, upstream: { job: "stills", task: "s", output: 0 } };
      yield* recorder.record(planned as unknown as PlannedTask, { state: "submitted" }, 5);
      const made = (yield* store.view).get("t")!;
      assert.equal(Object.keys(made.vars), ["angle", "shot"]);
      assert.equal(Object.keys(made.vars["angle"] as object), ["a", "z"]);
      assert.equal(Object.keys(made.upstream!), ["job", "output", "task"]);
      assert.equal(made.vars, { angle: { a: 2, z: 1 }, shot: "b" });
    }).pipe(Effect.scoped, Effect.provide(LockStore.memory("m", { lockfile_version: LOCKFILE_VERSION, name: "m", tasks: {} }))),
  );
});

test("changes: counts only puts that change a record; view is the store's map, all a copy", async () => {
  await Effect.runPromise(
    Effect.gen(function* () {
      const store = yield* LockStore;
      assert.is(yield* store.changes, 0);
      yield* store.put("a", rec("stills", 1));
      assert.is(yield* store.changes, 0, "the same record again is no change");
      yield* store.put("a", rec("stills", 1, { updated_at: 2 }));
      yield* store.put("n", rec("stills", 1));
      assert.is(yield* store.changes, 2);
      const view = yield* store.view;
      const copy = yield* store.all;
      yield* store.put("z", rec("clips", 1));
      assert.ok(view.has("z"), "the view follows later puts");
      assert.not.ok(copy.has("z"), "the copy does not");
    }).pipe(Effect.scoped, Effect.provide(LockStore.memory("m", { lockfile_version: LOCKFILE_VERSION, name: "m", tasks: { a: rec("stills", 1) } }))),
  );
});

test.run();
