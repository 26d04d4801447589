// The live object store: any S3-compatible service through the AWS SDK for JavaScript v3.
// The SDK is imported here, dynamically, only when a run uses a store, so a local run's
// start-up does not load it. Settings come from the SDK's standard environment and config
// files; credentials stay inside the SDK's client and never reach a message of ours.

import type { Readable } from "node:stream";
import type { ObjectStore, PutAnswer, PutOptions, StoreCounts, StoredObject } from "./ObjectStore.js";
import { StoreError } from "./ObjectStore.js";
import { objectKey, relativeKey, type StoreLocation } from "../fs/StoreUrl.js";

export interface S3StoreOptions {
  /** Where AWS_* settings are read from. Default: process.env. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** A connection must open within this. Default 10 s. */
  readonly connectTimeoutMs?: number;
  /** A request whose socket stays silent this long fails (a stalled store). Default 60 s. */
  readonly idleTimeoutMs?: number;
  /** Attempts per request, the SDK's own retries of 5xx and throttling included. Default 3. */
  readonly maxAttempts?: number;
  /** Objects larger than this go up in parts of this size. Default 8 MiB. */
  readonly partSize?: number;
}

/** The SDK's custom endpoint settings (configurable endpoints), most specific first. */
export const customEndpoint = (env: Readonly<Record<string, string | undefined>>): string | undefined =>
  env.AWS_ENDPOINT_URL_S3?.trim() || env.AWS_ENDPOINT_URL?.trim() || undefined;

const statusOf = (error: unknown): number | undefined => (error as { $metadata?: { httpStatusCode?: number } })?.$metadata?.httpStatusCode;
const nameOf = (error: unknown): string => String((error as { name?: string; Code?: string })?.Code ?? (error as { name?: string })?.name ?? "Error");

const refusedNames = new Set([
  "AccessDenied",
  "InvalidAccessKeyId",
  "SignatureDoesNotMatch",
  "NoSuchBucket",
  "AllAccessDisabled",
  "InvalidBucketName",
  "CredentialsProviderError",
  "ExpiredToken",
  "InvalidToken",
]);

/**
 * A store error a person can act on. The SDK's own message is kept short and scrubbed of
 * the secret key (no S3 answer carries it; checked all the same).
 */
const toStoreError = (error: unknown, what: string, secrets: readonly string[]): StoreError => {
  if (error instanceof StoreError) return error;
  const status = statusOf(error);
  const name = nameOf(error);
  let detail = String((error as Error)?.message ?? error).split("\n")[0]!.slice(0, 200);
  for (const s of secrets) if (s.length >= 4) detail = detail.split(s).join("<redacted>");
  const code = `${name}${status ? ` (HTTP ${status})` : ""}`;
  if (status === 412 || name === "PreconditionFailed") return new StoreError("conflict", `${what}: the object already exists (${code})`);
  if (refusedNames.has(name) || status === 401 || status === 403) {
    const hint = name === "NoSuchBucket" ? "create the bucket, or check the URL" : "check the store credentials (AWS_ACCESS_KEY_ID, AWS_PROFILE...) and their permissions";
    return new StoreError("refused", `${what}: ${code}: ${detail}; ${hint}`);
  }
  if (/region is missing/i.test(detail)) return new StoreError("refused", `${what}: no region: set AWS_REGION (or a profile's region)`);
  return new StoreError("transient", `${what}: ${code}: ${detail}`);
};

