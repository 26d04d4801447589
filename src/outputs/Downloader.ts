// Fetches a finished task's results into outputs/<task dir>/, through a sink: a local
// folder (FolderSink.ts) or an object store (StoreSink.ts). Each file is streamed
// while hashed and counted, checked against Content-Length, and only a complete one
// lands under its final name.
// An expired or refused link (403/410/404) is refreshed by querying the task again; a
// truncated or failed transfer is retried. Files already present with the recorded
// size are not fetched again. A recorded output is history (issue 16): a result the
// service no longer has (left out of its list, or its link answering 404 after a fresh
// query past the service's 30 days) keeps its record, with `deleted_at` beside it;
// nothing recorded is dropped. A 404 within the 30 days proves nothing: the download
// fails (the task is fetched again later), the result is not called deleted.

import { Clock, Context, Data, Effect, Layer, Schedule } from "effect";
import type { ApiError } from "../api/ApiError.js";
import { classify } from "../api/classify.js";
import { retryFromFirstFailure } from "../api/retry.js";
import { OmniClient, type OmniClientService } from "../api/OmniClient.js";
import { RunPolicy, type Policy } from "../policy/Policy.js";
import { linkRefused } from "../protocol/AddressClass.js";
import { outputKey, type RemoteOutput } from "../protocol/TaskView.js";
import type { LockOutput } from "../state/LockFile.js";
import { StoreError } from "../store/ObjectStore.js";
import { folderSink } from "./FolderSink.js";
import { etagFingerprint, notFoundMeansDeleted } from "./resultState.js";
import { extensionFor, fileNameFor } from "../manifest/fileNames.js";
import { relativePath, UnsafeOutputPath } from "./OutputPaths.js";
import { TransferProblem, type ResultSink } from "./ResultSink.js";

/** A task's results could not all be fetched; the task stays `succeeded` and is tried again. */
export class DownloadFailed extends Data.TaggedError("DownloadFailed")<{
  readonly message: string;
}> {}

export interface FetchRequest {
  /** The task's results folder, relative to the outputs folder. */
  readonly dir: string;
  /** The task's file-name template result (`name`, sanitised), when the job has one. */
  readonly name?: string;
  /** What the service offers now (fresh links). */
  readonly outputs: readonly RemoteOutput[];
  /** What the lockfile already records (files present are kept; every record is kept). */
  readonly previous: readonly LockOutput[];
  /** Queries the task again for fresh links; undefined when the service does not show the task. */
  readonly refresh: Effect.Effect<readonly RemoteOutput[] | undefined, ApiError>;
  /** When the task ended (Unix ms), if known: a 404 proves a result deleted only 30 days after it (resultState.ts `notFoundMeansDeleted`). */
  readonly endedAt?: number;
}

export interface FetchResult {
  readonly outputs: LockOutput[];
  /** The links last used (fresh), for downstream requests. */
  readonly urls: readonly RemoteOutput[];
}

export interface DownloaderService {
  readonly fetchAll: (request: FetchRequest) => Effect.Effect<FetchResult, DownloadFailed>;
  /** True when every recorded file is on disk with its recorded size (cheap: no hashing). */
  readonly verify: (outputs: readonly LockOutput[]) => Effect.Effect<boolean>;
  /** `verify` at once, where the sink answers at once (a local folder); undefined elsewhere (a store). */
  readonly verifyNow?: (outputs: readonly LockOutput[]) => boolean | undefined;
  /** Absolute path of a lockfile-relative output path. */
  readonly absolutePath: (rel: string) => string;
  /** Whether this run found or wrote the file at `rel` with `size` (the sink's record; false when it keeps none). */
  readonly seen: (rel: string, size: number | undefined) => boolean;
}

/** Why one attempt at one file failed, and what to do about it. */
class Attempt extends Data.TaggedError("Attempt")<{
  readonly message: string;
  /** Query the task for a fresh link before the next attempt. */
  readonly refresh: boolean;
  /** The link answered 404: the result may be deleted (sure only on a fresh link). */
  readonly notFound?: boolean;
  /** No attempt can succeed (the result is gone, the path is unsafe). */
  readonly fatal: boolean;
  /** The service no longer has the result (deleted): its record is kept, marked deleted. */
  readonly gone?: boolean;
}> {}

/** A fetch that ended because the service no longer has the result. */
class Gone extends Data.TaggedError("Gone")<{ readonly message: string }> {}

