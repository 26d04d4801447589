// A child process for the kill -9 test: writes to a lockfile through LockStore as fast
// as it can, printing "flushed <step>" after each flush returns, until it is killed.
//   node --import tsx test/state/lockWriter.ts <lockfile> <round>

import { Effect } from "effect";
import { LockStore } from "../../src/state/LockStore.js";
import { task } from "./lockTask.js";

const [path, round] = process.argv.slice(2) as [string, string];
const writerTaskId = (round: number | string, step: number, i: number) => `r${round}-s${step}-t${i}`;
const TASKS_PER_STEP = 10;

await Effect.runPromise(
  LockStore.use(
    path,
    "killed",
    (store) =>
      Effect.gen(function* () {
        process.stdout.write("ready\n");
        for (let step = 0; step < 100_000; step++) {
          for (let i = 0; i < TASKS_PER_STEP; i++) {
            yield* store.put(writerTaskId(round, step, i), task(step * TASKS_PER_STEP + i, { state: "planned" }));
            if (step > 0) {
              yield* store.update(writerTaskId(round, step - 1, i), (t) => ({ ...t, state: "submitted", task_id: `svc-${step}-${i}` }));
            }
          }
          yield* store.flush;
          process.stdout.write(`flushed ${step}\n`);
        }
      }),
    // Small compaction threshold and coalescing window: kills land in appends, full writes and renames.
    { coalesceMs: 3, minCompactBytes: 16 * 1024 },
  ),
);
