// The library entry: load a manifest file and run it to the end (or a stop), writing its
// reports. See runLoadedManifest for the options. The manifest reader and the engine are
// imported when first called.

import type { RunManifestOptions } from "./runLoadedManifest.js";
import type { RunSummary } from "../engine/RunEvent.js";
import type { RunnableManifest } from "../engine/RunnableManifest.js";
import { Either } from "effect";
import { serviceNameFrom } from "../api/OmniClient.js";

/** Runs an already loaded manifest (runLoadedManifest.ts, imported when first called). */
export const runLoadedManifest = async (loaded: RunnableManifest, options: RunManifestOptions = {}): Promise<RunSummary> =>
  (await import("./runLoadedManifest.js")).runLoadedManifest(loaded, options);

const load = async (file: string, service: string) => (await import("../manifest/loadManifest.js")).loadManifest(file, { service });

/** The service's name: the client option, else OMNIBATCH_SERVICE, else kling (ClientConfigInvalid when it cannot be one). */
const serviceOf = (options: RunManifestOptions, env: Readonly<Record<string, string | undefined>>): string => {
  const name = serviceNameFrom(env, options.client?.service);
  if (Either.isLeft(name)) throw name.left;
  return name.right;
};

/** Loads `file` (ManifestInvalid, exit 2, when it is wrong) and runs it. */
export const runManifest = async (file: string, options: RunManifestOptions = {}): Promise<RunSummary> => {
  const env = options.env ?? process.env;
  const service = serviceOf(options, env);
  options = { ...options, client: { ...options.client, service } };
  return runLoadedManifest(await load(file, service), options);
};

export type { RunManifestOptions };
