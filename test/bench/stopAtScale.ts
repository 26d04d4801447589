// A tool, not a scenario: the stop of a large run without the run before it. A store (in
// memory) holds N downloaded image records as the scale scenario's run leaves them (held as
// their lines), then the stop as the scale scenario takes it: the records read for the
// reports (`snapshot`: every record decoded at once; `frozen`: decoded as read, as a run's
// end reads them) and writeReports. Prints RSS before the stop and the highest RSS during
// it (sampled every 10 ms), with the CPU time, under the CLI's heap setting.
// `node --import tsx test/bench/stopAtScale.ts [tasks] [snapshot|frozen]`

import { createHash } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Effect } from "effect";
import { applyRunHeapSettings } from "../../src/cli/runHeap.js";
import { writeReports } from "../../src/report/writeReports.js";
import type { LockTask } from "../../src/state/LockFile.js";
import { LockStore } from "../../src/state/LockStore.js";

const tasks = Number(process.argv[2] ?? 200_000);
const how = process.argv[3] === "snapshot" ? "snapshot" : "frozen";
applyRunHeapSettings();
const mb = (n: number) => Math.round(n / 1048576);
const cpuMs = () => {
  const c = process.cpuUsage();
  return (c.user + c.system) / 1000;
};

const record = (n: number): [string, LockTask] => {
  const hash = createHash("sha256").update(`request ${n}`).digest("hex");
  const a = n % 1000;
  const b = Math.floor(n / 1000);
  const dir = `stills/${a}_${b}`;
  const at = 1_790_000_000_000 + n;
  return [
    `bench-stop-stills-${hash.slice(0, 20)}`,
    {
      job: "stills",
      kind: "image",
      vars: { a, b },
      dir,
      request_hash: hash,
      take: 1,
      attempt: 1,
      state: "downloaded",
      task_id: `${7_000_000_000_000_000 + n}`,
      planned_at: at - 900,
      submitted_at: at - 800,
      created_at: at - 700,
      finished_at: at - 100,
      updated_at: at,
      outputs: [{ type: "image", index: 0, variant: "main", path: `${dir}/image-1.png`, size: 1_000 + (n % 7), sha256: createHash("sha256").update(`result ${n}`).digest("hex"), remote_id: `img-${n.toString(16)}` }],
      billing: [{ charge_type: "cash", amount: "0.024", list_price: "0.03" }],
    },
  ];
};

const out = mkdtempSync(join(tmpdir(), "omnibatch-stopscale-"));
try {
  await Effect.runPromise(
    Effect.gen(function* () {
      const store = yield* LockStore;
      for (let n = 0; n < tasks; n++) {
        const [id, task] = record(n);
        yield* store.put(id, task);
        if (n % 10_000 === 9_999) yield* store.flush;
      }
      yield* store.flush;
      yield* Effect.promise(() => new Promise((r) => setTimeout(r, 200)));
      const before = process.memoryUsage.rss();
      let peak = before;
      const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage.rss())), 10);
      const cpu0 = cpuMs();
      const lock = how === "snapshot" ? yield* store.snapshot : yield* store.frozenSnapshot;
      // Every result as the run's downloads left it (no files here: the run's `seen` says they are present).
      yield* Effect.promise(() => writeReports({ lock, outputsDir: out, manifestName: "bench-stop", env: {}, seen: () => true }));
      clearInterval(timer);
      peak = Math.max(peak, process.memoryUsage.rss());
      process.stdout.write(`${tasks} records, ${how}: RSS before the stop ${mb(before)} MB, peak during it ${mb(peak)} MB (+${mb(peak - before)}); CPU ${Math.round(cpuMs() - cpu0)} ms\n`);
    }).pipe(Effect.scoped, Effect.provide(LockStore.memory("bench-stop"))),
  );
} finally {
  rmSync(out, { recursive: true, force: true });
}
