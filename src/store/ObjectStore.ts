// The object-store port: what the rest of omnibatch asks of a bucket. Keys here are
// relative to the store's prefix (the same paths results have in a local folder). The
// live implementation is S3Store.ts; tests use it against s3rver and hostile stores.

import type { Readable } from "node:stream";
import type { StoreLocation } from "../fs/StoreUrl.js";

/** One object as a listing or a HEAD shows it. */
export interface StoredObject {
  /** Relative to the prefix. */
  readonly key: string;
  readonly size: number;
  /** The store's entity tag, unquoted: the MD5 of the content for a single-part upload on S3, R2, MinIO. */
  readonly etag?: string;
}

export interface PutOptions {
  readonly contentType?: string;
  /** Only create: fail with `conflict` when the key exists (`If-None-Match: *`, where the store honours it). */
  readonly createOnly?: boolean;
  /** Only replace this version (`If-Match`, where the store honours it). */
  readonly replacing?: string;
  readonly signal?: AbortSignal;
}

/** What a finished upload says about itself. */
export interface PutAnswer {
  readonly etag?: string;
  /** The part size used when the upload went in parts (its ETag is then composite). */
  readonly partSize?: number;
  readonly multipart: boolean;
}

/** Requests made, by kind (the presence check's cost is counted in list requests). */
export interface StoreCounts {
  list: number;
  head: number;
  put: number;
  get: number;
  delete: number;
  /** Server-side copies (counted apart: absent in counts made before copies existed). */
  copy?: number;
}

/**
 * Why a store request failed. `conflict`: a conditional write found the key taken;
 * `refused`: credentials, permissions or a missing bucket (no retry helps); `transient`:
 * anything else (network, 5xx, timeouts), worth another attempt.
 */
export class StoreError extends Error {
  readonly _tag = "StoreError";
  constructor(
    readonly kind: "conflict" | "refused" | "transient",
    message: string,
  ) {
    super(message);
  }
}

/** The store cannot be used: a bad URL, refused credentials, a missing bucket, no answer. Nothing was sent to the service. */
export class StoreUnavailable extends Error {
  readonly _tag = "StoreUnavailable";
}

export interface ObjectStore {
  readonly location: StoreLocation;
  /** Every object under the prefix, one request per 1,000 keys; keys relative to the prefix. */
  readonly list: () => Promise<Map<string, StoredObject>>;
  readonly head: (key: string) => Promise<StoredObject | undefined>;
  /** Streams `body` into `key` (in parts when large); resolves once the object is complete. */
  readonly put: (key: string, body: Readable, options?: PutOptions) => Promise<PutAnswer>;
  /**
   * The object's content as a stream, or undefined when there is none. With `range`
   * (inclusive offsets), only those bytes: `size` is then the part's length and `total`
   * the object's, as the store's Content-Range says (undefined when the object ends
   * before the range starts).
   */
  readonly get: (
    key: string,
    signal?: AbortSignal,
    range?: { readonly start: number; readonly end: number },
  ) => Promise<{ readonly body: Readable; readonly size?: number; readonly total?: number } | undefined>;
  readonly remove: (key: string) => Promise<void>;
  /**
   * Copies the object at `rel` under `from` (a location at the same store: same endpoint
   * and credentials, any bucket) to `to` here, server-side: no byte passes through this
   * process. Absent where the store cannot (then the caller streams a get into a put).
   * Both keys are refused before any request when they would leave their prefix.
   */
  readonly copy?: (from: StoreLocation, rel: string, to: string) => Promise<void>;
  readonly counts: StoreCounts;
  readonly close: () => void;
}
