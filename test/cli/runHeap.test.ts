// The CLI's heap setting (src/cli/runHeap.ts): it keeps a user's own setting, and on this
// Node it does what it is there for, set at run time as the launcher sets it: a process
// whose live heap is steady while it churns through objects that outlive the young
// generation (a run's pattern) holds a heap of at most about 1.5 times its live heap, where
// V8's own choice held two to four times as much (3.1 and 3.6 times in this workload when the
// test was written).

import { execa } from "execa";
import { fileURLToPath } from "node:url";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { applyRunHeapSettings, HEAP_GROWING_PERCENT } from "../../src/cli/runHeap.js";

test("a user's own node --heap-growing-percent is kept", () => {
  assert.is(applyRunHeapSettings(["--heap-growing-percent=20"]), false);
  assert.is(applyRunHeapSettings(["--max-old-space-size=900", "--heap_growing_percent=0"]), false);
});

const runHeap = fileURLToPath(new URL("../../src/cli/runHeap.ts", import.meta.url));

// About 100 MB live, then 4 million objects that each live while 400,000 others are made
// (past two scavenges, so they die in the old generation); prints the largest heap seen
// over the live heap (the ring included) after a full collection, as JSON.
const churn = `
const apply = process.argv[1] === "apply";
const { applyRunHeapSettings } = await import(${JSON.stringify(runHeap)});
if (apply && !applyRunHeapSettings([])) throw new Error("not applied");
const live = [];
for (let i = 0; i < 1_000_000; i++) live.push({ i, s: "live " + i });
const ring = new Array(400_000);
let peak = 0;
for (let i = 0; i < 4_000_000; i++) {
  ring[i % 400_000] = { i, s: "churn " + i, a: [i, i + 1] };
  if (i % 20_000 === 0) peak = Math.max(peak, process.memoryUsage().heapTotal);
}
globalThis.gc();
console.log(JSON.stringify({ peak, live: process.memoryUsage().heapUsed, kept: live.length + ring.length }));
`;

const measure = async (apply: boolean): Promise<number> => {
  const r = await execa("node", ["--expose-gc", "--import", "tsx", "--input-type=module", "-e", churn, apply ? "apply" : "default"], { reject: false, timeout: 120_000 });
  assert.is(r.exitCode, 0, r.stderr);
  const { peak, live } = JSON.parse(r.stdout) as { peak: number; live: number };
  return peak / live;
};

test(`applied at run time, the heap stays within about ${1 + HEAP_GROWING_PERCENT / 100} times the live heap under churn`, async () => {
  const ratio = await measure(true);
  // 1.5 times, plus the young generation and the pages of the last collection.
  assert.ok(ratio < 2.1, `largest heap ${ratio.toFixed(2)} times the live heap`);
});

test.run();
