// Where a lockfile's settled stamp (SettledStamp.ts) is kept: a small file in this
// machine's cache folder, never in the lockfile or anything meant for git. The stamp is a
// cache of a run's answer, bound by digests to the exact lockfile lines, manifest and
// inputs it was made from; losing it costs one full rerun, and a stale or foreign one never
// matches. Kept out of the lockfile so that a run with nothing to do leaves the committed
// file byte for byte as it was (no header line changing each day, no absolute paths of one
// machine in the repository, nothing an older omnibatch would refuse).
//
//   $OMNIBATCH_CACHE_DIR/settled/<key>.json, else $XDG_CACHE_HOME/omnibatch/settled/...,
//   else ~/.cache/omnibatch/settled/...; <key>: the sha256 of the lockfile's absolute path.

import { createHash, randomBytes } from "node:crypto";
import { closeSync, fstatSync, mkdirSync, openSync, readSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { readStamp, type SettledStamp } from "./SettledStamp.js";

/** A stamp file larger than this is not read (a real one is a few KB: the events and summary of a run). */
const MAX_STAMP_BYTES = 4 * 1024 * 1024;

/** The cache folder this machine's runs keep their stamps in (pure: a function of the environment and home). */
export const cacheDirOf = (env: Readonly<Record<string, string | undefined>>, home: () => string = homedir): string => {
  const own = env["OMNIBATCH_CACHE_DIR"];
  if (own) return resolve(own);
  const xdg = env["XDG_CACHE_HOME"];
  return xdg ? join(resolve(xdg), "omnibatch") : join(home(), ".cache", "omnibatch");
};

/** The stamp file of a lockfile (pure). */
export const settledStampFile = (lockfilePath: string, cacheDir: string): string =>
  join(cacheDir, "settled", `${createHash("sha256").update(resolve(lockfilePath)).digest("hex").slice(0, 40)}.json`);

/** The stamp kept for a lockfile when there is a readable, well-formed one whose key matches its content; otherwise undefined. */
export const readSettledStamp = (file: string): SettledStamp | undefined => {
  let fd: number | undefined;
  try {
    fd = openSync(file, "r");
    const size = fstatSync(fd).size;
    if (size > MAX_STAMP_BYTES) return undefined;
    const buffer = Buffer.alloc(size);
    let read = 0;
    while (read < size) {
      const n = readSync(fd, buffer, read, size - read, read);
      if (n === 0) break;
      read += n;
    }
    return readStamp(JSON.parse(buffer.subarray(0, read).toString("utf8")));
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
};

/**
 * Keeps a stamp (a temp file renamed into place: a reader sees the old stamp or the new one,
 * never half of one). Best effort: a cache folder that cannot be written costs the next run
 * its fast path, nothing else; says whether it was kept.
 */
export const writeSettledStamp = (file: string, stamp: SettledStamp): boolean => {
  const temp = `${file}.${randomBytes(6).toString("hex")}.tmp`;
  try {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(temp, JSON.stringify(stamp));
    renameSync(temp, file);
    return true;
  } catch {
    try {
      rmSync(temp, { force: true });
    } catch {
      // no folder to leave it in (ENOTDIR): nothing was written
    }
    return false;
  }
};