/**
 * The largest file accepted per output type, checked against Content-Length and while
 * reading, so an endless body cannot fill the disk. Generous: the service documents no
 * sizes, and its largest outputs (10 s of 1080p video) are tens of megabytes.
 */
export const maxDownloadBytes: Readonly<Record<RemoteOutput["type"], number>> = {
  video: 2 * 1024 ** 3,
  image: 100 * 1024 ** 2,
  audio: 500 * 1024 ** 2,
  voice: 100 * 1024 ** 2,
  element: 100 * 1024 ** 2,
};

const isHttpUrl = (url: string): boolean => {
  try {
    const { protocol } = new URL(url);
    return protocol === "http:" || protocol === "https:";
  } catch {
    return false;
  }
};

/** A result link the client refused for the address it leads to (AddressClass.ts): no retry can fetch it. */
const refusedLink = (error: ApiError): boolean => error._tag === "TransportError" && error.reason.includes(linkRefused);

const attemptFromApi = (error: ApiError): Attempt => {
  if (refusedLink(error)) return new Attempt({ message: error.message, refresh: false, fatal: true });
  if (error._tag === "ServiceError" && (error.httpStatus === 403 || error.httpStatus === 410 || error.httpStatus === 401)) {
    return new Attempt({ message: `${error.message} (link expired or refused; asking for a fresh one)`, refresh: true, fatal: false });
  }
  if (error._tag === "ServiceError" && error.httpStatus === 404) {
    return new Attempt({ message: `${error.message} (the result is no longer at the service?)`, refresh: true, fatal: false, notFound: true });
  }
  const kind = classify(error);
  return new Attempt({ message: error.message, refresh: false, fatal: kind === "refused" });
};

/**
 * Runs at most `permits` effects at once, the waiting ones first come first served: a
 * freed permit goes to exactly one waiter. Effect's Semaphore wakes every waiter on each
 * release (all but one go back to waiting, a stack frame deeper), and a run whose many
 * tasks finish at once queues a thousand downloads behind a few transfers: that cost
 * O(waiters) CPU per transfer and memory that grew with every one (20,000 tasks: 2.8 GB).
 */
const fifoLimit = (permits: number) => {
  let free = permits;
  const waiters: (() => void)[] = [];
  const release = () => {
    const next = waiters.shift();
    if (next) next();
    else free++;
  };
  const acquire = Effect.async<void>((resume) => {
    if (free > 0) {
      free--;
      resume(Effect.void);
      return;
    }
    let granted = false;
    const waiter = () => {
      granted = true;
      resume(Effect.void);
    };
    waiters.push(waiter);
    // Interrupted while waiting: leave the line; interrupted just as a permit was handed
    // over: pass it on, so no permit is ever lost.
    return Effect.sync(() => {
      const at = waiters.indexOf(waiter);
      if (at >= 0) waiters.splice(at, 1);
      else if (granted) release();
    });
  });
  return <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.uninterruptibleMask((restore) =>
      Effect.flatMap(restore(acquire), () => Effect.ensuring(restore(self), Effect.sync(release))),
    );
};

/** `verify` at once, for a sink that answers at once (a local folder); undefined for a store. */
const verifyNowOf =
  (local: boolean, sink: ResultSink) =>
  (outputs: readonly LockOutput[]): boolean | undefined => {
    if (!local) return undefined;
    const held = sink.holds(outputs);
    return typeof held === "boolean" ? held : undefined;
  };

