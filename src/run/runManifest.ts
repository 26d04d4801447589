// The library entry: load a manifest file and run it to the end (or a stop), writing its
// reports. See runLoadedManifest for the options.

import { loadManifest } from "../manifest/loadManifest.js";
import { runLoadedManifest, type RunManifestOptions } from "./runLoadedManifest.js";
import type { RunSummary } from "../engine/RunEvent.js";

/** Loads `file` (ManifestInvalid, exit 2, when it is wrong) and runs it. */
export const runManifest = async (file: string, options: RunManifestOptions = {}): Promise<RunSummary> =>
  runLoadedManifest(await loadManifest(file), options);

export { runLoadedManifest, type RunManifestOptions } from "./runLoadedManifest.js";
