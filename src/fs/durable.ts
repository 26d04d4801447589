// Writing so that what is on disk is what was meant, shared by the lockfile store and
// the downloader: every byte written even when the disk writes only part of a chunk,
// and a folder's entries (a rename, a new file) made durable with an fsync of the folder.

import { open, type FileHandle } from "node:fs/promises";

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

/** Makes the folder's entries (a rename, a new or removed file) durable. */
export const fsyncDir = async (dir: string): Promise<void> => {
  let handle;
  try {
    handle = await open(dir, "r");
    await handle.sync();
  } catch (error) {
    // Some platforms and file systems cannot open or fsync a folder; the rename is still atomic there.
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== "EISDIR" && code !== "EPERM" && code !== "EINVAL" && code !== "EBADF") throw error;
  } finally {
    await handle?.close();
  }
};
