// The results' states for status and plan: the lockfile's results looked for in the
// outputs (a folder, or one listing of a store). A store that cannot be listed is not a
// crash: the caller shows what the lockfile alone says, and why the states are unknown.

import { isResultFile } from "../outputs/resultState.js";
import { scanResults, type ScannedResult } from "../outputs/scanResults.js";
import type { LockFile } from "../state/LockFile.js";
import { resultsAt } from "../outputs/resultsAt.js";

/**
 * Each recorded result's state, looked for in the outputs (a folder, or one listing of a
 * store); for a store that cannot be listed, why not (one line, naming the store).
 */
export const scanOrReason = async (
  tasks: LockFile["tasks"],
  outputs: string,
  now: number,
  env: Readonly<Record<string, string | undefined>>,
): Promise<{ readonly results: ScannedResult[] } | { readonly unknown: string }> => {
  // Nothing recorded yet (a first plan): no store to ask, so none that must answer.
  if (!Object.values(tasks).some((t) => t.outputs.some(isResultFile))) return { results: [] };
  try {
    return { results: scanResults(tasks, await resultsAt(outputs, env), now) };
  } catch (error) {
    if ((error as { _tag?: string })?._tag === "StoreUnavailable") return { unknown: (error as Error).message };
    throw error;
  }
};
