// Replaces a file so that a reader (or a crash at any moment, kill -9 included) sees
// either the old bytes or the new ones, never a mix: temp file in the same folder,
// fsync, rename over the target, fsync the folder so the rename itself is durable.
// Large files (the lockfile of 200,000 tasks) are written from chunks made one at a
// time, so their whole text is never held.

import { createHash, randomBytes } from "node:crypto";
import { open, readdir, rename, unlink } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { fsyncDir, writeFully } from "../fs/durable.js";

const tempPrefix = (path: string): string => `.${basename(path)}.`;

export { fsyncDir } from "../fs/durable.js";

/** Writes `data` to `path` atomically and durably; returns the bytes written. */
export const writeFileAtomic = async (path: string, data: string | Uint8Array): Promise<number> => {
  const bytes = typeof data === "string" ? Buffer.from(data, "utf8") : data;
  const temp = join(dirname(path), `${tempPrefix(path)}${process.pid}.${randomBytes(6).toString("hex")}.tmp`);
  const handle = await open(temp, "wx");
  try {
    try {
      await handle.writeFile(bytes);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temp, path);
  } catch (error) {
    await unlink(temp).catch(() => undefined);
    throw error;
  }
  await fsyncDir(dirname(path));
  return bytes.byteLength;
};

/** What `writeFileAtomicChunks` wrote. */
export interface ChunkedWrite {
  readonly bytes: number;
  /** The sha256 of the bytes written, in hex. */
  readonly sha256: string;
}

/** writeFileAtomicChunks encodes into a buffer of this size, written whenever full. */
const WRITE_BUFFER_BYTES = 1 << 20;

/**
 * Writes the concatenation of `parts` to `path` atomically and durably. Each part is
 * encoded (UTF-8) into a 1 MB buffer as soon as it is made, and the buffer is written
 * whenever full, so the parts (lines, rows: the iterable may make them lazily) die young
 * and the file's whole text is never held. A part must not end inside a surrogate pair
 * (whole lines and JSON values never do). `mayReplace` is asked once every byte is
 * durable in the temp file, just before the rename: false leaves `path` as it was (the
 * temp file removed) and resolves undefined. A kill at any moment leaves the old file or
 * the new one, and at most a temp file that `removeStaleTempFiles` removes.
 */
export const writeFileAtomicChunks = async (
  path: string,
  parts: Iterable<string>,
  mayReplace: () => Promise<boolean> = async () => true,
): Promise<ChunkedWrite | undefined> => {
  const temp = join(dirname(path), `${tempPrefix(path)}${process.pid}.${randomBytes(6).toString("hex")}.tmp`);
  const hash = createHash("sha256");
  let bytes = 0;
  const buffer = Buffer.allocUnsafe(WRITE_BUFFER_BYTES);
  let used = 0;
  const handle = await open(temp, "wx");
  const write = async (data: Buffer) => {
    hash.update(data);
    await writeFully(handle, data, path);
    bytes += data.byteLength;
  };
  try {
    try {
      for (const part of parts) {
        // A UTF-16 code unit takes at most 3 bytes in UTF-8.
        const most = part.length * 3;
        if (used + most > buffer.length && used > 0) {
          await write(buffer.subarray(0, used));
          used = 0;
        }
        if (most > buffer.length) await write(Buffer.from(part, "utf8"));
        else used += buffer.write(part, used, "utf8");
      }
      if (used > 0) await write(buffer.subarray(0, used));
      await handle.sync();
    } finally {
      await handle.close();
    }
    if (!(await mayReplace())) {
      await unlink(temp).catch(() => undefined);
      return undefined;
    }
    await rename(temp, path);
  } catch (error) {
    await unlink(temp).catch(() => undefined);
    throw error;
  }
  await fsyncDir(dirname(path));
  return { bytes, sha256: hash.digest("hex") };
};

/** Removes temp files a killed writer left beside `path` (call only while holding the file's lock). */
export const removeStaleTempFiles = async (path: string): Promise<void> => {
  const prefix = tempPrefix(path);
  const dir = dirname(path);
  const names = await readdir(dir).catch(() => [] as string[]);
  for (const name of names) {
    if (name.startsWith(prefix) && name.endsWith(".tmp")) await unlink(join(dir, name)).catch(() => undefined);
  }
};
