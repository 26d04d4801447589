// Opens an outputs store for reading only (the review page serves its media from it):
// the same client a run uses, checked at once with one listing of the prefix, so a store
// that cannot be used is one line naming it, before a page is served. No StoreSink: a
// reader never writes.

import { StoreError, StoreUnavailable, type ObjectStore, type StoredObject } from "./ObjectStore.js";
import type { S3StoreOptions } from "./S3Store.js";
import { parseStoreUrl } from "../fs/StoreUrl.js";

export interface StoreReader {
  readonly store: ObjectStore;
  /** What the check's listing found under the prefix (keys relative to it). */
  readonly listing: ReadonlyMap<string, StoredObject>;
}

export const openStoreReader = async (url: string, options: S3StoreOptions = {}): Promise<StoreReader> => {
  const location = parseStoreUrl(url);
  if ("problem" in location) throw new StoreUnavailable(`outputs: ${location.problem}`);
  const { openS3Store } = await import("./S3Store.js");
  const store = await openS3Store(location, options);
  try {
    return { store, listing: await store.list() };
  } catch (error) {
    store.close();
    const why = error instanceof StoreError ? error.message : String((error as Error)?.message ?? error);
    throw new StoreUnavailable(`cannot read the outputs store ${location.url}: ${why}`);
  }
};
