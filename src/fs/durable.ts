// Writing so that what is on disk is what was meant, shared by the lockfile store and
// the downloader: every byte written even when the disk writes only part of a chunk,
// and a folder's entries (a rename, a new file) made durable with an fsync of the folder.
// Only the fsyncs wait for the disk; the calls around them (open, close, a write into the
// page cache) take microseconds, and are made synchronously where a run makes one per
// file or per create: an awaited call is a trip through the thread pool and a promise,
// which cost more than the call itself (issue 13's throughput profile).

import { closeSync, fsync, openSync, write, writeSync } from "node:fs";
import { type FileHandle } from "node:fs/promises";

/**
 * Writes all of `data` at the handle's position. write() may write part of a chunk (a
 * full disk) without failing: loop, and treat a write that makes no progress as a
 * failure naming `what`.
 */
export const writeFully = async (handle: FileHandle, data: Uint8Array, what: string): Promise<void> => {
  for (let done = 0; done < data.byteLength; ) {
    const { bytesWritten } = await handle.write(data, done, data.byteLength - done);
    if (bytesWritten <= 0) throw new Error(`could not write ${what}: no progress (is the disk full?)`);
    done += bytesWritten;
  }
};

/** writeFully on a file descriptor, synchronously (a small write into the page cache). */
export const writeFullySync = (fd: number, data: Uint8Array, what: string): void => {
  for (let done = 0; done < data.byteLength; ) {
    const bytesWritten = writeSync(fd, data, done, data.byteLength - done);
    if (bytesWritten <= 0) throw new Error(`could not write ${what}: no progress (is the disk full?)`);
    done += bytesWritten;
  }
};

/** writeFully on a file descriptor, awaited (large files: the disk may make a writer wait). */
export const writeFullyFd = async (fd: number, data: Uint8Array, what: string): Promise<void> => {
  for (let done = 0; done < data.byteLength; ) {
    const bytesWritten = await new Promise<number>((resolve, reject) =>
      write(fd, data, done, data.byteLength - done, null, (error, n) => (error ? reject(error) : resolve(n))),
    );
    if (bytesWritten <= 0) throw new Error(`could not write ${what}: no progress (is the disk full?)`);
    done += bytesWritten;
  }
};

/** fsync of an open descriptor, off the event loop (the one call here that waits for the disk). */
export const fsyncFd = (fd: number): Promise<void> =>
  new Promise((resolve, reject) => fsync(fd, (error) => (error ? reject(error) : resolve())));

/** Some platforms and file systems cannot open or fsync a folder; a rename is still atomic there. */
const folderSyncUnsupported = (error: unknown): boolean => {
  const code = (error as NodeJS.ErrnoException).code;
  return code === "EISDIR" || code === "EPERM" || code === "EINVAL" || code === "EBADF";
};

/** Makes the folder's entries (a rename, a new or removed file) durable. */
export const fsyncDir = async (dir: string): Promise<void> => {
  let fd: number | undefined;
  try {
    fd = openSync(dir, "r");
    await fsyncFd(fd);
  } catch (error) {
    if (!folderSyncUnsupported(error)) throw error;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
};
