// Reading a file a manifest names (the manifest, a data file, a local image) safely:
// only a regular file is read, opened so that a FIFO cannot block (O_NONBLOCK) and
// judged by fstat of the opened file (no race between a check and the read), and read
// with its size bound checked while reading, so a device or a growing file cannot be
// read forever. A CSV cell can name any path: nothing here trusts the name.

import { closeSync, constants, fstatSync, openSync, readSync, type Stats } from "node:fs";

export type RegularFileRead = { readonly ok: true; readonly bytes: Buffer } | { readonly ok: false; readonly reason: string };

/** What a file that is not a regular one is, for messages: "a FIFO (named pipe)", "a device", "a folder"... */
export const kindOf = (s: Stats): string =>
  s.isFIFO() ? "a FIFO (named pipe)" : s.isCharacterDevice() || s.isBlockDevice() ? "a device" : s.isSocket() ? "a socket" : s.isDirectory() ? "a folder" : "not a regular file";

export const megabytes = (n: number): string => (n >= 1024 * 1024 ? `${Math.round(n / (1024 * 1024))} MB` : `${n} bytes`);

/** Why a path cannot be read, from an error code. */
const reasonOf = (error: unknown): string => {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === "ENOENT") return "does not exist";
  if (code === "EISDIR") return "is a folder, not a file";
  if (code === "EACCES" || code === "EPERM") return "cannot be read (permission denied)";
  return `cannot be read (${code ?? (error as Error).message})`;
};

/**
 * The bytes of `path` when it is a regular file of at most `maxBytes`; otherwise why not
 * ("is a FIFO (named pipe), not a regular file", "is larger than 256 MB", "does not exist").
 */
export const readRegularFileSync = (path: string, maxBytes: number): RegularFileRead => {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
  } catch (error) {
    return { ok: false, reason: reasonOf(error) };
  }
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile()) {
      const kind = kindOf(stats);
      return { ok: false, reason: kind === "a folder" ? "is a folder, not a file" : `is ${kind}, not a regular file: only regular files are read` };
    }
    if (stats.size > maxBytes) return { ok: false, reason: `is larger than ${megabytes(maxBytes)}` };
    // The size may change while reading: the bound is checked on what is actually read.
    const chunks: Buffer[] = [];
    let total = 0;
    const chunkSize = Math.min(Math.max(stats.size, 64 * 1024), 8 * 1024 * 1024, maxBytes + 1);
    for (;;) {
      const chunk = Buffer.allocUnsafe(Math.min(chunkSize, maxBytes + 1 - total));
      const n = readSync(fd, chunk, 0, chunk.length, null);
      if (n === 0) break;
      total += n;
      if (total > maxBytes) return { ok: false, reason: `is larger than ${megabytes(maxBytes)}` };
      chunks.push(n === chunk.length ? chunk : chunk.subarray(0, n));
    }
    return { ok: true, bytes: Buffer.concat(chunks, total) };
  } catch (error) {
    return { ok: false, reason: reasonOf(error) };
  } finally {
    closeSync(fd);
  }
};
