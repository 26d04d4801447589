// Child-process entry of the expansion benchmark, for a clean peak RSS: calls the
// manifest engineer's measureExpansion() (test/bench/expansion.ts) and prints its figures
// with this process's getrusage maxRSS as one JSON line. Until that module exists, it
// measures loadManifest (parse, schema, expand, identity: validate + plan) itself on a
// generated manifest of `argv[2]` image tasks.

import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { loadManifest } from "../../src/manifest/loadManifest.js";
import { writeImageManifest } from "./benchManifest.js";

interface ExpansionFigures {
  readonly tasks: number;
  readonly wallMs: number;
  readonly peakRssMb: number;
  readonly validateMs?: number;
  readonly planMs?: number;
}

const count = Number(process.argv[2] ?? 100_000);
const theirs = fileURLToPath(new URL("./expansion.ts", import.meta.url));

const fallback = async (): Promise<ExpansionFigures> => {
  const dir = mkdtempSync(join(tmpdir(), "omnibatch-bench-exp-"));
  try {
    const file = writeImageManifest({ dir, name: "bench-expansion", count, concurrency: 8 });
    const t0 = performance.now();
    const m = await loadManifest(file);
    const wallMs = performance.now() - t0;
    return { tasks: m.tasks.length, wallMs, peakRssMb: process.resourceUsage().maxRSS / 1024 };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
};

let source = "measureExpansion() from test/bench/expansion.ts";
let figures: ExpansionFigures;
if (existsSync(theirs)) {
  const specifier = theirs;
  const mod = (await import(specifier)) as { measureExpansion: (o?: { tasks?: number }) => Promise<ExpansionFigures> };
  figures = await mod.measureExpansion({ tasks: count });
} else {
  source = "loadManifest() of a generated manifest (test/bench/expansion.ts not present)";
  figures = await fallback();
}
process.stdout.write(`${JSON.stringify({ ...figures, maxRssMb: process.resourceUsage().maxRSS / 1024, source })}\n`);
process.exit(0);
