// Opens the store of an `s3://bucket/prefix` outputs setting and checks, before anything
// is paid for, that it can be listed (credentials, bucket, endpoint). The SDK is loaded
// here, on first use, never at start-up.

import { StoreError, StoreUnavailable } from "../store/ObjectStore.js";
import type { S3StoreOptions } from "../store/S3Store.js";
import { storeSink, type StoreSink } from "./StoreSink.js";
import { parseStoreUrl } from "../fs/StoreUrl.js";

export interface OpenStoreOptions extends S3StoreOptions {
  /** List the prefix now (a run does: a store it cannot use must stop it before any create). */
  readonly check?: boolean;
}

export const openStoreSink = async (url: string, options: OpenStoreOptions = {}): Promise<StoreSink> => {
  const location = parseStoreUrl(url);
  if ("problem" in location) throw new StoreUnavailable(`outputs: ${location.problem}`);
  const { openS3Store } = await import("../store/S3Store.js");
  const sink = storeSink(await openS3Store(location, options), options.partSize !== undefined ? { partSize: options.partSize } : {});
  if (options.check !== false) {
    try {
      await sink.listing();
    } catch (error) {
      await sink.close();
      const why = error instanceof StoreError ? error.message : String((error as Error)?.message ?? error);
      throw new StoreUnavailable(`cannot use the outputs store ${location.url}: ${why}; nothing was sent to the service`);
    }
  }
  return sink;
};
