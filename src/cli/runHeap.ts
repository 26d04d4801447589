// How the CLI's process lets V8 grow its heap. A run keeps every task's state alive
// (200,000 planned tasks: about 300 MB of live heap) while it allocates per task objects
// that live as long as the task's requests (a thousand in flight), so they outlive the
// young generation and die in the old one. V8 lets the old generation grow to 1.1–4
// times what its last full collection left live before collecting again, and under a
// fast-allocating run it picks near the top: the 200,000-task benchmark held about three
// times its live heap (1,614 MB RSS while running). A fixed factor of 1.5 collects sooner:
// peak RSS about halves, for more full collections (their cost is measured in
// docs/benchmarks-log.md). Applied at the start of the CLI (launcher.ts)
// and by the benchmark's run scenarios, which measure what the CLI does; a user's own
// `node --heap-growing-percent=N` is left as it is.

import { setFlagsFromString } from "node:v8";

/** The old generation may grow this many percent above what the last full collection left live. */
export const HEAP_GROWING_PERCENT = 50;

/**
 * Sets V8's heap growing factor for this process, unless node's command line set one
 * (`node --heap-growing-percent=N`; 0 is V8's own choice). Node refuses the flag in
 * NODE_OPTIONS. Returns whether it set it.
 */
export const applyRunHeapSettings = (execArgv: readonly string[] = process.execArgv): boolean => {
  if (execArgv.some((a) => /^--heap[-_]growing[-_]percent\b/.test(a))) return false;
  setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
  return true;
};
