// Where fetched results go: a local folder (FolderSink.ts) or an object store
// (StoreSink.ts). The Downloader asks the service for a result and hands its body
// to a sink; the sink writes it so that a result under its final name is always complete,
// and says what it holds so that nothing held is fetched again.

import { createHash, type Hash } from "node:crypto";
import type { Readable } from "node:stream";
import type { LockOutput } from "../state/LockFile.js";

/** One attempt at writing a result failed; `fatal` when no further attempt can succeed. */
export class TransferProblem extends Error {
  readonly _tag = "TransferProblem";
  constructor(
    message: string,
    readonly fatal: boolean,
  ) {
    super(message);
  }
}

/** A result's body as the service sends it, with what is known about it beforehand. */
export interface ResultSource {
  readonly body: Readable;
  readonly type: string;
  readonly contentLength?: number;
  readonly contentType?: string;
  /** The largest size accepted for this type of result. */
  readonly cap: number;
  /** What the lockfile recorded for this result, when it was made before (a restore). */
  readonly recorded?: { readonly size?: number; readonly sha256?: string };
}

export interface WrittenResult {
  readonly size: number;
  readonly sha256: string;
  /** A store's ETag of the verified object (a folder has none). */
  readonly etag?: string;
}

export interface ResultSink {
  /** The folder or store URL, for messages. */
  readonly where: string;
  /** Before a task's files are fetched: refuse an unsafe folder, clear leftovers. */
  readonly prepare: (dir: string) => Promise<void>;
  /** Writes one result at `rel` (relative, `/`-separated); only complete and verified results resolve. */
  readonly write: (rel: string, source: ResultSource, signal: AbortSignal) => Promise<WrittenResult>;
  /** True when every recorded file is held as recorded: its size (and a store's ETag), no hashing. */
  readonly holds: (outputs: readonly LockOutput[]) => boolean | Promise<boolean>;
  /** A path a downstream job can name as `{{ item.file }}`. */
  readonly absolutePath: (rel: string) => string;
  /**
   * Whether this sink saw the file at `rel` with `size` during this run (a `holds` that
   * found it, or its own write), so the run's reports need not stat it again. Absent: the
   * sink keeps no such record.
   */
  readonly seen?: (rel: string, size: number | undefined) => boolean;
}

/**
 * Hashes and counts a body while it passes, refusing more than `cap` bytes or fewer than
 * announced. The MD5s an object store's ETag is compared with are computed only for a
 * store's meter (one given a `partSize`): a folder needs the SHA-256 alone.
 */
export class Meter {
  bytes = 0;
  private readonly sha = createHash("sha256");
  private readonly md5: Hash | undefined;
  /** MD5 of each part of `partSize` bytes: the composite ETag of a multipart upload is made of them. */
  private readonly partDigests: Buffer[] = [];
  private part: Hash | undefined;
  private partFill = 0;

  constructor(
    private readonly source: Pick<ResultSource, "type" | "cap" | "contentLength">,
    private readonly partSize?: number,
  ) {
    this.md5 = partSize === undefined ? undefined : createHash("md5");
    if (source.contentLength !== undefined && source.contentLength > source.cap) {
      throw this.tooLarge(`of ${source.contentLength} bytes, over`);
    }
  }

  private tooLarge(what: string) {
    return new TransferProblem(`refusing a ${this.source.type} result ${what} the limit of ${this.source.cap} bytes for ${this.source.type} files`, true);
  }

  /** Counts and hashes one chunk; throws when the body grows past the cap. */
  take(data: Buffer): void {
    this.bytes += data.byteLength;
    if (this.bytes > this.source.cap) throw this.tooLarge("growing past");
    this.sha.update(data);
    if (this.md5 === undefined || this.partSize === undefined) return;
    this.md5.update(data);
    let at = 0;
    while (at < data.byteLength) {
      this.part ??= createHash("md5");
      const n = Math.min(this.partSize - this.partFill, data.byteLength - at);
      this.part.update(data.subarray(at, at + n));
      this.partFill += n;
      at += n;
      if (this.partFill === this.partSize) {
        this.partDigests.push(this.part.digest());
        this.part = undefined;
        this.partFill = 0;
      }
    }
  }

  /** At the end of the body: throws when fewer bytes came than Content-Length announced. */
  end(): WrittenResult & { readonly md5?: string; readonly compositeEtag?: string } {
    if (this.source.contentLength !== undefined && this.bytes !== this.source.contentLength) {
      throw new TransferProblem(`truncated download: ${this.bytes} of ${this.source.contentLength} bytes`, false);
    }
    const digests = this.part ? [...this.partDigests, this.part.digest()] : this.partDigests;
    const compositeEtag = digests.length > 0 ? `${createHash("md5").update(Buffer.concat(digests)).digest("hex")}-${digests.length}` : undefined;
    return {
      size: this.bytes,
      sha256: this.sha.digest("hex"),
      ...(this.md5 !== undefined ? { md5: this.md5.digest("hex") } : {}),
      ...(compositeEtag ? { compositeEtag } : {}),
    };
  }
}
