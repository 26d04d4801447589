// The recorder's index of recorded attempts and the store's change count, which let a
// rerun with nothing to do skip work: a downloaded task's next attempt is worked out only
// when some record is that attempt of that job (hasAttempt must never say no to a record
// that exists, including one put during the run), and the end of a run reuses the start's
// plan only when no put changed a record (changes).

import { Effect } from "effect";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { Recorder } from "../../src/engine/Recorder.js";
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