const unquote = (etag: string | undefined): string | undefined => etag?.replace(/^W\//, "").replace(/^"|"$/g, "");

/** Opens the store at `location` (no request is made until one is needed). */
export const openS3Store = async (location: StoreLocation, options: S3StoreOptions = {}): Promise<ObjectStore> => {
  const env = options.env ?? process.env;
  // The SDK warns on stderr that later versions will need Node 22; its documented switch
  // turns that off, so the user reads omnibatch's words only.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= "true";
  const sdk = await import("@aws-sdk/client-s3");
  const { Upload } = await import("@aws-sdk/lib-storage");
  const endpoint = customEndpoint(env);
  const accessKeyId = env.AWS_ACCESS_KEY_ID?.trim();
  const secretAccessKey = env.AWS_SECRET_ACCESS_KEY?.trim();
  const sessionToken = env.AWS_SESSION_TOKEN?.trim();
  const secrets = [secretAccessKey, sessionToken].filter((s): s is string => !!s);
  const region = env.AWS_REGION?.trim() || env.AWS_DEFAULT_REGION?.trim() || (endpoint ? "auto" : undefined);
  const partSize = Math.max(5 * 1024 * 1024, options.partSize ?? 8 * 1024 * 1024);
  const silent = { trace() {}, debug() {}, info() {}, warn() {}, error() {} };
  const client = new sdk.S3Client({
    ...(region ? { region } : {}),
    ...(endpoint ? { endpoint, forcePathStyle: true } : {}),
    ...(env.AWS_PROFILE?.trim() ? { profile: env.AWS_PROFILE.trim() } : {}),
    ...(accessKeyId && secretAccessKey ? { credentials: { accessKeyId, secretAccessKey, ...(sessionToken ? { sessionToken } : {}) } } : {}),
    // The SDK's default checksums (CRC32 trailers on every upload, since 2025) are refused
    // by several S3-compatible stores; send and check them only where an operation needs them.
    requestChecksumCalculation: "WHEN_REQUIRED",
    responseChecksumValidation: "WHEN_REQUIRED",
    maxAttempts: options.maxAttempts ?? 3,
    requestHandler: { connectionTimeout: options.connectTimeoutMs ?? 10_000, socketTimeout: options.idleTimeoutMs ?? 60_000 },
    logger: silent,
  });
  const counts: StoreCounts = { list: 0, head: 0, put: 0, get: 0, delete: 0 };
  const Bucket = location.bucket;
  // Refuses (UnsafeOutputPath) a path that would leave the prefix, before any request is made.
  const keyOf = (rel: string) => objectKey(location, rel);
  const fail = (what: string) => (error: unknown): never => {
    throw toStoreError(error, what, secrets);
  };

  const list = async (): Promise<Map<string, StoredObject>> => {
    const found = new Map<string, StoredObject>();
    let token: string | undefined;
    // Bounded: a store that keeps answering "truncated" with the same token is not followed forever.
    for (let page = 0; page < 1_000_000; page++) {
      counts.list++;
      const answer = await client
        .send(
          new sdk.ListObjectsV2Command({
            Bucket,
            ...(location.prefix ? { Prefix: `${location.prefix}/` } : {}),
            MaxKeys: 1000,
            ...(token ? { ContinuationToken: token } : {}),
          }),
        )
        .catch(fail(`listing ${location.url}`));
      for (const o of answer.Contents ?? []) {
        const rel = o.Key === undefined ? undefined : relativeKey(location, o.Key);
        if (rel === undefined || o.Size === undefined) continue;
        const etag = unquote(o.ETag);
        found.set(rel, { key: rel, size: o.Size, ...(etag ? { etag } : {}) });
      }
      const next = answer.IsTruncated ? answer.NextContinuationToken : undefined;
      if (!next || next === token) break;
      token = next;
    }
    return found;
  };

  const head = async (rel: string): Promise<StoredObject | undefined> => {
    counts.head++;
    const Key = keyOf(rel);
    try {
      const answer = await client.send(new sdk.HeadObjectCommand({ Bucket, Key }));
      const etag = unquote(answer.ETag);
      return { key: rel, size: answer.ContentLength ?? 0, ...(etag ? { etag } : {}) };
    } catch (error) {
      if (statusOf(error) === 404 || nameOf(error) === "NotFound" || nameOf(error) === "NoSuchKey") return undefined;
      return fail(`checking ${location.url}/${rel}`)(error);
    }
  };

  const put = async (rel: string, body: Readable, opts: PutOptions = {}): Promise<PutAnswer> => {
    counts.put++;
    const Key = keyOf(rel);
    const upload = new Upload({
      client,
      params: {
        Bucket,
        Key,
        Body: body,
        ...(opts.contentType ? { ContentType: opts.contentType } : {}),
        ...(opts.createOnly ? { IfNoneMatch: "*" } : {}),
        ...(opts.replacing ? { IfMatch: `"${opts.replacing}"` } : {}),
      },
      partSize,
      queueSize: 2,
      leavePartsOnError: false,
    });
    const abort = () => void upload.abort().catch(() => undefined);
    opts.signal?.addEventListener("abort", abort, { once: true });
    try {
      const answer = await upload.done();
      const etag = unquote((answer as { ETag?: string }).ETag);
      const multipart = etag !== undefined && /-\d+$/.test(etag);
      return { ...(etag ? { etag } : {}), multipart, ...(multipart ? { partSize } : {}) };
    } catch (error) {
      body.destroy();
      return fail(`writing ${location.url}/${rel}`)(error);
    } finally {
      opts.signal?.removeEventListener("abort", abort);
    }
  };

  const get = async (rel: string, signal?: AbortSignal, range?: { readonly start: number; readonly end: number }) => {
    counts.get++;
    const Key = keyOf(rel);
    try {
      const answer = await client.send(
        new sdk.GetObjectCommand({ Bucket, Key, ...(range ? { Range: `bytes=${range.start}-${range.end}` } : {}) }),
        signal ? { abortSignal: signal } : {},
      );
      const total = /\/(\d+)\s*$/.exec(answer.ContentRange ?? "")?.[1];
      return {
        body: answer.Body as Readable,
        ...(answer.ContentLength !== undefined ? { size: answer.ContentLength } : {}),
        ...(total !== undefined ? { total: Number(total) } : {}),
      };
    } catch (error) {
      // 416: the object is shorter than the range asked for: not the object the caller knows.
      if (statusOf(error) === 404 || nameOf(error) === "NoSuchKey" || (range && statusOf(error) === 416)) return undefined;
      return fail(`reading ${location.url}/${rel}`)(error);
    }
  };

  const remove = async (rel: string) => {
    counts.delete++;
    const Key = keyOf(rel);
    await client.send(new sdk.DeleteObjectCommand({ Bucket, Key })).catch(fail(`removing ${location.url}/${rel}`));
  };

  const copy = async (from: StoreLocation, rel: string, to: string) => {
    counts.copy = (counts.copy ?? 0) + 1;
    const source = objectKey(from, rel);
    const Key = keyOf(to);
    // CopySource is `bucket/key`, each key segment URL-encoded (the SDK sends it as a header).
    const CopySource = `${from.bucket}/${source.split("/").map(encodeURIComponent).join("/")}`;
    await client.send(new sdk.CopyObjectCommand({ Bucket, Key, CopySource })).catch(fail(`copying ${from.url}/${rel} to ${location.url}/${to}`));
  };

  return { location, list, head, put, get, remove, copy, counts, close: () => client.destroy() };
};
