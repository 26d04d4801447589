// Results written to a local folder: each file is streamed to a temp file beside its
// target while hashed and counted, fsynced and renamed into place, so a file under its
// final name is always complete. Nothing is written through a symbolic link that leads
// out of the outputs folder.

import { randomBytes } from "node:crypto";
import { closeSync, mkdirSync, openSync, readdirSync, renameSync, rmSync, statSync } from "node:fs";
import { dirname, join, posix } from "node:path";
import { fsyncDir, fsyncFd, writeFullyFd, writeFullySync } from "../fs/durable.js";
import type { LockOutput } from "../state/LockFile.js";
import { resolveInside } from "./OutputPaths.js";
import { makeFolderSyncs, type FolderSyncs } from "./folderSyncs.js";
import { folderGuard } from "./OutputsFolderCheck.js";
import { Meter, type ResultSink, type ResultSource, type WrittenResult } from "./ResultSink.js";

/** Writes of a file's bytes past this size are awaited (a large video must not hold the event loop while the disk catches up); smaller ones go straight into the page cache. */
const SYNC_WRITE_BYTES = 1024 * 1024;

export const folderSink = (outputsDir: string, folderSyncs: FolderSyncs = makeFolderSyncs(fsyncDir)): ResultSink => {
  const absolutePath = (rel: string) => resolveInside(outputsDir, rel);
  // The outputs folder's real path is resolved once; each task folder is checked at each write (cheaply).
  const guard = folderGuard(outputsDir);
  // Files this run found with their recorded size or wrote itself, by path: the run's
  // reports use it instead of a second stat of every file (a file removed by hand while
  // the run goes is seen by the next run's start, which stats every recorded file).
  const sizes = new Map<string, number>();
  // The start check's finds (`holds`), in order, folded into `sizes` when it is next read or
  // changed: a Map insert after each stat (the stat's system call between two inserts)
  // cost more than the same inserts in one loop.
  const foundPaths: string[] = [];
  const foundSizes: number[] = [];
  const fold = (): void => {
    for (let i = 0; i < foundPaths.length; i++) sizes.set(foundPaths[i]!, foundSizes[i]!);
    foundPaths.length = 0;
    foundSizes.length = 0;
  };
  // Folder fsyncs are shared by every change made before they start (folderSyncs.ts):
  // tasks finishing together make their folders in one parent, and one fsync serves them.
  // Folders this run made whose entry in their parent is not yet known durable, with the
  // stamp of their making: every write below one waits for it, whichever write made it
  // (a second task's file in a job folder the first task's write made, or a write retried
  // after the fsync of a parent failed, is not recorded before that entry is durable).
  const madeHere = new Map<string, number>();
  const write = async (rel: string, source: ResultSource, signal: AbortSignal): Promise<WrittenResult> => {
    const target = absolutePath(rel);
    const folder = dirname(target);
    // A symbolic link on the way (made before or during the run) must not carry the
    // write out of the outputs folder: checked before the folder is made and after.
    guard.realDirInside(folder);
    // The first folder made (undefined: it existed): its entry in its parent must be made
    // durable too, and so must each deeper one's, before the file is recorded.
    const made = mkdirSync(folder, { recursive: true });
    if (made !== undefined) {
      const madeAt = folderSyncs.stamp();
      for (let at = folder; ; at = dirname(at)) {
        madeHere.set(at, madeAt);
        if (at === made || at === dirname(at)) break;
      }
    }
    guard.realDirInside(folder);
    const temp = join(folder, `.${posix.basename(rel)}.${process.pid}.${randomBytes(4).toString("hex")}.part`);
    const fd = openSync(temp, "w");
    let written: WrittenResult;
    try {
      const meter = new Meter(source);
      for await (const chunk of source.body) {
        if (signal.aborted) throw new Error("interrupted");
        const data = chunk as Buffer;
        meter.take(data);
        // write() may write only part of the chunk (a full disk) and still succeed:
        // write the rest, so the hash and size recorded are those of the file.
        if (meter.bytes <= SYNC_WRITE_BYTES) writeFullySync(fd, data, temp);
        else await writeFullyFd(fd, data, temp);
      }
      written = meter.end();
      await fsyncFd(fd);
    } catch (error) {
      source.body.destroy();
      try {
        closeSync(fd);
      } catch {
        // already failing: the first error is the one to report
      }
      try {
        rmSync(temp, { force: true });
      } catch {
        // a temp file left behind is cleared by the next prepare of this folder
      }
      throw error;
    }
    closeSync(fd);
    renameSync(temp, target);
    const syncs = [folderSyncs.sync(folder, folderSyncs.stamp())];
    // Each folder on the way made by this run and not yet known durable: its entry in its parent.
    for (let at = folder; at !== dirname(at); at = dirname(at)) {
      const madeAt = madeHere.get(at);
      if (madeAt === undefined) continue;
      const entry = at;
      syncs.push(
        folderSyncs.sync(dirname(entry), madeAt).then(() => {
          if (madeHere.get(entry) === madeAt) madeHere.delete(entry);
        }),
      );
    }
    await Promise.all(syncs);
    fold();
    sizes.set(rel, written.size);
    return { size: written.size, sha256: written.sha256 };
  };

  /** Temp files left by a killed run in this task's folder (the run lock makes them ours). */
  const prepare = async (dir: string) => {
    // The task's folder must not lead out of the outputs folder: refused before fetching.
    const folder = absolutePath(dir);
    guard.realDirInside(folder);
    let names: string[];
    try {
      names = readdirSync(folder);
    } catch {
      return; // not made yet (the usual case): nothing left over
    }
    for (const n of names) {
      if (!n.startsWith(".") || !n.endsWith(".part")) continue;
      try {
        rmSync(join(folder, n), { force: true });
      } catch {
        // left for the next run; the write makes a temp file of another name
      }
    }
  };

  // A rerun checks every recorded file: a synchronous stat of a local file costs a few
  // microseconds, an awaited one about eight times as much (100,000 files: 0.45 s
  // against 3.7 s), and nothing else runs while a run starts.
  const holds = (outputs: readonly LockOutput[]): boolean => {
    for (const o of outputs) {
      if (o.path === undefined) continue;
      let path: string;
      try {
        path = absolutePath(o.path);
      } catch {
        return false;
      }
      let size: number | undefined;
      try {
        const s = statSync(path, { throwIfNoEntry: false });
        size = s?.isFile() ? s.size : undefined;
      } catch {
        size = undefined; // unreadable (permissions): fetch it again, as if missing
      }
      if (size !== o.size) {
        fold();
        sizes.delete(o.path);
        return false;
      }
      if (size !== undefined) {
        foundPaths.push(o.path);
        foundSizes.push(size);
      }
    }
    return true;
  };

  const seen = (rel: string, size: number | undefined): boolean => {
    if (foundPaths.length > 0) fold();
    return size !== undefined && sizes.get(rel) === size;
  };

  return { where: outputsDir, prepare, write, holds, absolutePath, seen };
};
