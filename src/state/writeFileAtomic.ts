// Replaces a file so that a reader (or a crash at any moment, kill -9 included) sees
// either the old bytes or the new ones, never a mix: temp file in the same folder,
// fsync, rename over the target, fsync the folder so the rename itself is durable.

import { randomBytes } from "node:crypto";
import { open, readdir, rename, unlink } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { fsyncDir } from "../fs/durable.js";

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

/** Removes temp files a killed writer left beside `path` (call only while holding the file's lock). */
export const removeStaleTempFiles = async (path: string): Promise<void> => {
  const prefix = tempPrefix(path);
  const dir = dirname(path);
  const names = await readdir(dir).catch(() => [] as string[]);
  for (const name of names) {
    if (name.startsWith(prefix) && name.endsWith(".tmp")) await unlink(join(dir, name)).catch(() => undefined);
  }
};
