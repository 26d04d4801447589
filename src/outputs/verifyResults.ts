// `omnibatch verify`: every result the lockfile records as downloaded, hashed and compared
// with its record (size and sha256), in the outputs folder or the outputs store. A run
// checks only sizes at its start (a stat per file, no hashing: cheap for 100,000 files)
// and hashes what it downloads; this is the full check, asked for. The comparison is pure
// (`differenceOf`); reading and hashing the files is the shell around it.

import pLimit from "p-limit";
import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { realpath } from "node:fs/promises";
import { sep } from "node:path";
import type { Readable } from "node:stream";
import type { LockFile, LockOutput } from "../state/LockFile.js";
import type { StoreSink } from "./StoreSink.js";
import { fileNameFor } from "../manifest/fileNames.js";
import { folderSink } from "./FolderSink.js";

/** A recorded result to check: its task, and the record of its file. */
export interface RecordedResult {
  readonly id: string;
  readonly job: string;
  readonly output: LockOutput & { readonly path: string; readonly size: number; readonly sha256: string };
}

/** What was found where a record says a result is: absent, or its size and sha256. */
export type Found = { readonly size: number; readonly sha256: string } | undefined;

export interface ResultDifference {
  readonly id: string;
  readonly job: string;
  readonly path: string;
  readonly expected: { readonly size: number; readonly sha256: string };
  /** Undefined: the file (or object) is not there. */
  readonly found: Found;
  /** `missing`, `size` (other size) or `sha256` (same size, other content: zeros, an edit, or an edited record). */
  readonly what: "missing" | "size" | "sha256";
}

/** The results the lockfile records as held: a path, a size and a sha256, on a task not pruned. */
export const recordedResults = (lock: LockFile): RecordedResult[] => {
  const out: RecordedResult[] = [];
  for (const [id, task] of Object.entries(lock.tasks)) {
    if (task.pruned_at !== undefined) continue;
    for (const o of task.outputs) {
      if (o.path === undefined || o.size === undefined || o.sha256 === undefined) continue;
      out.push({ id, job: task.job, output: o as RecordedResult["output"] });
    }
  }
  return out.sort((a, b) => (a.output.path < b.output.path ? -1 : a.output.path > b.output.path ? 1 : 0));
};

/** How a found file differs from its record, or undefined when it is the recorded result. Pure. */
export const differenceOf = (expected: { readonly size: number; readonly sha256: string }, found: Found): ResultDifference["what"] | undefined =>
  found === undefined ? "missing" : found.size !== expected.size ? "size" : found.sha256 !== expected.sha256.toLowerCase() ? "sha256" : undefined;

/** One line per difference: task, file, expected against found. */
export const describeDifference = (d: ResultDifference): string =>
  `${d.id}: ${d.path}: ${
    d.found === undefined
      ? `missing (expected ${d.expected.size} bytes, sha256 ${d.expected.sha256})`
      : `expected ${d.expected.size} bytes, sha256 ${d.expected.sha256}; found ${d.found.size} bytes, sha256 ${d.found.sha256}`
  }`;

/**
 * The base name a task's files were written under (the job's `name` template), read back
 * from a recorded path (manifest/fileNames.ts `fileNameFor` inverted): so a result fetched again
 * lands where it was. Undefined for the default names (`image-1.png`).
 */
export const nameFromRecorded = (o: LockOutput): string | undefined => {
  if (o.path === undefined) return undefined;
  const file = o.path.slice(o.path.lastIndexOf("/") + 1);
  const dot = file.lastIndexOf(".");
  const ext = dot < 0 ? "" : file.slice(dot + 1);
  if (fileNameFor(o, ext) === file) return undefined;
  const suffix = fileNameFor(o, ext, "");
  return file.endsWith(suffix) ? file.slice(0, file.length - suffix.length) : undefined;
};

export const hashStream = (body: Readable): Promise<{ size: number; sha256: string }> =>
  new Promise((resolve, reject) => {
    const hash = createHash("sha256");
    let size = 0;
    body
      .on("data", (c: Buffer) => {
        size += c.length;
        hash.update(c);
      })
      .on("end", () => resolve({ size, sha256: hash.digest("hex") }))
      .on("error", reject);
  });

/** A local file's sha256, read as a stream; rejects when it cannot be read. */
export const fileSha256 = async (file: string): Promise<string> => (await hashStream(createReadStream(file))).sha256;

/** Files hashed at once. */
const WIDTH = 4;

const checkAll = async (results: readonly RecordedResult[], look: (r: RecordedResult) => Promise<Found>): Promise<ResultDifference[]> => {
  const limit = pLimit(WIDTH);
  const out = await Promise.all(
    results.map((r) =>
      limit(async (): Promise<ResultDifference | undefined> => {
        const expected = { size: r.output.size, sha256: r.output.sha256 };
        const found = await look(r);
        const what = differenceOf(expected, found);
        return what ? { id: r.id, job: r.job, path: r.output.path, expected, found, what } : undefined;
      }),
    ),
  );
  return out.filter((d): d is ResultDifference => d !== undefined);
};

/**
 * Every recorded result in the outputs folder, hashed. A path that would lead out of the
 * folder (or through a symbolic link out of it) counts as missing: it is not read.
 */
export const verifyFolder = (results: readonly RecordedResult[], outputsDir: string): Promise<ResultDifference[]> => {
  const sink = folderSink(outputsDir);
  let root: string | undefined;
  return checkAll(results, async (r) => {
    try {
      // A path from the lockfile is untrusted: inside the folder by its name (absolutePath
      // refuses `..`) and by where it really leads (no link out of the folder).
      const path = sink.absolutePath(r.output.path);
      root ??= await realpath(outputsDir);
      const real = await realpath(path);
      if (!real.startsWith(root + sep)) return undefined;
      return await hashStream(createReadStream(real));
    } catch {
      return undefined;
    }
  });
};

/** Every recorded result in the outputs store (the listing, then each object read and hashed). */
export const verifyStore = async (results: readonly RecordedResult[], sink: StoreSink): Promise<ResultDifference[]> => {
  const listed = await sink.listing();
  return checkAll(results, async (r) => {
    if (!listed.has(r.output.path)) return undefined;
    const got = await sink.store.get(r.output.path);
    return got ? hashStream(got.body) : undefined;
  });
};
