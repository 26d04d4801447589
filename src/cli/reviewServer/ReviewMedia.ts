// Where the review page's media come from: the outputs folder, or the outputs store
// (`s3://...`) read through omnibatch's own store client, so the page only ever talks to
// the review server and the store's credentials stay in this process. The server asks
// only for results the lockfile records, with their recorded size; a file that is not
// there with that size is "absent" (the page shows it missing) and is never served.
// Every body is a stream (a range of it when the browser seeks), never read whole.

import { createReadStream } from "node:fs";
import { lstat } from "node:fs/promises";
import { dirname, join } from "node:path";
import type { Readable } from "node:stream";
import { isPlainRelativePath } from "../../fs/insidePath.js";
import { folderGuard } from "../../outputs/OutputsFolderCheck.js";
import type { ObjectStore, StoredObject } from "../../store/ObjectStore.js";
import { isStoreUrl } from "../../fs/StoreUrl.js";
import type { ByteRange } from "./byteRange.js";

export interface OpenRequest {
  /** Relative to the outputs, `/`-separated; the caller has checked it is a recorded result. */
  readonly path: string;
  /** The recorded size: anything else is not the recorded result. */
  readonly size: number;
  readonly range?: ByteRange;
  /** HEAD: whether it is there, no body. */
  readonly head?: boolean;
  readonly signal: AbortSignal;
}

export interface ReviewMedia {
  /** The outputs folder or store URL, for messages and the page. */
  readonly where: string;
  readonly kind: "folder" | "store";
  /** Which of the recorded files (path -> recorded size) are not there now with that size. */
  readonly absent: (recorded: ReadonlyMap<string, number>) => Promise<Set<string>>;
  /** The file's bytes (the range's, when given), or undefined when it is not there with its recorded size. */
  readonly open: (request: OpenRequest) => Promise<{ readonly body?: Readable } | undefined>;
  readonly close: () => Promise<void>;
}

export const folderMedia = (dir: string): ReviewMedia => {
  const fileOf = (path: string) => join(dir, ...path.split("/"));
  // Every part of the path, as the run's writer and prune check it (OutputsFolderCheck.ts):
  // a folder on the way that is a symbolic link leading out of the outputs is not followed.
  const guard = folderGuard(dir);
  const sizeOf = async (path: string): Promise<number | undefined> => {
    if (!isPlainRelativePath(path)) return undefined;
    const file = fileOf(path);
    try {
      guard.realDirInside(dirname(file));
    } catch {
      return undefined;
    }
    // lstat: a link in the outputs folder is not a result (it could point anywhere).
    const st = await lstat(file).catch(() => undefined);
    return st?.isFile() ? st.size : undefined;
  };
  return {
    where: dir,
    kind: "folder",
    absent: async (recorded) => {
      const out = new Set<string>();
      // A few at a time: a page of 10,000 results must not open 10,000 stats at once.
      const entries = [...recorded];
      let next = 0;
      const worker = async () => {
        while (next < entries.length) {
          const [path, size] = entries[next++]!;
          if ((await sizeOf(path)) !== size) out.add(path);
        }
      };
      await Promise.all(Array.from({ length: Math.min(16, entries.length) }, worker));
      return out;
    },
    open: async ({ path, size, range, head }) => {
      if ((await sizeOf(path)) !== size) return undefined;
      if (head) return {};
      return { body: createReadStream(fileOf(path), range ? { start: range.start, end: range.end } : {}) };
    },
    close: async () => undefined,
  };
};

/** Media from a store; `listing` (from the opening check) answers the first `absent`. */
export const storeMedia = (store: ObjectStore, listing?: ReadonlyMap<string, StoredObject>): ReviewMedia => {
  let first = listing;
  return {
    where: store.location.url,
    kind: "store",
    absent: async (recorded) => {
      const listed = first ?? (await store.list());
      first = undefined;
      const out = new Set<string>();
      for (const [path, size] of recorded) if (listed.get(path)?.size !== size) out.add(path);
      return out;
    },
    open: async ({ path, size, range, head, signal }) => {
      if (!isPlainRelativePath(path)) return undefined;
      if (head) return (await store.head(path))?.size === size ? {} : undefined;
      const got = await store.get(path, signal, range);
      if (!got) return undefined;
      // Not the recorded result (another size): never shown as if it were.
      const whole = range ? got.total : got.size;
      const length = range ? range.end - range.start + 1 : size;
      if (whole !== size || (got.size !== undefined && got.size !== length)) {
        got.body.destroy();
        return undefined;
      }
      return { body: got.body };
    },
    close: async () => store.close(),
  };
};

/** The media of `outputs` (a folder, or a store URL opened and checked now). */
export const openReviewMedia = async (outputs: string, env: Readonly<Record<string, string | undefined>>): Promise<ReviewMedia> => {
  if (!isStoreUrl(outputs)) return folderMedia(outputs);
  const { openStoreReader } = await import("../../store/openStoreReader.js");
  const { store, listing } = await openStoreReader(outputs, { env });
  return storeMedia(store, listing);
};
