// The settled-rerun fast path: a plain `run` of a manifest whose lockfile has a settled
// stamp (src/state/SettledStamp.ts, kept in the cache folder: settledCache.ts) checks, before expanding anything and holding the run
// lock, that everything the stamp was made from is as it was: the tool, the manifest's
// bytes, every input file it lists (hashed again), the run's options, the lockfile's task
// lines (their digest; no journal beside them), the reports' source and day, every record
// downloaded and every result file present with its recorded size, and the outputs
// folder's links (the start check, over the records' folders). On a match it tells the
// events and summary that run told (times renewed) and sends, writes and plans nothing.
// Anything else: undefined, having sent and written nothing, and the caller takes the
// full path (runLoadedManifest) in the same process.

import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { readFile } from "node:fs/promises";
import { basename, dirname, join, resolve, sep } from "node:path";
import { Effect, Either } from "effect";
import { OmniClient } from "../api/OmniClient.js";
import type { RunEvent, RunSummary } from "../engine/RunEvent.js";
import { lockfilePathFor } from "../manifest/lockfilePath.js";
import { readRegularFileSync } from "../manifest/readRegularFile.js";
import { REPORT_FILES, REPORT_SOURCE_FILE } from "../report/reportFiles.js";
import { journalPathOf } from "../state/LockJournal.js";
import { LOCKFILE_VERSION } from "../state/LockFile.js";
import { acquireRunLock } from "../state/RunLock.js";
import { ABSENT, safeRelPath, stampMismatch, toolOf, type SettledStamp } from "../state/SettledStamp.js";
import { cacheDirOf, readSettledStamp, settledStampFile } from "../state/settledCache.js";
import { decodeTaskLine, type TaskLine } from "../state/TaskLine.js";
import { isStoreUrl } from "../fs/StoreUrl.js";
import { startChecks } from "./startChecks.js";
import { serviceIdentity } from "./serviceCheck.js";

export interface SettledRunOptions {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly baseUrl?: string;
  /** The run's choices besides the service, as runLoadedManifest's `settle.options` gets them (the outputs folder is the stamp's). */
  readonly options: Readonly<Record<string, string>>;
  readonly onEvent?: (event: RunEvent) => void;
  /** Why the fast path was not taken (for a debug line), when it was not. */
  readonly onFallback?: (reason: string) => void;
}

const DAY_MS = 86_400_000;


/** The package's version: the nearest omnibatch package.json above this module (dist/chunks, dist/run or src/run). */
export const packageVersion = (): string => {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 5; i++) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { name?: string; version?: string };
      if (pkg.name === "omnibatch" && typeof pkg.version === "string") return pkg.version;
    } catch {
      // not here
    }
    dir = dirname(dir);
  }
  return "unknown";
};
/**
 * The running code itself, so a stamp made by other code never matches even when nobody
 * bumped the version or SETTLED_PLAN_VERSION: the bundled CLI's chunk names (esbuild names
 * each by its content's hash) and its entry's bytes; otherwise (the library in dist/, or
 * src/ under tsx) every module file of the tree this one belongs to. About 3 MB read at
 * most, once per process.
 */
let fingerprint: string | undefined;
export const codeFingerprint = (): string => {
  if (fingerprint !== undefined) return fingerprint;
  const here = dirname(fileURLToPath(import.meta.url));
  const hash = createHash("sha256");
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (/\.(m|c)?(j|t)s$/.test(entry.name) && !entry.name.endsWith(".d.ts")) hash.update(`${path.slice(here.length)}\0`).update(readFileSync(path));
    }
  };
  try {
    if (basename(here) === "chunks") {
      hash.update(readdirSync(here).sort().join("\n"));
      hash.update(readFileSync(join(dirname(here), "cli", "bin.js")));
    } else walk(dirname(here));
    fingerprint = hash.digest("hex").slice(0, 16);
  } catch {
    // Unreadable: a value no stamp holds, so nothing matches.
    fingerprint = `unread-${process.pid}-${Date.now()}`;
  }
  return fingerprint;
};

/** The version a stamp names: the package's and its code's (codeFingerprint). */
export const runningVersion = (): string => `${packageVersion()}+code.${codeFingerprint()}`;

