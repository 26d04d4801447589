// `omnibatch verify --fix`: the results that differ from their records are fetched again
// from the service, through the run's own download path (Downloader.fetchAll: streamed,
// hashed, checked, written whole or not at all, a store's object replaced only once the
// new one is verified), under the run lock, and their records updated. Nothing is ever
// created: a task the service no longer shows, or whose result it deleted, stays as it is
// and is named. Only against the service the lockfile's tasks were made at.

import { Effect, Layer } from "effect";
import { OmniClient, type OmniClientConfig } from "../api/OmniClient.js";
import { makeKindAdapters, viewOne } from "../engine/ServiceKinds.js";
import { accountCurrency } from "../money/charges.js";
import { Downloader } from "../outputs/Downloader.js";
import { nameFromRecorded, type ResultDifference } from "../outputs/verifyResults.js";
import { livePolicy, makePolicy, RunPolicy, type Policy } from "../policy/Policy.js";
import { timeScaleFor } from "../policy/timeScale.js";
import type { LockOutput, LockTask } from "../state/LockFile.js";
import { LockStore } from "../state/LockStore.js";
import type { StoreSink } from "../outputs/StoreSink.js";
import { serviceIdentity } from "./serviceCheck.js";

export interface FixOutcome {
  /** Tasks whose files were fetched again. */
  readonly fetched: readonly string[];
  /** Tasks not fetched again, and why. */
  readonly notFixed: readonly { readonly id: string; readonly why: string }[];
}

/** A record's outputs with the differing ones' size and hash taken away: the download path fetches those again (and keeps the rest). */
const forgetting = (outputs: readonly LockOutput[], bad: ReadonlySet<string>): LockOutput[] =>
  outputs.map((o) => {
    if (o.path === undefined || !bad.has(o.path)) return o;
    const { size: _size, sha256: _sha256, etag: _etag, ...rest } = o;
    return rest;
  });

/**
 * A store's differing object is kept aside (`<key>.differs-<ms>`) before it is removed, so
 * a fetch that then fails loses nothing: the record may have been the wrong one (a hand
 * edit, a bad merge) and the object the paid result. Undefined when set aside (or absent).
 */
const setAside = (sink: StoreSink, path: string, at: number): Promise<string | undefined> =>
  (async () => {
    const got = await sink.store.get(path);
    if (got === undefined) return undefined;
    const aside = `${path}.differs-${at}`;
    await sink.store.put(aside, got.body);
    await sink.store.remove(path);
    return undefined;
  })().catch((e: unknown) => `its object could not be set aside before fetching again (${e instanceof Error ? e.message : String(e)}); left as it is`);

const fixTask = (id: string, rec: LockTask, bad: ReadonlySet<string>, sink: StoreSink | undefined, policy: Policy, currency: string | undefined) =>
  Effect.gen(function* () {
    if (rec.task_id === undefined) return `no task id is recorded`;
    const client = yield* OmniClient;
    const downloader = yield* Downloader;
    const adapter = makeKindAdapters(client, policy, () => currency)[rec.kind];
    const watermark = rec.outputs.some((o) => o.variant === "watermark");
    const view = yield* Effect.either(viewOne(adapter, rec.task_id, watermark));
    if (view._tag === "Left") return `the service could not be asked (${view.left.message})`;
    if (view.right === undefined || view.right.status !== "succeeded") return `the service no longer shows its results (task ${rec.task_id})`;
    // A store's differing object goes first (the store never replaces an object with content
    // other than the recorded one), kept aside under another key until the new one is in.
    const at = Date.now();
    if (sink) {
      for (const path of bad) {
        const failed = yield* Effect.promise(() => setAside(sink, path, at));
        if (failed !== undefined) return failed;
      }
    }
    const named = rec.outputs.find((o) => o.path !== undefined && bad.has(o.path));
    const name = named ? nameFromRecorded(named) : undefined;
    const got = yield* Effect.either(
      downloader.fetchAll({
        dir: rec.dir,
        ...(name !== undefined ? { name } : {}),
        outputs: view.right.outputs,
        previous: forgetting(rec.outputs, bad),
        refresh: Effect.map(viewOne(adapter, rec.task_id, watermark), (v) => v?.outputs),
        ...(rec.finished_at !== undefined ? { endedAt: rec.finished_at } : {}),
      }),
    );
    if (got._tag === "Left") return sink ? `${got.left.message} (the differing object is kept as <key>.differs-${at})` : got.left.message;
    if (sink) for (const path of bad) yield* Effect.promise(() => sink.store.remove(`${path}.differs-${at}`).catch(() => undefined));
    const store = yield* LockStore;
    yield* store.put(id, { ...rec, outputs: got.right.outputs, updated_at: Math.max(rec.updated_at, Date.now()) });
    return undefined;
  });

export const fixResults = (options: {
  readonly differences: readonly ResultDifference[];
  readonly lockfilePath: string;
  readonly manifestName: string;
  /** The outputs folder, or the store sink. */
  readonly outputs: string | StoreSink;
  readonly client: OmniClientConfig;
  /** The value of OMNIBATCH_TIME_SCALE: every wait (download retries) scaled by it, as a run's, only against a service on loopback (an emulator). */
  readonly timeScale?: string;
}) => {
  const scale = timeScaleFor(options.timeScale, { emulated: false, url: options.client.baseUrl }).scale;
  const policy = scale === undefined ? livePolicy : makePolicy(scale);
  const layer = Downloader.layer(options.outputs).pipe(Layer.provideMerge(Layer.merge(OmniClient.layer(options.client), RunPolicy.layer(policy))));
  const byTask = new Map<string, Set<string>>();
  for (const d of options.differences) {
    const set = byTask.get(d.id) ?? new Set<string>();
    set.add(d.path);
    byTask.set(d.id, set);
  }
  const sink = typeof options.outputs === "string" ? undefined : options.outputs;
  return LockStore.use(options.lockfilePath, options.manifestName, (store) =>
    Effect.gen(function* () {
      const here = serviceIdentity(options.client.baseUrl);
      if (store.recordedService !== undefined && store.recordedService !== here) {
        return {
          fetched: [],
          notFixed: [...byTask.keys()].map((id) => ({ id, why: `its task was made at ${store.recordedService}, not ${here}: run verify --fix against that service` })),
        };
      }
      const currency = accountCurrency([...(yield* store.all).values()].map((t) => t.billing));
      const fetched: string[] = [];
      const notFixed: { id: string; why: string }[] = [];
      for (const [id, bad] of byTask) {
        const rec = yield* store.get(id);
        if (rec === undefined) continue;
        // Read again under the run lock: a record that changed since verify read it (a run
        // finished in between) is not acted on from a stale difference.
        const stale = options.differences.some(
          (d) => d.id === id && rec.outputs.find((o) => o.path === d.path)?.sha256 !== d.expected.sha256,
        );
        if (stale) {
          notFixed.push({ id, why: "its record changed since verify read it: run verify again" });
          continue;
        }
        const why = yield* fixTask(id, rec, bad, sink, policy, currency).pipe(Effect.provideService(LockStore, store));
        if (why === undefined) fetched.push(id);
        else notFixed.push({ id, why });
      }
      yield* store.flush;
      return { fetched, notFixed };
    }).pipe(Effect.provide(layer)),
  );
};
