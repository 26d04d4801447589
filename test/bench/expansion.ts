// Benchmark: a manifest that expands to 100,000 tasks (a 100-row CSV axis times a
// 1,000-value inline axis) is validated (loaded, expanded, every rule checked) and
// planned against no lockfile. Goal on the 2-core reference machine: at most 3 s wall
// and 500 MB peak memory. Also measured: planning again against a lockfile in which every
// task is done (a rerun). Run directly to print the figures:
//   node --import tsx test/bench/expansion.ts

import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { diffPlan } from "../../src/plan/diffPlan.js";
import { loadManifest } from "../../src/manifest/loadManifest.js";
import type { LockTask } from "../../src/state/LockFile.js";

export interface ExpansionFigures {
  readonly tasks: number;
  /** validate + plan, wall clock. */
  readonly wallMs: number;
  /** Peak resident memory of this process (includes the runtime itself). */
  readonly peakRssMb: number;
  readonly validateMs: number;
  readonly planMs: number;
  /** CPU time (user + system) of validate + plan: steadier than wall time on a busy machine. */
  readonly cpuMs: number;
  /** plan again with a lockfile in which every task is done (a rerun), not part of wallMs. */
  readonly replanMs: number;
}

const ROWS = 100;

const writeManifest = (dir: string, tasks: number): string => {
  const VALUES = Math.max(1, Math.round(tasks / ROWS));
  const csv = ["sku,name,colour"];
  for (let i = 0; i < ROWS; i++) csv.push(`SKU-${String(i).padStart(3, "0")},"product ${i}, deluxe",colour-${i % 7}`);
  writeFileSync(join(dir, "products.csv"), `${csv.join("\n")}\n`);
  const values = Array.from({ length: VALUES }, (_, i) => `v${i}`).join(", ");
  writeFileSync(
    join(dir, "bench.yaml"),
    `version: 1
name: bench
max_tasks: 200000
prices: { currency: USD, image: { "1k": 0.02 } }
vars: { brand: Acme }
jobs:
  shots:
    kind: image
    matrix:
      product: { rows: products.csv }
      variant: [${values}]
    prompt: "{{ brand }} {{ product.name }} in {{ product.colour }}, variant {{ variant }}, studio light"
    resolution: 1k
    aspect_ratio: "1:1"
`,
  );
  return join(dir, "bench.yaml");
};

/** `tasks` (default 100,000) is rounded to a multiple of the 100 CSV rows. */
export const measureExpansion = async (options: { readonly tasks?: number } = {}): Promise<ExpansionFigures> => {
  const dir = mkdtempSync(join(tmpdir(), "omnibatch-bench-expansion-"));
  try {
    const file = writeManifest(dir, options.tasks ?? 100_000);
    const cpu = process.cpuUsage();
    const started = performance.now();
    const manifest = await loadManifest(file);
    const validated = performance.now();
    const plan = diffPlan(manifest, undefined);
    const planned = performance.now();
    if (plan.total["+"] !== manifest.tasks.length) throw new Error("plan does not cover every task");
    const used = process.cpuUsage(cpu);
    const tasks: Record<string, LockTask> = {};
    for (const t of manifest.tasks) {
      tasks[t.id] = { job: t.job, kind: t.kind, vars: t.vars, dir: t.dir, request_hash: t.requestHash, take: t.take, attempt: t.attempt, state: "downloaded", updated_at: 1, outputs: [], billing: [] };
    }
    const replanStarted = performance.now();
    const replan = diffPlan(manifest, { lockfile_version: 1, name: manifest.name, tasks });
    const replanMs = Math.round(performance.now() - replanStarted);
    if (replan.total["="] !== manifest.tasks.length) throw new Error("replan does not find every task done");
    return {
      tasks: manifest.tasks.length,
      cpuMs: Math.round((used.user + used.system) / 1000),
      wallMs: Math.round(planned - started),
      peakRssMb: Math.round(process.resourceUsage().maxRSS / 1024),
      validateMs: Math.round(validated - started),
      planMs: Math.round(planned - validated),
      replanMs,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
};

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const f = await measureExpansion();
  const ok = f.wallMs <= 3000 && f.peakRssMb <= 500;
  console.log(
    `expansion: ${f.tasks} tasks; validate ${f.validateMs} ms, plan ${f.planMs} ms, wall ${f.wallMs} ms (goal <= 3000), cpu ${f.cpuMs} ms; plan again with all done ${f.replanMs} ms; peak RSS ${f.peakRssMb} MB (goal <= 500): ${ok ? "within goals" : "OVER GOAL"}`,
  );
}
