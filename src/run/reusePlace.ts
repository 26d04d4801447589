// Where the run's reuse step (reuseResults.ts) gets a reused task's files and puts them:
// from a folder (a hard link where the file system allows, else a copy), from an object
// store (a server-side copy into this manifest's store, else the object streamed into
// this manifest's folder), or from the service by the source's task id (the run's
// Downloader, into this manifest's folder or store). Every file is checked by sha256 after
// it is in place: one with other bytes than the source's record is removed and never used.
// Reads happen only at the keys and paths the source's record names, inside the folder or
// store prefix its manifest names; writes only inside this manifest's outputs.

import { Effect } from "effect";
import { createReadStream, linkSync, copyFileSync, mkdirSync, renameSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import type { Readable } from "node:stream";
import { OmniClient } from "../api/OmniClient.js";
import { makeKindAdapters, viewOne } from "../engine/ServiceKinds.js";
import { parseStoreUrl, type StoreLocation } from "../fs/StoreUrl.js";
import { Downloader, maxDownloadBytes } from "../outputs/Downloader.js";
import { folderSink } from "../outputs/FolderSink.js";
import type { ResultSink } from "../outputs/ResultSink.js";
import { etagFingerprint } from "../outputs/resultState.js";
import type { StoreSink } from "../outputs/StoreSink.js";
import { fileSha256, hashStream } from "../outputs/verifyResults.js";
import { RunPolicy } from "../policy/Policy.js";
import type { ReuseSource } from "../plan/reuse.js";
import type { PlannedTask } from "../manifest/PlannedTask.js";
import type { LockOutput } from "../state/LockFile.js";
import type { ObjectStore } from "../store/ObjectStore.js";

/** This manifest's outputs as the reuse step writes them: its folder, or its store's sink. */
export interface ReuseTarget {
  readonly outputsDir: string;
  /** Outputs in a store: its sink (writes checked against the store's answer). */
  readonly sink?: StoreSink;
  /** A source store, opened once per run (same endpoint and credentials as the run's). */
  readonly source: (url: string) => Promise<ObjectStore>;
}


/** `from` at `to` with the same bytes (hard link, else copy), through a temporary name; throws when the bytes differ after. */
const placeFile = async (from: string, to: string, sha256: string): Promise<void> => {
  mkdirSync(dirname(to), { recursive: true });
  const tmp = `${to}.reuse-${process.pid}.tmp`;
  rmSync(tmp, { force: true });
  try {
    try {
      linkSync(from, tmp);
    } catch {
      copyFileSync(from, tmp);
    }
    if ((await fileSha256(tmp)) !== sha256) throw new Error(`${from} has other bytes than its record`);
    renameSync(tmp, to);
  } finally {
    rmSync(tmp, { force: true });
  }
};

const capOf = (o: LockOutput): number => maxDownloadBytes[o.type] ?? maxDownloadBytes.video;

/** A body written through a sink (folder or store), refused and removed when its sha256 is not the record's. */
const writeThrough = async (sink: ResultSink, remove: (path: string) => Promise<void>, body: Readable, o: LockOutput, path: string): Promise<string | undefined> => {
  const written = await sink.write(path, { body, type: o.type, cap: capOf(o), ...(o.size !== undefined ? { contentLength: o.size } : {}) }, new AbortController().signal);
  if (written.sha256 !== o.sha256) {
    await remove(path).catch(() => undefined);
    throw new Error(`other bytes than its record (sha256 ${written.sha256})`);
  }
  return written.etag;
};

/** A server-side copy within the store, then the copy read back and hashed; an object of other content at the key is never replaced. */
const copyInStore = async (target: StoreSink, from: StoreLocation, key: string, o: LockOutput, path: string): Promise<string | undefined> => {
  const store = target.store;
  if (store.copy === undefined) throw new Error(`${store.location.url} cannot copy server-side`);
  const there = await store.head(path);
  if (there !== undefined && there.size !== o.size) throw new Error(`${store.location.url}/${path} holds other content: left as it is`);
  if (there === undefined) await store.copy(from, key, path);
  const got = await store.get(path);
  const seen = got ? await hashStream(got.body) : undefined;
  if (seen?.sha256 !== o.sha256) {
    if (there === undefined) await store.remove(path).catch(() => undefined);
    throw new Error(`the copy has other bytes than its record`);
  }
  const placed = await store.head(path);
  if (placed !== undefined) target.noted(path, placed);
  return placed?.etag;
};

/**
 * One file of a source in place at `path` (relative to this manifest's outputs); resolves
 * with the store's ETag fingerprint of the placed object, when in a store. Throws when it
 * cannot be had with its recorded sha256 (nothing of it is left in place then).
 */
export const placeOne = async (target: ReuseTarget, source: ReuseSource, o: LockOutput & { readonly sha256: string }, from: string, path: string): Promise<string | undefined> => {
  const local = join(target.outputsDir, ...path.split("/"));
  let etag: string | undefined;
  if (source.store === undefined) {
    if (target.sink === undefined) await placeFile(from, local, o.sha256);
    else etag = await writeThrough(target.sink, (p) => target.sink!.store.remove(p), createReadStream(from), o, path);
  } else {
    const location = parseStoreUrl(source.store);
    if ("problem" in location) throw new Error(location.problem);
    if (target.sink !== undefined) etag = await copyInStore(target.sink, location, from, o, path);
    else {
      const got = await (await target.source(source.store)).get(from);
      if (got === undefined) throw new Error(`${source.store}/${from} is gone`);
      await writeThrough(folderSink(target.outputsDir), async (p) => rmSync(join(target.outputsDir, ...p.split("/")), { force: true }), got.body, o, path);
    }
  }
  return etag === undefined ? undefined : etagFingerprint(etag);
};

/** Removes what a reused task placed before one of its files failed (its own task folder's files, this run's). */
export const unplace = async (target: ReuseTarget, paths: readonly string[]): Promise<void> => {
  for (const p of paths) {
    if (target.sink) await target.sink.store.remove(p).catch(() => undefined);
    else rmSync(join(target.outputsDir, ...p.split("/")), { force: true });
  }
};

/**
 * The source's results fetched from the service by its task id (same service, within its
 * 30 days) into this manifest's outputs with the run's Downloader; every main file's sha256
 * must be the source's record's, else what was fetched is removed and the reason returned.
 */
export const fetchFromService = (target: ReuseTarget, task: PlannedTask, dir: string, source: ReuseSource) =>
  Effect.gen(function* () {
    const taskId = source.record.task_id;
    if (taskId === undefined) return { why: "no task id is recorded" } as const;
    const client = yield* OmniClient;
    const policy = yield* RunPolicy;
    const downloader = yield* Downloader;
    const adapter = makeKindAdapters(client, policy, () => undefined)[source.record.kind];
    const watermark = source.record.outputs.some((o) => o.variant === "watermark");
    const view = yield* Effect.either(viewOne(adapter, taskId, watermark));
    if (view._tag === "Left") return { why: `the service could not be asked (${view.left.message})` } as const;
    if (view.right === undefined || view.right.status !== "succeeded") return { why: `the service no longer shows its results (task ${taskId})` } as const;
    const got = yield* Effect.either(
      downloader.fetchAll({
        dir,
        ...(task.name !== undefined ? { name: task.name } : {}),
        outputs: view.right.outputs,
        previous: [],
        refresh: Effect.map(viewOne(adapter, taskId, watermark), (v) => v?.outputs),
        ...(source.paidAt !== undefined ? { endedAt: source.paidAt } : {}),
      }),
    );
    if (got._tag === "Left") return { why: got.left.message } as const;
    const key = (o: LockOutput) => `${o.type}/${o.index}/${o.variant}`;
    const fetched = new Map(got.right.outputs.map((o) => [key(o), o] as const));
    const wrong = source.record.outputs.filter((o) => o.sha256 !== undefined && o.path !== undefined && fetched.get(key(o))?.sha256 !== o.sha256);
    if (wrong.length > 0) {
      yield* Effect.promise(() => unplace(target, got.right.outputs.flatMap((o) => (o.path ? [o.path] : []))));
      return { why: `the service's ${wrong[0]!.variant} ${wrong[0]!.type} has other bytes than its record (removed, never used)` } as const;
    }
    return { outputs: got.right.outputs } as const;
  });
