// Runs a manifest file the way runLoadedManifest does (client, lockfile store, downloader,
// policy, engine, reports), but keeps hold of the LockStore so the benchmark can read its
// byte counters after the store closed (the final compaction included). The library's
// runManifest does not expose them; this is the bench's own composition of public layers.

import { Effect, Layer, Redacted } from "effect";
import { OmniClient } from "../../src/api/OmniClient.js";
import { Engine } from "../../src/engine/Engine.js";
import { RunPolicy, type Policy } from "../../src/policy/Policy.js";
import type { RunnerOptions, RunnerResult } from "../../src/engine/Runner.js";
import { loadManifest } from "../../src/manifest/loadManifest.js";
import { Downloader } from "../../src/outputs/Downloader.js";
import { writeReports } from "../../src/report/writeReports.js";
import { LockStore, type LockStoreService, type LockStoreStats } from "../../src/state/LockStore.js";

export interface RunWithLockStatsOptions {
  readonly baseUrl: string;
  readonly apiKey: string;
  readonly policy: Policy;
  readonly concurrency?: number;
  /** Stop the run after this long (exit 3, the rest pending). */
  readonly maxWaitMs?: number;
  /** The engine's events, as they happen. */
  readonly onEvent?: RunnerOptions["onEvent"];
  /** Called as each step of the end begins: "reports" (the engine has returned), then "close" (reports written; the store closes). */
  readonly onPhase?: (phase: "reports" | "close") => void;
}

export const runWithLockStats = async (
  file: string,
  o: RunWithLockStatsOptions,
): Promise<{ result: RunnerResult; lockStats: LockStoreStats; lockfilePath: string }> => {
  const manifest = await loadManifest(file);
  const clientLayer = OmniClient.layer({ baseUrl: o.baseUrl, apiKey: Redacted.make(o.apiKey) });
  const policyLayer = RunPolicy.layer(o.policy);
  const storeLayer = LockStore.layer(manifest.lockfilePath, manifest.name);
  const downloaderLayer = Downloader.layer(manifest.outputsDir).pipe(Layer.provide(Layer.merge(clientLayer, policyLayer)));
  const engineLayer = Engine.layer.pipe(Layer.provideMerge(Layer.mergeAll(clientLayer, policyLayer, storeLayer, downloaderLayer)));
  let store: LockStoreService | undefined;
  const program = Effect.gen(function* () {
    const engine = yield* Engine;
    store = yield* LockStore;
    const result = yield* engine.run({
      manifest,
      ...(o.concurrency !== undefined ? { concurrency: o.concurrency } : {}),
      ...(o.maxWaitMs !== undefined ? { maxWaitMs: o.maxWaitMs } : {}),
      ...(o.onEvent ? { onEvent: o.onEvent } : {}),
    });
    o.onPhase?.("reports");
    // As a run's end reads them (runLoadedManifest): decoded as read in a large run.
    const lock = yield* store.frozenSnapshot;
    yield* Effect.promise(() => writeReports({ lock, outputsDir: manifest.outputsDir, manifestName: manifest.name, env: {} }));
    o.onPhase?.("close");
    return result;
  });
  const result = await Effect.runPromise(Effect.provide(program, engineLayer));
  // The store closed with the layer (final compaction done); its counters stay readable.
  const lockStats = Effect.runSync(store!.stats);
  return { result, lockStats, lockfilePath: manifest.lockfilePath };
};
