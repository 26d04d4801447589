// The library entry: load a manifest file and run it to the end (or a stop), writing its
// reports. See runLoadedManifest for the options. A plain run (no selection, saved plan,
// switch, recreate, emulator or callback choice) first tries the settled-rerun fast path
// (settledRun.ts): a lockfile with a settled stamp whose inputs all match is reported without
// loading the manifest; otherwise the full run, which keeps a stamp when it ends
// with nothing done and nothing left to do. `env.OMNIBATCH_SETTLED=off` turns this off.
// The manifest reader and the engine are imported only when the full run is taken: the
// fast path loads neither.

import type { RunManifestOptions } from "./runLoadedManifest.js";
import type { RunSummary } from "../engine/RunEvent.js";
import type { RunnableManifest } from "../engine/RunnableManifest.js";
import { runSettled } from "./settledRun.js";
import { fastPathRefusal } from "../state/SettledStamp.js";
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
  const refusal =
    env["OMNIBATCH_SETTLED"] === "off" || options.reports === false
      ? "off"
      : fastPathRefusal({
          emulate: options.emulate !== undefined && options.emulate !== false,
          selection: options.selection !== undefined,
          plan: options.expectLockfile !== undefined,
          recreateLost: options.recreateLost === true,
          switchService: options.switchService === true,
          callbackFlags: options.callbacks !== undefined,
          ci: env["CI"] === "true" || !!env["GITHUB_STEP_SUMMARY"],
        });
  if (refusal !== undefined) return runLoadedManifest(await load(file, service), options);
  const settleOptions = { serviceName: service, outputsFlag: "", timeScale: options.timeScale ?? "", concurrency: options.concurrency !== undefined ? String(options.concurrency) : "" };
  const settled = await runSettled(file, {
    env,
    ...(options.baseUrl ? { baseUrl: options.baseUrl } : {}),
    options: settleOptions,
    ...(options.onEvent ? { onEvent: options.onEvent } : {}),
  }).catch(() => undefined);
  if (settled) return settled;
  return runLoadedManifest(await load(file, service), { ...options, settle: { options: settleOptions } });
};

export type { RunManifestOptions };