/** Stats between two turns of the event loop. */
const STATS_PER_TURN = 4096;
/** Input files are read with the larger of loadManifest's bounds (data files). */
const MAX_INPUT_BYTES = 256 * 1024 * 1024;

const sha256 = (data: string | Uint8Array): string => createHash("sha256").update(data).digest("hex");

/** The digest of a lockfile's task lines (its bytes after the header line), as a stamp binds them. */
const linesDigestOf = (bytes: Buffer): string => {
  const end = bytes.indexOf(10);
  return sha256(end < 0 ? Buffer.alloc(0) : bytes.subarray(end + 1));
};

/**
 * The digest of the task lines a lockfile holds on disk now, for a stamp: undefined when a
 * journal lies beside it (the file is not all there is) or it cannot be read. Called by a
 * run that holds the lock and changed nothing.
 */
export const lockLinesDigest = (lockfilePath: string): string | undefined => {
  if (existsSync(journalPathOf(lockfilePath))) return undefined;
  try {
    return linesDigestOf(readFileSync(lockfilePath));
  } catch {
    return undefined;
  }
};

/** An input file's sha256 as a stamp records it, or ABSENT when it is not a readable regular file. */
export const inputDigest = (path: string): string => {
  const read = readRegularFileSync(path, MAX_INPUT_BYTES);
  return read.ok ? sha256(read.bytes) : ABSENT;
};

/**
 * Every file as recorded: a regular file of the recorded size (the Downloader's check of a
 * downloaded result). Synchronous stats, a batch between two turns of the event loop (the
 * run lock's heartbeat beats between them): on this 2-core machine 100,000 awaited stats
 * cost 2.0 to 2.6 s of CPU and 2.7 to 3.7 s of wall, 100,000 synchronous ones 0.5 s and
 * 0.9 to 1.1 s (load 10; the thread pool's work is not free when the cores are busy).
 */
const filesPresent = async (files: readonly (readonly [string, number])[]): Promise<boolean> => {
  for (let i = 0; i < files.length; i++) {
    if (i > 0 && i % STATS_PER_TURN === 0) await new Promise<void>((done) => setImmediate(done));
    const [path, size] = files[i]!;
    let s;
    try {
      s = statSync(path, { throwIfNoEntry: false });
    } catch {
      return false;
    }
    if (s === undefined || !s.isFile() || s.size !== size) return false;
  }
  return true;
};

/**
 * The records' result files and folders when every task line decodes to a downloaded
 * record whose results have safe relative paths and sizes; otherwise why not.
 */
export const settledFiles = (name: string, text: string, outputsDir: string): { files: [string, number][]; dirs: string[] } | string => {
  const files: [string, number][] = [];
  const dirs: string[] = [];
  let start = text.indexOf("\n") + 1;
  while (start > 0 && start < text.length) {
    const end = text.indexOf("\n", start);
    const line = end < 0 ? text.slice(start) : text.slice(start, end);
    start = end < 0 ? text.length : end + 1;
    if (line.length === 0) continue;
    let task;
    try {
      task = decodeTaskLine(name, JSON.parse(line) as TaskLine, LOCKFILE_VERSION).task;
    } catch {
      return "a task line does not decode";
    }
    if (task.state !== "downloaded") return "a task is not downloaded";
    if (typeof task.dir !== "string" || !safeRelPath(task.dir)) return "a task's folder is not a plain relative path";
    dirs.push(task.dir);
    for (const o of task.outputs) {
      if (o.deleted_at !== undefined) return "a result was deleted at the service";
      if (o.path === undefined) continue;
      if (typeof o.path !== "string" || !safeRelPath(o.path) || typeof o.size !== "number") return "a result has no plain path or size";
      files.push([sep === "/" ? `${outputsDir}/${o.path}` : join(outputsDir, ...o.path.split("/")), o.size]);
    }
  }
  return { files, dirs };
};

