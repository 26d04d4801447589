// The effectful shell around the reuse rule (src/plan/reuse.ts, issue 31): which lockfiles
// are looked in, their outputs folders, and whether a source's files are there with their
// recorded bytes. Lockfiles: this manifest's own, every other `*.lock.json` git tracks in
// the repository holding the manifest (an emulated run: the `*.emulate.lock.json` files
// in the manifest's folder instead, which git ignores), and those in the folders the
// manifest names in `reuse_from`. A lockfile that cannot be read or fails its schema is
// skipped with one warning naming it. Files are read only inside the outputs folder each
// lockfile's manifest names (plain relative paths, regular files, no links), or, for
// outputs in an object store, looked up in one listing of the prefix its manifest names
// (size and ETag as recorded: the run reads each object and checks its sha256 before use).
// A source whose files are gone is offered from the service by its task id when its
// lockfile is of this run's service and the service still holds its results (30 days).

import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { closeSync, existsSync, lstatSync, openSync, readdirSync, readFileSync, readSync, realpathSync } from "node:fs";
import { basename, dirname, join, relative, resolve, sep } from "node:path";
import { parse } from "yaml";
import type { LoadedManifest } from "../manifest/LoadedManifest.js";
import type { PlannedTask } from "../manifest/PlannedTask.js";
import { readLockFile } from "../state/readLockFile.js";
import type { LockFile } from "../state/LockFile.js";
import { isStoreUrl } from "../fs/StoreUrl.js";
import { isPlainRelativePath } from "../fs/insidePath.js";
import { indexLockfiles, paidAt, paidResult, reuseFor, type FilesVerdict, type ReuseCandidate, type ReuseDecision, type ReuseLockfile, type ReuseSource, type ServiceHolds } from "../plan/reuse.js";
import { pastRetention, storedCopy } from "../outputs/resultState.js";
import { openStoreReader } from "../store/openStoreReader.js";
import type { StoredObject } from "../store/ObjectStore.js";
import { emulatedPaths } from "./EmulatedRun.js";

export interface ReuseSettings {
  /** The manifest as the run or plan uses it (emulated paths already applied for an emulated one). */
  readonly emulated: boolean;
  /** This run's service identity (serviceCheck.ts); undefined: not known (plan), no task id is used. */
  readonly service?: string;
  /** `--no-reuse`. */
  readonly off?: boolean;
  readonly warn: (message: string) => void;
  /** This manifest's lockfile as the caller already holds it (a run's store): not read again. */
  readonly ownLock?: LockFile;
  /** Now (Unix ms, the caller's Clock): with `service`, a source whose files are gone may be fetched from the service while it holds them. */
  readonly now?: number;
  /** Where AWS_* settings for sources in an object store are read from. Default: process.env. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Lockfiles of other manifests of this process's run (`run a.yaml b.yaml`, runManifests.ts), with their outputs folders: looked in too. */
  readonly also?: ReuseAlso;
}

/** Other manifests' lockfiles (as their runs use them) and outputs folders. */
export type ReuseAlso = readonly { readonly lockfilePath: string; readonly outputsDir: string }[];

/** What the plan and the run ask: the decision per planned task, and the sources chosen (with their tasks), for the copy. */
export interface Reuser {
  readonly reusable: (task: PlannedTask) => ReuseDecision;
  /** Task id -> the task and its source, for every task `reusable` said is reused. */
  readonly chosen: ReadonlyMap<string, { readonly task: PlannedTask; readonly source: ReuseSource }>;
}

interface RawManifest {
  readonly reuse?: unknown;
  readonly reuse_from?: unknown;
  readonly jobs?: Record<string, { readonly reuse?: unknown } | null>;
}

const rawManifest = (file: string): RawManifest | undefined => {
  try {
    const raw = parse(readFileSync(file, "utf8")) as unknown;
    return raw && typeof raw === "object" ? (raw as RawManifest) : undefined;
  } catch {
    return undefined;
  }
};

