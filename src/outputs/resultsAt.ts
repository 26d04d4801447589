// Where status, plan, report and `run --recreate-lost` look for the recorded results:
// the outputs folder as it is, or, for outputs in a store, one listing of its prefix
// (one request per 1,000 keys, never one per result). The SDK is loaded only for a store.

import type { ResultsAt } from "./scanResults.js";
import { isStoreUrl } from "../fs/StoreUrl.js";
import { StoreUnavailable } from "../store/ObjectStore.js";

/** The folder itself, or what the store holds under its prefix; StoreUnavailable, naming the store, when it cannot be listed. */
export const resultsAt = async (outputs: string, env: Readonly<Record<string, string | undefined>>): Promise<ResultsAt> => {
  if (!isStoreUrl(outputs)) return outputs;
  const { openStoreSink } = await import("./openStore.js");
  const sink = await openStoreSink(outputs, { env, check: false });
  try {
    return await sink.listing();
  } catch (error) {
    const why = String((error as Error)?.message ?? error);
    throw new StoreUnavailable(`cannot list the outputs store ${sink.where}: ${why.replace(/^listing \S+: /, "")}`);
  } finally {
    await sink.close();
  }
};