const make = (
  where: string | ResultSink,
  client: OmniClientService,
  policy: Policy,
  limits: Readonly<Record<RemoteOutput["type"], number>> = maxDownloadBytes,
): DownloaderService => {
  const sink = typeof where === "string" ? folderSink(where) : where;
  const absolutePath = sink.absolutePath;
  // One bound for the whole run, not per task: many tasks finish at once.
  const transfers = fifoLimit(Math.max(1, policy.downloadConcurrency));

  /** One transfer into the sink, which hashes, counts and checks it on the way. */
  const transfer = (ref: RemoteOutput, dir: string, url: string, base: string | undefined, recorded: LockOutput | undefined): Effect.Effect<LockOutput, Attempt> =>
    Effect.flatMap(
      Effect.mapError(client.download(url), attemptFromApi),
      (response) =>
        Effect.tryPromise({
          try: async (signal) => {
            const contentType = response.headers["content-type"];
            const name = fileNameFor(ref, extensionFor(ref, url, contentType), base);
            const rel = relativePath(dir, name);
            let written;
            try {
              written = await sink.write(
                rel,
                {
                  body: response.body,
                  type: ref.type,
                  cap: limits[ref.type],
                  ...(response.contentLength !== undefined ? { contentLength: response.contentLength } : {}),
                  ...(contentType !== undefined ? { contentType } : {}),
                  ...(recorded?.path === rel ? { recorded: { ...(recorded.size !== undefined ? { size: recorded.size } : {}), ...(recorded.sha256 !== undefined ? { sha256: recorded.sha256 } : {}) } } : {}),
                },
                signal,
              );
            } catch (error) {
              response.body.destroy();
              throw error;
            }
            return {
              type: ref.type,
              index: ref.index,
              variant: ref.variant,
              path: rel,
              size: written.size,
              sha256: written.sha256,
              // In a store: the ETag's fingerprint, so a listing tells the object from other bytes of its size.
              ...(written.etag !== undefined && etagFingerprint(written.etag) !== undefined ? { etag: etagFingerprint(written.etag)! } : {}),
              ...(ref.remote_id !== undefined ? { remote_id: ref.remote_id } : {}),
              ...(ref.group_id !== undefined ? { group_id: ref.group_id } : {}),
            } satisfies LockOutput;
          },
          catch: (error) =>
            error instanceof Attempt
              ? error
              : error instanceof TransferProblem
                ? new Attempt({ message: error.message, refresh: false, fatal: error.fatal })
                : error instanceof StoreError
                  ? new Attempt({ message: error.message, refresh: false, fatal: error.kind === "refused" })
                  : error instanceof UnsafeOutputPath
                    ? new Attempt({ message: error.message, refresh: false, fatal: true })
                    : new Attempt({ message: `download failed: ${(error as Error)?.message ?? String(error)}`, refresh: false, fatal: false }),
        }),
    );

  /** One file, with retries; `links` is shared by the task's files so one refresh serves all. */
  const fetchOne = (
    ref: RemoteOutput,
    request: FetchRequest,
    links: { current: readonly RemoteOutput[] },
    /** A 404 on a fresh link proves the result deleted (past the service's retention). */
    notFoundIsGone: boolean,
  ): Effect.Effect<LockOutput, DownloadFailed | Gone> => {
    const key = outputKey(ref);
    let needsRefresh = false;
    // The links in hand come from a query made for this fetch: a 404 now means deleted.
    let fresh = false;
    const attempt = Effect.suspend(() => {
      const refreshed = needsRefresh
        ? Effect.map(
            Effect.mapError(request.refresh, attemptFromApi),
            (answer) => {
              needsRefresh = false;
              if (answer !== undefined) {
                links.current = answer;
                fresh = true;
              }
              return links.current;
            },
          )
        : Effect.succeed(links.current);
      return Effect.flatMap(refreshed, (current) => {
        const listed = current.find((o) => outputKey(o) === key);
        if (fresh && listed === undefined) {
          return Effect.fail(new Attempt({ message: "the service no longer lists this result", refresh: false, fatal: true, gone: true }));
        }
        const url = listed?.url ?? ref.url;
        if (url === undefined) {
          return Effect.fail(new Attempt({ message: "the service no longer lists this result", refresh: false, fatal: true, gone: true }));
        }
        if (!isHttpUrl(url)) {
          return Effect.fail(new Attempt({ message: "the result link is not an http(s) URL: not fetched", refresh: false, fatal: true }));
        }
        const viaFresh = fresh;
        return Effect.mapError(transfers(transfer(ref, request.dir, url, request.name, request.previous.find((p) => outputKey(p) === key))), (e) =>
          // A 404 on a link from a query made just now, past the service's retention: the
          // result is deleted there. Within it: tried again with a fresh link, then left
          // pending (the download fails; the task is fetched again later).
          viaFresh && e.notFound && notFoundIsGone
            ? new Attempt({ message: e.message, refresh: false, fatal: true, gone: true })
            : viaFresh && e.notFound
              ? new Attempt({ message: `${e.message}: not reachable yet (within the service's 30 days, not taken as deleted)`, refresh: true, fatal: false, notFound: true })
              : e,
        );
      });
    }).pipe(Effect.tapError((e) => Effect.sync(() => (needsRefresh = e.refresh))));
    return retryFromFirstFailure(attempt, Effect.retry(policy.downloadRetry.pipe(Schedule.whileInput((e: Attempt) => !e.fatal)))).pipe(
      Effect.mapError((e) => (e.gone ? new Gone({ message: e.message }) : new DownloadFailed({ message: `${request.dir}: ${e.message}` }))),
    );
  };

  /** A recorded file still held with its recorded size: keep it, fetch nothing. */
  const kept = (ref: RemoteOutput, previous: readonly LockOutput[]): Effect.Effect<LockOutput | undefined> => {
    const old = previous.length === 0 ? undefined : previous.find((p) => outputKey(p) === outputKey(ref));
    // Nothing recorded (a task's first download): no file to look at, and no promise to wait for.
    if (!old?.path || old.sha256 === undefined || old.size === undefined) return Effect.succeed(undefined);
    return Effect.promise(async () => {
      try {
        return (await sink.holds([old])) ? old : undefined;
      } catch {
        return undefined;
      }
    });
  };

  const fetchAll = (request: FetchRequest): Effect.Effect<FetchResult, DownloadFailed> =>
    Effect.gen(function* () {
      // The task's folder must not lead out of the outputs folder: refused before fetching.
      yield* Effect.tryPromise({
        try: () => sink.prepare(request.dir),
        catch: (e) => new DownloadFailed({ message: `${request.dir}: ${(e as Error)?.message ?? String(e)}` }),
      });
      const now = yield* Clock.currentTimeMillis;
      const notFoundIsGone = notFoundMeansDeleted(request.endedAt, now);
      const links = { current: request.outputs };
      const previousByKey = new Map(request.previous.map((p) => [outputKey(p), p] as const));
      /** The record of a result the service no longer has: the one made before (history), marked deleted. */
      const deleted = (ref: Pick<LockOutput, "type" | "index" | "variant" | "remote_id">): LockOutput => {
        const old = previousByKey.get(outputKey(ref));
        if (old) return old.deleted_at !== undefined ? old : { ...old, deleted_at: now };
        return {
          type: ref.type,
          index: ref.index,
          variant: ref.variant,
          ...(ref.remote_id !== undefined ? { remote_id: ref.remote_id } : {}),
          deleted_at: now,
        };
      };
      const fetched = yield* Effect.forEach(
        request.outputs,
        (ref) => {
          if (ref.variant === "meta" || ref.url === undefined) {
            return Effect.succeed<LockOutput>({
              type: ref.type,
              index: ref.index,
              variant: ref.variant,
              ...(ref.remote_id !== undefined ? { remote_id: ref.remote_id } : {}),
              ...(ref.meta !== undefined ? { meta: ref.meta } : {}),
            });
          }
          return Effect.flatMap(kept(ref, request.previous), (old) =>
            old
              ? Effect.succeed(old)
              : Effect.catchTag(fetchOne(ref, request, links, notFoundIsGone), "Gone", () => Effect.succeed(deleted(ref))),
          );
        },
        // One file (an image task's usual case) needs no child fiber.
        { concurrency: request.outputs.length > 1 ? policy.downloadConcurrency : 1 },
      );
      // Every earlier record stays, in its place; one the service's answer left out is
      // deleted there. A result the service shows that was never recorded comes after.
      const byKey = new Map(fetched.map((o) => [outputKey(o), o] as const));
      const outputs: LockOutput[] = request.previous.map((p) => byKey.get(outputKey(p)) ?? (p.path !== undefined ? deleted(p) : p));
      for (const o of fetched) if (!previousByKey.has(outputKey(o))) outputs.push(o);
      return { outputs, urls: links.current };
    });

  const verify = (outputs: readonly LockOutput[]) =>
    Effect.suspend(() => {
      const held = sink.holds(outputs);
      return typeof held === "boolean" ? Effect.succeed(held) : Effect.promise(() => held.catch(() => false));
    });

  const seen = (rel: string, size: number | undefined): boolean => sink.seen?.(rel, size) ?? false;
  const verifyNow = verifyNowOf(typeof where === "string", sink);

  return { fetchAll, verify, verifyNow, absolutePath, seen };
};

export class Downloader extends Context.Tag("omnibatch/Downloader")<Downloader, DownloaderService>() {
  /** Downloads into `outputsDir` (or a sink: an object store) with the client and policy of the run. */
  static readonly layer = (outputs: string | ResultSink): Layer.Layer<Downloader, never, OmniClient | RunPolicy> =>
    Layer.effect(
      Downloader,
      Effect.map(Effect.all([OmniClient, RunPolicy]), ([client, policy]) => make(outputs, client, policy)),
    );

  static readonly make = make;
}
