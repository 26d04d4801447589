// Guarantee: a lockfile flush makes every journal record durable or fails; a short write
// (full disk) never passes for a durable one.
//
// Review finding (src/state/LockStore.ts, fixed there): the journal append ignored how
// many bytes write() wrote. With the disk nearly full, write() wrote part of the records
// and returned without an error, fsync succeeded, and flush reported the records durable:
// the `submitting` intent the engine flushes before a create can be lost (a torn tail is
// ignored on load), and a later append after the torn fragment makes the whole journal
// unreadable. A flush must either make every record durable or fail.
// Needs a small file system: a tmpfs is mounted under os.tmpdir() (root on Linux only;
// elsewhere the test says so and passes without checking).

import { statfsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Effect } from "effect";
import { test } from "uvu";
import { mountSmallDisk, unmountSmallDisk } from "./smallDisk.js";
import * as assert from "uvu/assert";
import { LockStore } from "../../src/state/LockStore.js";
import { readLockFile } from "../../src/state/readLockFile.js";
import { task, taskId } from "./lockTask.js";


test("a flush that reports success made every record durable, even when the disk fills in the middle of the journal append", async () => {
  const small = mountSmallDisk();
  if (!small) return;
  try {
    const path = join(small, "m.lock.json");
    const big = task(2, { state: "submitting", error: { message: "x".repeat(9000), at: 1 } });
    let flushed = false;
    await Effect.runPromise(
      LockStore.use(path, "spring-campaign", (store) =>
        Effect.gen(function* () {
          yield* store.put(taskId(1), task(1));
          yield* store.flush; // the first flush writes the whole file
          // Leave one 4 KiB page: the next record (about 9 KB) fits only in part.
          const s = statfsSync(small);
          writeFileSync(join(small, "filler"), Buffer.alloc(Number(s.bavail) * Number(s.bsize) - 4096));
          yield* store.put(taskId(2), big);
          flushed = yield* Effect.match(store.flush, { onFailure: () => false, onSuccess: () => true });
        }),
      ).pipe(Effect.catchAll(() => Effect.void)),
    );
    const lock = await readLockFile(path).catch(() => undefined);
    if (flushed) {
      assert.ok(lock, "the lockfile reads back");
      assert.is(lock!.tasks[taskId(2)]?.state, "submitting", "the record flush promised is in the lockfile");
    }
  } finally {
    unmountSmallDisk(small);
  }
});

test.run();
