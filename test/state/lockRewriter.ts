// A child process for the kill -9 test of streamed rewrites: over an existing lockfile,
// changes every task (its `take` set to the file's take + step + 1) and rewrites the whole file (compact,
// streamed in small chunks), printing "compacted <step>" after each, until it is killed.
//   node --import tsx test/state/lockRewriter.ts <lockfile>

import { Effect } from "effect";
import { LockStore } from "../../src/state/LockStore.js";

const [path] = process.argv.slice(2) as [string];

await Effect.runPromise(
  LockStore.use(
    path,
    "killed",
    (store) =>
      Effect.gen(function* () {
        const view = yield* store.view;
        const ids = [...view.keys()];
        const base = view.get(ids[0]!)!.take;
        process.stdout.write("ready\n");
        for (let step = 0; step < 100_000; step++) {
          for (const id of ids) yield* store.update(id, (t) => ({ ...t, take: base + step + 1 }));
          yield* store.compact;
          process.stdout.write(`compacted ${step}\n`);
        }
      }),
    // Small chunks: a rewrite is hundreds of writes, so kills land inside it.
    { coalesceMs: 600_000, chunkBytes: 16_384 },
  ),
);