/** Tracked lockfiles of the repository holding `dir`, absolute; none when git or a repository is not there. */
const trackedLockfiles = (dir: string): string[] => {
  try {
    const top = execFileSync("git", ["rev-parse", "--show-toplevel"], { cwd: dir, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"], timeout: 10_000 }).trim();
    const out = execFileSync("git", ["ls-files", "-z", "--", "*.lock.json"], { cwd: top, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"], timeout: 10_000, maxBuffer: 64 << 20 });
    return out.split("\0").filter((p) => p !== "" && !p.endsWith(".emulate.lock.json")).map((p) => resolve(top, p));
  } catch {
    return [];
  }
};

/** Lockfiles directly in `dir`: emulated ones for an emulated run, real ones otherwise. */
const lockfilesIn = (dir: string, emulated: boolean): string[] => {
  try {
    return readdirSync(dir)
      .filter((n) => n.endsWith(".lock.json") && n.endsWith(".emulate.lock.json") === emulated)
      .map((n) => join(dir, n));
  } catch {
    return [];
  }
};

/**
 * The outputs folder of another lockfile's manifest: `X.yaml` (or `.yml`) beside
 * `X.lock.json`, its `outputs` (default `outputs/<name>`) relative to it, as the loader
 * resolves it (report/manifestLocations.ts reads it the same way); an emulated lockfile's
 * the emulated folder beside it. Undefined: no manifest beside it, or a store.
 */
const outputsOf = (lockfile: string, emulated: boolean): string | undefined => {
  const stem = lockfile.slice(0, -(emulated ? ".emulate.lock.json" : ".lock.json").length);
  const manifest = [`${stem}.yaml`, `${stem}.yml`].find((f) => existsSync(f));
  if (manifest === undefined) return undefined;
  const raw = rawManifest(manifest) as { name?: unknown; outputs?: unknown } | undefined;
  if (typeof raw?.name !== "string") return undefined;
  const outputs = typeof raw.outputs === "string" ? raw.outputs : `outputs/${raw.name}`;
  const dir = isStoreUrl(outputs) ? outputs.replace(/\/+$/, "") : resolve(dirname(manifest), outputs);
  return emulated ? emulatedPaths({ lockfilePath: lockfile, outputsDir: dir }).outputsDir : dir;
};

const realOrSame = (p: string): string => {
  try {
    return realpathSync(p);
  } catch {
    return p;
  }
};

/** A file's sha256, read in chunks (never whole in memory). */
const sha256OfFile = (file: string): string => {
  const hash = createHash("sha256");
  const chunk = Buffer.allocUnsafe(1 << 20);
  const fd = openSync(file, "r");
  try {
    for (;;) {
      const n = readSync(fd, chunk, 0, chunk.length, null);
      if (n === 0) break;
      hash.update(chunk.subarray(0, n));
    }
  } finally {
    closeSync(fd);
  }
  return hash.digest("hex");
};

/** One listing of each store prefix that holds a source's results; a prefix that cannot be listed: its files are gone (one warning). */
const listStores = async (urls: Iterable<string>, settings: ReuseSettings): Promise<Map<string, ReadonlyMap<string, StoredObject> | undefined>> => {
  const out = new Map<string, ReadonlyMap<string, StoredObject> | undefined>();
  for (const url of urls) {
    if (out.has(url)) continue;
    try {
      const reader = await openStoreReader(url, settings.env ? { env: settings.env } : {});
      reader.store.close();
      out.set(url, reader.listing);
    } catch (error) {
      settings.warn(`reuse: the results in ${url} are not looked at: ${(error as Error).message.split("\n")[0]}`);
      out.set(url, undefined);
    }
  }
  return out;
};

/** A source's files in its store: each recorded object present with its recorded size (and ETag's fingerprint). */
const storeFiles = (c: ReuseCandidate, url: string, listing: ReadonlyMap<string, StoredObject> | undefined): FilesVerdict => {
  if (listing === undefined) return { ok: false, why: "files gone" };
  const found = new Map<string, string>();
  for (const o of c.record.outputs) {
    if (o.path === undefined) continue;
    if (!isPlainRelativePath(o.path) || o.sha256 === undefined) return { ok: false, why: "files gone" };
    const seen = storedCopy(o, listing.get(o.path));
    if (seen === "missing") return { ok: false, why: "files gone" };
    if (seen === "differs") return { ok: false, why: "other bytes" };
    found.set(o.path, o.path);
  }
  return { ok: true, files: found, store: url };
};

/**
 * The reuse decisions for this manifest, or undefined when reuse is off for it (`reuse:
 * false`, `--no-reuse`) or no lockfile holds a paid result. Reads the lockfiles now; the
 * files of a candidate when it is first asked about (each file hashed once).
 */
export const openReuse = async (manifest: LoadedManifest, settings: ReuseSettings): Promise<Reuser | undefined> => {
  const raw = rawManifest(manifest.file);
  if (settings.off === true || raw?.reuse === false) return undefined;
  const offJobs = new Set(Object.entries(raw?.jobs ?? {}).filter(([, j]) => j?.reuse === false).map(([id]) => id));
  const here = dirname(manifest.file);
  const own = resolve(manifest.lockfilePath);
  const paths = new Map<string, string>();
  const add = (p: string) => {
    const real = realOrSame(p);
    if (!paths.has(real)) paths.set(real, p);
  };
  add(own);
  const alsoDirs = new Map<string, string>();
  for (const a of settings.also ?? []) {
    add(a.lockfilePath);
    alsoDirs.set(realOrSame(a.lockfilePath), isStoreUrl(a.outputsDir) ? a.outputsDir.replace(/\/+$/, "") : a.outputsDir);
  }
  if (settings.emulated) for (const p of lockfilesIn(here, true)) add(p);
  else for (const p of trackedLockfiles(here)) add(p);
  const from = Array.isArray(raw?.reuse_from) ? raw.reuse_from.filter((f): f is string => typeof f === "string") : [];
  for (const f of from) for (const p of lockfilesIn(resolve(here, f), settings.emulated)) add(p);

  const lockDir = dirname(own);
  const lockfiles: ReuseLockfile[] = [];
  const outputsDirs = new Map<ReuseLockfile, string[]>();
  for (const [real, path] of paths) {
    const isOwn = real === realOrSame(own);
    let lock: LockFile | undefined = isOwn ? settings.ownLock : undefined;
    try {
      lock ??= await readLockFile(path);
    } catch (error) {
      settings.warn(`reuse: skipped ${relative(process.cwd(), path) || path}: ${(error as Error).message.split("\n")[0]}`);
      continue;
    }
    if (lock === undefined) continue;
    const label = relative(lockDir, path).split(sep).join("/") || basename(path);
    const entry: ReuseLockfile = {
      label,
      manifest: isOwn ? basename(manifest.file) : label.replace(settings.emulated ? /\.emulate\.lock\.json$/ : /\.lock\.json$/, ".yaml"),
      own: isOwn,
      sameService: !settings.emulated && settings.service !== undefined && lock.service === settings.service,
      tasks: lock.tasks,
    };
    lockfiles.push(entry);
    // This manifest's own records are in its outputs folder or store (also after a rename of `name`, when `outputs` names it).
    const dir = isOwn ? manifest.outputsDir.replace(/\/+$/, "") : (alsoDirs.get(real) ?? outputsOf(path, settings.emulated));
    outputsDirs.set(entry, dir === undefined ? [] : [dir]);
  }
  const index = indexLockfiles(lockfiles);
  if (index.byHash.size === 0) return undefined;
  const storesWanted = lockfiles.filter((l) => Object.values(l.tasks).some(paidResult)).flatMap((l) => (outputsDirs.get(l) ?? []).filter(isStoreUrl));
  const listings = await listStores(storesWanted, settings);
  const { now } = settings;
  // The service's 30 days from the source's generation (resultState.ts, the one rule).
  const held: ServiceHolds | undefined = now === undefined || settings.service === undefined ? undefined : (record) => !pastRetention(paidAt(record), now);

  const hashes = new Map<string, string | undefined>();
  const hashOf = (file: string): string | undefined => {
    if (!hashes.has(file)) {
      try {
        hashes.set(file, lstatSync(file).isFile() ? sha256OfFile(file) : undefined);
      } catch {
        hashes.set(file, undefined);
      }
    }
    return hashes.get(file);
  };
  const files = (c: ReuseCandidate): FilesVerdict => {
    const found = new Map<string, string>();
    for (const dir of outputsDirs.get(c.lockfile) ?? []) {
      if (isStoreUrl(dir)) {
        const verdict = storeFiles(c, dir, listings.get(dir));
        if (verdict.ok || verdict.why === "other bytes") return verdict;
        continue;
      }
      let ok = true;
      let other = false;
      for (const o of c.record.outputs) {
        if (o.path === undefined) continue;
        if (!isPlainRelativePath(o.path) || o.sha256 === undefined) {
          ok = false;
          break;
        }
        const file = join(dir, ...o.path.split("/"));
        const sha = hashOf(file);
        if (sha === undefined) ok = false;
        else if (sha !== o.sha256) {
          ok = false;
          other = true;
        } else found.set(o.path, file);
        if (!ok) break;
      }
      if (ok) return { ok: true, files: found };
      found.clear();
      if (other) return { ok: false, why: "other bytes" };
    }
    return { ok: false, why: "files gone" };
  };

  const decisions = new Map<string, ReuseDecision>();
  const chosen = new Map<string, { task: PlannedTask; source: ReuseSource }>();
  const reusable = (task: PlannedTask): ReuseDecision => {
    if (decisions.has(task.id)) return decisions.get(task.id);
    const decision = reuseFor((a) => (a === task.attempt ? task.requestHash : manifest.withAttempt(task, a).requestHash), index, files, offJobs.has(task.job), held);
    decisions.set(task.id, decision);
    if (decision && "reuse" in decision) chosen.set(task.id, { task, source: decision.reuse });
    return decision;
  };
  return { reusable, chosen };
};
