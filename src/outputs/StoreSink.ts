// Results written to an object store. Each body streams from the service into the store
// (in parts when large) while its sha256 is computed; the store's answer is checked
// against what was sent before the result counts. What the store holds is learnt by
// listing the prefix once (one request per 1,000 keys), so a new runner fetches from the
// service only what the store lacks. An object with other content is never overwritten
// silently: a new key is written only if absent (If-None-Match where the store honours
// it, a HEAD first everywhere), and an existing one is replaced only by the very content
// the lockfile recorded for it (a restore) or by the result it is a cut-short copy of.

import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { mkdtemp, open, rm, unlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { writeFully } from "../fs/durable.js";
import { insideOrThrow } from "../fs/insidePath.js";
import { Meter, TransferProblem, type ResultSink, type ResultSource, type WrittenResult } from "./ResultSink.js";
import { storedCopy } from "./resultState.js";
import type { LockOutput } from "../state/LockFile.js";
import { StoreError, type ObjectStore, type PutAnswer, type StoredObject } from "../store/ObjectStore.js";

export interface StoreSink extends ResultSink {
  readonly store: ObjectStore;
  /** What the prefix holds (listed once, then kept up to date by this sink's writes). */
  readonly listing: () => Promise<Map<string, StoredObject>>;
  /** An object written at `rel` by other means than this sink (a server-side copy): its listing knows it from now on. */
  readonly noted: (rel: string, object: StoredObject) => void;
  /** Writes a small local file (a report) to `rel` unless the store already holds the same bytes. */
  readonly putFile: (rel: string, file: string, contentType?: string) => Promise<boolean>;
  /** Removes the local staging folder. */
  readonly close: () => Promise<void>;
}

const plainMd5 = /^[0-9a-f]{32}$/;
const composite = /^[0-9a-f]{32}-\d+$/;

const mdOf = (written: ReturnType<Meter["end"]>, answer: PutAnswer): "same" | "differs" | "unknown" => {
  const etag = answer.etag?.toLowerCase();
  if (etag === undefined) return "unknown";
  if (plainMd5.test(etag)) return etag === written.md5 ? "same" : "differs";
  if (composite.test(etag) && written.compositeEtag !== undefined) return etag === written.compositeEtag ? "same" : "differs";
  return "unknown";
};

export const storeSink = (store: ObjectStore, options: { readonly partSize?: number } = {}): StoreSink => {
  const partSize = Math.max(5 * 1024 * 1024, options.partSize ?? 8 * 1024 * 1024);
  let listed: Promise<Map<string, StoredObject>> | undefined;
  const listing = () => {
    listed ??= store.list().catch((error) => {
      listed = undefined; // a failed listing is tried again by the next caller
      throw error;
    });
    return listed;
  };
  const remember = (rel: string, object: StoredObject) => {
    void listed?.then((m) => m.set(rel, object), () => undefined);
  };
  let staging: Promise<string> | undefined;
  const stageDir = () => (staging ??= mkdtemp(join(tmpdir(), "omnibatch-store-")));
  const url = (rel: string) => `${store.location.url}/${rel}`;

  /** Checks a finished upload against what was sent; a mismatch is removed and the attempt fails. */
  /** Checks the store's answer against what was sent; resolves with the object's ETag, when the store gave one. */
  const confirm = async (rel: string, written: ReturnType<Meter["end"]>, answer: PutAnswer): Promise<string | undefined> => {
    let verdict = mdOf(written, answer);
    let etag = answer.etag;
    if (verdict === "unknown") {
      const seen = await store.head(rel);
      verdict = seen?.size === written.size ? "same" : "differs";
      etag ??= seen?.etag;
    }
    if (verdict === "differs") {
      await store.remove(rel).catch(() => undefined);
      throw new TransferProblem(`${url(rel)}: the store's checksum of the upload does not match what was sent; removed, trying again`, false);
    }
    remember(rel, { key: rel, size: written.size, ...(etag ? { etag } : {}) });
    return etag;
  };

  /** Same bytes as `written`? By the ETag when it is an MD5, else by reading the object. */
  const sameContent = async (existing: StoredObject, written: ReturnType<Meter["end"]>): Promise<boolean> => {
    if (existing.size !== written.size) return false;
    const etag = existing.etag?.toLowerCase();
    if (etag && plainMd5.test(etag)) return etag === written.md5;
    // A composite ETag made with our part size says "same" for sure; any other needs the bytes.
    if (etag !== undefined && etag === written.compositeEtag) return true;
    const got = await store.get(existing.key);
    if (!got) return false;
    const hash = createHash("sha256");
    for await (const chunk of got.body) hash.update(chunk as Buffer);
    return hash.digest("hex") === written.sha256;
  };

  /** True when the object's bytes are the first bytes of the staged file (and fewer). */
  const isPrefixOf = async (existing: StoredObject, file: string, size: number): Promise<boolean> => {
    if (existing.size >= size) return false;
    if (existing.size === 0) return true;
    const got = await store.get(existing.key);
    if (!got) return false;
    const theirs = createHash("sha256");
    let n = 0;
    for await (const chunk of got.body) {
      theirs.update(chunk as Buffer);
      n += (chunk as Buffer).byteLength;
    }
    if (n !== existing.size) return false;
    const ours = createHash("sha256");
    for await (const chunk of createReadStream(file, { start: 0, end: existing.size - 1 })) ours.update(chunk as Buffer);
    return theirs.digest("hex") === ours.digest("hex");
  };

  async function* metered(body: Readable, meter: Meter, signal: AbortSignal, done: (w: ReturnType<Meter["end"]>) => void) {
    for await (const chunk of body) {
      if (signal.aborted) throw new Error("interrupted");
      const data = chunk as Buffer;
      meter.take(data);
      yield data;
    }
    done(meter.end());
  }

  const write = async (rel: string, source: ResultSource, signal: AbortSignal): Promise<WrittenResult> => {
    const existing = await store.head(rel);
    if (existing === undefined) {
      const meter = new Meter(source, partSize);
      let written: ReturnType<Meter["end"]> | undefined;
      const body = Readable.from(metered(source.body, meter, signal, (w) => (written = w)));
      let answer: PutAnswer;
      try {
        answer = await store.put(rel, body, { ...(source.contentType ? { contentType: source.contentType } : {}), createOnly: true, signal });
      } catch (error) {
        // The body's own failure (too large, truncated) says more than the store's.
        const cause = body.errored ?? error;
        if (cause instanceof StoreError && cause.kind === "conflict") {
          throw new TransferProblem(`${url(rel)} appeared in the store during the upload; checking it on the next attempt`, false);
        }
        throw cause;
      }
      if (written === undefined) throw new TransferProblem(`${url(rel)}: the upload ended before the whole result was read`, false);
      const etag = await confirm(rel, written, answer);
      return { size: written.size, sha256: written.sha256, ...(etag ? { etag } : {}) };
    }
    // The key is taken: stage the result on local disk (hashing it), then decide.
    const temp = join(await stageDir(), `${createHash("sha256").update(rel).digest("hex").slice(0, 16)}-${process.hrtime.bigint()}.part`);
    try {
      const meter = new Meter(source, partSize);
      const handle = await open(temp, "w");
      try {
        for await (const chunk of source.body) {
          if (signal.aborted) throw new Error("interrupted");
          meter.take(chunk as Buffer);
          await writeFully(handle, chunk as Buffer, temp);
        }
      } finally {
        await handle.close();
      }
      const written = meter.end();
      if (await sameContent(existing, written)) {
        remember(rel, existing);
        return { size: written.size, sha256: written.sha256, ...(existing.etag ? { etag: existing.etag } : {}) };
      }
      // The object differs from the result the lockfile records, and this is that result: put
      // it back. Or it is a strict prefix of this result: an upload of it that a store which
      // is not atomic (s3rver, a file-backed server) kept when a kill cut it short.
      if (source.recorded?.sha256 === written.sha256 || (await isPrefixOf(existing, temp, written.size))) {
        const answer = await store.put(rel, createReadStream(temp), {
          ...(source.contentType ? { contentType: source.contentType } : {}),
          ...(existing.etag ? { replacing: existing.etag } : {}),
          signal,
        });
        const etag = await confirm(rel, written, answer);
        return { size: written.size, sha256: written.sha256, ...(etag ? { etag } : {}) };
      }
      throw new TransferProblem(
        `${url(rel)} already holds other content (${existing.size} bytes) than this result (${written.size} bytes, sha256 ${written.sha256.slice(0, 12)}…): not overwritten; move that object away or use another prefix`,
        true,
      );
    } finally {
      await unlink(temp).catch(() => undefined);
    }
  };

  const holds = async (outputs: readonly LockOutput[]): Promise<boolean> => {
    if (!outputs.some((o) => o.path !== undefined)) return true;
    const objects = await listing();
    // Size and ETag (resultState.ts storedCopy): an object of the right size with other bytes is not the result.
    return outputs.every((o) => o.path === undefined || storedCopy(o, objects.get(o.path)) === "matches");
  };

  const putFile = async (rel: string, file: string, contentType?: string): Promise<boolean> => {
    const hash = createHash("md5");
    let size = 0;
    for await (const chunk of createReadStream(file)) {
      hash.update(chunk as Buffer);
      size += (chunk as Buffer).byteLength;
    }
    const md5 = hash.digest("hex");
    const held = (await listing()).get(rel);
    if (held?.size === size && held.etag?.toLowerCase() === md5) return false;
    // Reports are rewritten on every run: they are ours to replace, results are not.
    const answer = await store.put(rel, createReadStream(file), contentType ? { contentType } : {});
    if (answer.etag && plainMd5.test(answer.etag.toLowerCase()) && answer.etag.toLowerCase() !== md5) {
      throw new StoreError("transient", `${url(rel)}: the store's checksum of the upload does not match what was sent`);
    }
    remember(rel, { key: rel, size, ...(answer.etag ? { etag: answer.etag } : {}) });
    return true;
  };

  return {
    where: store.location.url,
    store,
    listing,
    noted: remember,
    // A task's folder that would climb out of the prefix is refused before anything is fetched.
    prepare: async (dir: string) => void insideOrThrow(dir, store.location.url),
    write,
    holds,
    absolutePath: url,
    putFile,
    close: async () => {
      if (staging) await rm(await staging, { recursive: true, force: true });
      store.close();
    },
  };
};
