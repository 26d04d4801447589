// Several manifests in one run (`omnibatch run a.yaml b.yaml ...`, issue 30): the way a
// repository with several manifests on one schedule keeps them from refusing each other
// the account's slots. Every manifest is loaded and checked first (one that cannot be:
// nothing is sent for any), then all run at once in this process, each through
// runLoadedManifest with its own lockfile, outputs, reports and exit status, all sharing
// one pool of slots per product (SharedSlots): the pool counts the slots every run holds,
// so together they never ask the service for more than the pool, and each run's own
// `concurrency` still caps it. Two that ask for the same request never both pay for it:
// the later one waits for the earlier and reuses its results (issue 31, `sharedBefore`).

import { SlotLimiter } from "../engine/SlotLimiter.js";
import type { RunEvent, RunSummary } from "../engine/RunEvent.js";
import type { RunnableManifest } from "../engine/RunnableManifest.js";
import type { SlotPool, SlotPools, SlotShareRule } from "../policy/slotShare.js";
import { runLoadedManifest, type RunManifestOptions } from "./runManifest.js";
import { emulatedPaths } from "./EmulatedRun.js";

/** One pool per product, made by the first run that asks for it (with that run's rule: the runs share one policy). */
export class SharedSlots implements SlotPools {
  private readonly pools = new Map<string, SlotPool>();

  constructor(readonly ceiling: number) {}

  pool(kind: "video" | "image", rule: SlotShareRule): SlotPool {
    let pool = this.pools.get(kind);
    if (pool === undefined) {
      pool = new SlotLimiter(this.ceiling, rule);
      this.pools.set(kind, pool);
    }
    return pool;
  }
}

/** What became of one manifest: its run's summary, or the error that stopped it from starting. */
export interface ManifestOutcome {
  readonly file: string;
  readonly name: string;
  readonly summary?: RunSummary;
  readonly error?: unknown;
}

/**
 * Loads every file with `load`, each attempted whatever the others did, so every invalid
 * manifest is reported at once. `errors` empty: all loaded, in the order given.
 */
export const loadEach = async <M>(files: readonly string[], load: (file: string) => Promise<M>): Promise<{ readonly loaded: readonly M[]; readonly errors: readonly { readonly file: string; readonly error: unknown }[] }> => {
  const loaded: M[] = [];
  const errors: { file: string; error: unknown }[] = [];
  for (const file of files) {
    try {
      loaded.push(await load(file));
    } catch (error) {
      errors.push({ file, error });
    }
  }
  return { loaded, errors };
};

/**
 * Two manifests that would write the same lockfile or the same outputs folder (the same
 * file named twice, or two that name one folder): a line saying which, else undefined.
 */
export const overlapOf = (manifests: readonly Pick<RunnableManifest, "file" | "lockfilePath" | "outputsDir">[]): string | undefined => {
  for (let i = 0; i < manifests.length; i++) {
    for (let j = 0; j < i; j++) {
      const a = manifests[j]!;
      const b = manifests[i]!;
      if (a.lockfilePath === b.lockfilePath) return `${a.file} and ${b.file} would share the lockfile ${a.lockfilePath}: name each manifest once`;
      if (a.outputsDir === b.outputsDir) return `${a.file} and ${b.file} would share the outputs folder ${a.outputsDir}: give each its own \`outputs\``;
    }
  }
  return undefined;
};

export interface RunManifestsOptions extends Omit<RunManifestOptions, "onEvent" | "slotPools" | "selection" | "expectLockfile" | "reuseAlso"> {
  /** Where each manifest's events go. */
  readonly onEventOf?: (manifest: RunnableManifest) => ((event: RunEvent) => void) | undefined;
}

/**
 * Never pay twice within one run of several manifests (issue 31): for each manifest, the
 * earlier ones (in the order given) that ask for one of its requests (the same request
 * hash: the exact request with inputs by content, and the take). A manifest starts once
 * those have ended, and reuses their results like any other lockfile's; the others start
 * at once. Downstream tasks are not known before their upstream results: they share a
 * request only through upstream tasks that do, which this sees. Pure.
 */
export const sharedBefore = (manifests: readonly Pick<RunnableManifest, "tasks">[]): number[][] => {
  const firstAsker = new Map<string, number>();
  return manifests.map((m, i) => {
    const before = new Set<number>();
    for (const t of m.tasks) {
      const j = firstAsker.get(t.requestHash);
      if (j === undefined) firstAsker.set(t.requestHash, i);
      else if (j !== i) before.add(j);
    }
    return [...before].sort((a, b) => a - b);
  });
};

/**
 * Runs already loaded (and checked) manifests at once, sharing one slot pool per product
 * (`concurrency`, else the largest of the manifests'). With reuse on, a manifest that asks
 * for a request an earlier one asks for too starts after it and reuses its results
 * (`sharedBefore`). Resolves when every run has ended, with each one's outcome in the order given.
 */
export const runManifests = async (manifests: readonly RunnableManifest[], options: RunManifestsOptions = {}): Promise<readonly ManifestOutcome[]> => {
  const { onEventOf, ...rest } = options;
  const slotPools = new SharedSlots(Math.max(1, options.concurrency ?? Math.max(...manifests.map((m) => m.concurrency))));
  const waits = options.reuse === false ? manifests.map(() => []) : sharedBefore(manifests);
  // The lockfile and outputs each run really uses (an emulated run's own: EmulatedRun.ts).
  const pathsOf = (m: RunnableManifest) => (options.emulate ? emulatedPaths(m) : { lockfilePath: m.lockfilePath, outputsDir: m.outputsDir });
  const runs: Promise<ManifestOutcome>[] = [];
  manifests.forEach((manifest, i) => {
    runs.push(
      (async (): Promise<ManifestOutcome> => {
        const earlier = waits[i]!;
        const onEvent = onEventOf?.(manifest);
        if (earlier.length > 0) {
          const names = earlier.map((j) => manifests[j]!.file).join(", ");
          onEvent?.({ type: "notice", level: "info", message: `starts after ${names}: they ask for some of the same requests, paid once and reused here` });
        }
        // Whatever became of them: their paid results are in their lockfiles (none, if they did not start).
        await Promise.all(earlier.map((j) => runs[j]!));
        try {
          const summary = await runLoadedManifest(manifest, {
            ...rest,
            slotPools,
            ...(onEvent ? { onEvent } : {}),
            ...(earlier.length > 0 ? { reuseAlso: earlier.map((j) => pathsOf(manifests[j]!)) } : {}),
          });
          return { file: manifest.file, name: manifest.name, summary };
        } catch (error) {
          return { file: manifest.file, name: manifest.name, error };
        }
      })(),
    );
  });
  return Promise.all(runs);
};

/**
 * The exit code of several runs: the worst of theirs. From least to most serious: done
 * (0), pending (3), tasks failed (1), budget (4), results lost (6), refused (5), invalid
 * (2); any other code (a bug, a closed pipe) outranks them all.
 */
export const worstExitCode = (codes: readonly number[]): number => {
  const order = [0, 3, 1, 4, 6, 5, 2];
  const rank = (c: number) => (order.includes(c) ? order.indexOf(c) : order.length);
  return codes.reduce((worst, c) => (rank(c) > rank(worst) ? c : worst), 0);
};
