// The cost goal of the store: bytes written to disk stay proportional to the changes,
// not to changes x file size. 20,000 tasks, each changed 4 times after being planned,
// flushed the way the engine does (after each batch of state changes).

import { mkdtemp, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Effect } from "effect";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { LockStore } from "../../src/state/LockStore.js";
import { readLockFile } from "../../src/state/readLockFile.js";
import { task, taskId } from "./lockTask.js";

const TASKS = 20_000;
const BATCH = 50;

test("20,000 tasks updated 4 times each write at most 20x the final lockfile size", async () => {
  const dir = await mkdtemp(join(tmpdir(), "omnibatch-bytes-"));
  try {
    const path = join(dir, "m.lock.json");
    const started = Date.now();
    const stats = await Effect.runPromise(
      LockStore.use(
        path,
        "spring-campaign",
        (store) =>
          Effect.gen(function* () {
            for (let n = 0; n < TASKS; n++) yield* store.put(taskId(n), task(n));
            yield* store.flush;
            for (let first = 0; first < TASKS; first += BATCH) {
              const ids = Array.from({ length: BATCH }, (_, i) => first + i);
              // Intent recorded before the creates are sent: flushed.
              for (const n of ids) yield* store.update(taskId(n), (t) => ({ ...t, state: "submitting", updated_at: t.updated_at + 1 }));
              yield* store.flush;
              for (const n of ids) {
                yield* store.update(taskId(n), (t) => ({ ...t, state: "submitted", task_id: `svc-${n}`, submitted_at: t.updated_at + 2, updated_at: t.updated_at + 2 }));
              }
              yield* store.flush;
              for (const n of ids) {
                yield* store.update(taskId(n), (t) => ({
                  ...t,
                  state: "succeeded",
                  created_at: t.updated_at + 3,
                  finished_at: t.updated_at + 60_000,
                  updated_at: t.updated_at + 60_000,
                  billing: [{ charge_type: "cash", cash_type: "balance", amount: "0.35", currency: "USD", list_price: "0.50" }],
                  outputs: [{ type: t.kind, index: 0, variant: "main", remote_id: `out-${n}` }],
                }));
              }
              yield* store.flush;
              for (const n of ids) {
                yield* store.update(taskId(n), (t) => ({
                  ...t,
                  state: "downloaded",
                  updated_at: t.updated_at + 1_000,
                  outputs: t.outputs.map((o) => ({ ...o, path: `${t.dir}/${o.index}.${t.kind === "video" ? "mp4" : "png"}`, size: 123_456 + n, sha256: "a".repeat(64) })),
                }));
              }
              yield* store.flush;
            }
            return yield* store.stats;
          }),
        { coalesceMs: 60_000 },
      ),
    );
    const finalSize = (await stat(path)).size;
    const file = await readLockFile(path);
    assert.is(Object.keys(file!.tasks).length, TASKS);
    assert.ok(Object.values(file!.tasks).every((t) => t.state === "downloaded"));
    // stats were taken before the closing compaction: add it.
    const total = stats.bytesWritten + finalSize;
    const ratio = total / finalSize;
    console.log(
      `  lockfile bytes written: ${total} for a final file of ${finalSize} bytes: ${ratio.toFixed(2)}x ` +
        `(${stats.writes + 1} writes, ${stats.fsyncs} fsyncs, ${stats.compactions + 1} full writes, ${((Date.now() - started) / 1000).toFixed(1)} s)`,
    );
    assert.ok(ratio <= 20, `ratio ${ratio} <= 20`);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test.run();
