// A real S3-compatible server for tests: s3rver (file-backed, speaking the S3 REST API)
// on 127.0.0.1, port 0, in a temp folder, with one bucket and a key pair made for this
// test (s3rver does not check version-4 signatures: the hostile store tests refusals; a
// test can still look for this secret in its outputs).
//
// test-runner: AWS SDK process. The AWS SDK, on its first request, sets an environment variable
// (AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED) and a global (awslambda), and this file
// patches node:crypto's DES: a test file that uses this server shares a process only with
// other such files, which puts those two back after each file (test/classify.mjs, test/batch.mjs).

import { createRequire } from "node:module";
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

const require = createRequire(import.meta.url);

/**
 * s3rver makes its list continuation tokens with DES, which OpenSSL 3 (Node 18+) refuses,
 * so every listing past 1,000 keys fails with a 500. The tokens only need to round-trip
 * within the server: for "des" alone, this process uses an identity cipher.
 */
const allowS3rverTokens = () => {
  const crypto = require("node:crypto") as Record<string, unknown> & { __s3rverDes?: true };
  if (crypto.__s3rverDes) return;
  const identity = { update: (data: string | Buffer, enc?: BufferEncoding) => (typeof data === "string" ? Buffer.from(data, enc ?? "utf8") : data), final: () => Buffer.alloc(0) };
  for (const name of ["createCipheriv", "createDecipheriv"] as const) {
    const original = crypto[name] as (...args: unknown[]) => unknown;
    crypto[name] = (algorithm: unknown, ...rest: unknown[]) => (algorithm === "des" ? identity : original(algorithm, ...rest));
  }
  crypto.__s3rverDes = true;
};

export interface S3rverHandle {
  readonly endpoint: string;
  readonly bucket: string;
  readonly directory: string;
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  /** The AWS_* settings a product run needs to reach this server. */
  readonly env: Record<string, string>;
  /** Requests seen, by method and whether a list (GET on the bucket with list-type); `copyFrom`: a server-side copy's source (x-amz-copy-source). */
  readonly seen: { method: string; url: string; copyFrom?: string }[];
  readonly close: () => Promise<void>;
}

export const startS3rver = async (bucket = "results"): Promise<S3rverHandle> => {
  allowS3rverTokens();
  const S3rver = require("s3rver") as new (options: Record<string, unknown>) => {
    run(): Promise<{ address: string; port: number }>;
    close(): Promise<void>;
    use(fn: (ctx: { method: string; url: string; get(header: string): string }, next: () => Promise<void>) => Promise<void>): void;
    middleware: unknown[];
  };
  const { DUMMY_ACCOUNT } = require("s3rver/lib/models/account") as { DUMMY_ACCOUNT: { createKeyPair(id: string, secret: string): void } };
  const accessKeyId = `AKTEST${randomBytes(6).toString("hex").toUpperCase()}`;
  const secretAccessKey = `secret-${randomBytes(18).toString("hex")}`;
  DUMMY_ACCOUNT.createKeyPair(accessKeyId, secretAccessKey);
  const directory = await mkdtemp(join(tmpdir(), "omnibatch-s3rver-"));
  const server = new S3rver({ address: "127.0.0.1", port: 0, silent: process.env.S3RVER_LOUD !== "1", directory, configureBuckets: [{ name: bucket }], vhostBuckets: false });
  const seen: { method: string; url: string; copyFrom?: string }[] = [];
  // Counted before s3rver's own handlers (Koa middleware runs in order: put ours first).
  server.use(async (ctx, next) => {
    const copyFrom = ctx.get("x-amz-copy-source");
    seen.push({ method: ctx.method, url: ctx.url, ...(copyFrom ? { copyFrom } : {}) });
    await next();
  });
  server.middleware.unshift(server.middleware.pop());
  const { port } = await server.run();
  const endpoint = `http://127.0.0.1:${port}`;
  return {
    endpoint,
    bucket,
    directory,
    accessKeyId,
    secretAccessKey,
    env: { AWS_ENDPOINT_URL_S3: endpoint, AWS_ACCESS_KEY_ID: accessKeyId, AWS_SECRET_ACCESS_KEY: secretAccessKey, AWS_REGION: "us-east-1" },
    seen,
    close: async () => {
      await server.close();
      await rm(directory, { recursive: true, force: true });
    },
  };
};

/** Requests that listed the bucket (ListObjectsV2). */
export const listRequests = (h: S3rverHandle): number => h.seen.filter((r) => r.method === "GET" && /[?&]list-type=2/.test(r.url)).length;