/** The summary a settled lockfile's stamp tells, or undefined (having sent and written nothing) when anything differs. */
export const runSettled = async (manifestFile: string, options: SettledRunOptions): Promise<RunSummary | undefined> => {
  const began = Date.now();
  const fallback = (reason: string): undefined => {
    options.onFallback?.(reason);
    return undefined;
  };
  const file = resolve(manifestFile);
  const lockfilePath = lockfilePathFor(file);
  // The stamp first (a small file in the cache folder, no lock): most runs without one stop here.
  const stamp: SettledStamp | undefined = readSettledStamp(settledStampFile(lockfilePath, cacheDirOf(options.env)));
  if (!stamp) return fallback("no settled stamp");
  const config = OmniClient.configFromEnv(options.env, options.baseUrl ? { baseUrl: options.baseUrl } : {});
  if (Either.isLeft(config)) return fallback("the service is not configured");
  const service = serviceIdentity(config.right.baseUrl);

  const checked = Effect.scoped(
    Effect.gen(function* () {
      // Held while looking, as a run holds it: no run changes the lockfile or the results meanwhile.
      const lock = yield* Effect.either(acquireRunLock(lockfilePath));
      if (Either.isLeft(lock)) return fallback("the lockfile is busy");
      return yield* Effect.promise(async (): Promise<RunSummary | undefined> => {
        const bytes = await readFile(lockfilePath).catch(() => undefined);
        if (bytes === undefined) return fallback("no lockfile");
        // The lines' digest over the bytes as they are (no second copy of 39 MB as UTF-8).
        const linesDigest = linesDigestOf(bytes);
        const text = bytes.toString("utf8");
        const firstEnd = text.indexOf("\n");
        let header: { lockfile_version?: unknown; name?: unknown; service?: unknown };
        try {
          header = JSON.parse(firstEnd < 0 ? text : text.slice(0, firstEnd)) as typeof header;
        } catch {
          return fallback("the header is not JSON");
        }
        if (header.lockfile_version !== LOCKFILE_VERSION || typeof header.name !== "string") return fallback("an older lockfile version");
        const outputsDir = stamp.options["outputs"];
        if (outputsDir === undefined || isStoreUrl(outputsDir)) return fallback("outputs in an object store");
        const manifestBytes = readRegularFileSync(file, MAX_INPUT_BYTES);
        if (!manifestBytes.ok) return fallback("the manifest cannot be read");
        const now = Date.now();
        const inputs = new Map<string, string>();
        for (const [path] of stamp.inputs) inputs.set(path, inputDigest(path));
        const source = await readFile(join(outputsDir, REPORT_SOURCE_FILE), "utf8").then(
          (t) => t.trim(),
          () => undefined,
        );
        const mismatch = stampMismatch(stamp, {
          // Only once a stamp is there to compare with (the code's fingerprint reads files).
          tool: toolOf(runningVersion()),
          manifest: [file, sha256(manifestBytes.bytes)],
          inputs,
          options: { ...options.options, outputs: outputsDir, service },
          lines: linesDigest,
          day: Math.floor(now / DAY_MS),
          reports: source,
          reportFilesPresent: REPORT_FILES.every((name) => existsSync(join(outputsDir, name))),
          journal: existsSync(journalPathOf(lockfilePath)),
          service: typeof header.service === "string" ? header.service : undefined,
        });
        if (mismatch !== undefined) return fallback(mismatch);
        const records = settledFiles(header.name, text, outputsDir);
        if (typeof records === "string") return fallback(records);
        if (!(await filesPresent(records.files))) return fallback("a result file is missing or of another size");
        // The start check a run makes (links out of the outputs folder, writable folders).
        const checks = await Effect.runPromise(Effect.either(startChecks(outputsDir, { inside: [], onTheWay: records.dirs }, lockfilePath)));
        if (Either.isLeft(checks)) return fallback("the start check found a problem");
        const at = new Date().toISOString();
        for (const event of stamp.replay.events) options.onEvent?.({ ...event, at } as unknown as RunEvent);
        const summary = { ...stamp.replay.summary, elapsedMs: Date.now() - began } as unknown as RunSummary;
        return "at" in summary ? ({ ...summary, at } as RunSummary) : summary;
      });
    }),
  );
  const summary = await Effect.runPromise(checked);
  if (summary) options.onEvent?.({ type: "summary", ...summary, at: new Date().toISOString() } as RunEvent);
  return summary;
};
