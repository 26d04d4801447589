// A test layer for the Downloader: results "downloaded" into memory, with canned failures
// (`failures`: that many fetchAll calls fail before one succeeds), so the engine's
// fetching part is tested without HTTP or files. The real downloader is tested against
// real servers and the real file system (test/outputs/).

import { Effect, Layer } from "effect";
import { DownloadFailed, Downloader, type DownloaderService } from "../../src/outputs/Downloader.js";
import type { LockOutput } from "../../src/state/LockFile.js";

export interface MemoryDownloader {
  readonly downloader: DownloaderService;
  readonly layer: Layer.Layer<Downloader>;
  /** Folders fetched, in order (one per successful fetchAll). */
  readonly fetched: string[];
  /** fetchAll calls, successful or not. */
  readonly attempts: () => number;
}

export const memoryDownloader = (options: { failures?: number; filesOk?: boolean } = {}): MemoryDownloader => {
  let failuresLeft = options.failures ?? 0;
  let attempts = 0;
  const fetched: string[] = [];
  const downloader: DownloaderService = {
    fetchAll: (request) =>
      Effect.suspend(() => {
        attempts++;
        if (failuresLeft > 0) {
          failuresLeft--;
          return Effect.fail(new DownloadFailed({ message: "connection reset (canned)" }));
        }
        fetched.push(request.dir);
        const outputs: LockOutput[] = request.outputs.map(
          (o) => ({ type: o.type, index: o.index, variant: o.variant, path: `${request.dir}/${o.index}`, sha256: "0".repeat(64), size: 1 }) as LockOutput,
        );
        return Effect.succeed({ outputs, urls: request.outputs });
      }),
    verify: () => Effect.succeed(options.filesOk ?? true),
    absolutePath: (rel) => `/memory/${rel}`,
    // Nothing is on a disk: the reports look for themselves.
    seen: () => false,
  };
  return { downloader, layer: Layer.succeed(Downloader, downloader), fetched, attempts: () => attempts };
};
