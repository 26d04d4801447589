// Where an `--emulate` run keeps its lockfile and results: beside the real ones but
// never the same files, so emulated work is never mistaken for paid work and emulated
// reports never overwrite real ones. run, status and report all ask this one function.

import { dirname } from "node:path";

export interface ManifestPaths {
  readonly lockfilePath: string;
  readonly outputsDir: string;
}

/** `demo.lock.json` -> `demo.emulate.lock.json`. */
export const emulatedLockfilePath = (lockfilePath: string): string =>
  lockfilePath.endsWith(".lock.json") ? `${lockfilePath.slice(0, -".lock.json".length)}.emulate.lock.json` : `${lockfilePath}.emulate`;

/**
 * Where the emulated service keeps its tasks between `--emulate` runs (keptEmulator.ts):
 * `demo.emulate.lock.json` -> `demo.emulate.state.json`, beside the emulated lockfile.
 */
export const emulatorStatePath = (emulatedLockfile: string): string =>
  emulatedLockfile.endsWith(".emulate.lock.json") ? `${emulatedLockfile.slice(0, -".lock.json".length)}.state.json` : `${emulatedLockfile}.state`;

/**
 * `demo.lock.json` -> `demo.emulate.lock.json` (its journal and run lock follow, as they
 * are named after the lockfile); `outputs/demo` -> `outputs/demo-emulated`.
 * Pure: expects the absolute paths the manifest loader gives.
 */
export const emulatedPaths = (manifest: ManifestPaths): ManifestPaths => {
  const lockfilePath = emulatedLockfilePath(manifest.lockfilePath);
  // A root folder as outputs (`/`) has no sibling: keep the emulated results inside it.
  const outputs = manifest.outputsDir.replace(/[\\/]+$/, "");
  // A store: the emulated results go under a sibling prefix, or `emulated/` in a bare bucket.
  if (/^s3:\/\//i.test(outputs)) {
    return { lockfilePath, outputsDir: /^s3:\/\/[^/]+$/i.test(outputs) ? `${outputs}/emulated` : `${outputs}-emulated` };
  }
  const outputsDir = outputs === "" || dirname(outputs) === outputs ? `${manifest.outputsDir}emulated` : `${outputs}-emulated`;
  return { lockfilePath, outputsDir };
};

/** The same manifest, pointed at its emulated lockfile and outputs folder. */
export const emulatedManifest = <M extends ManifestPaths>(manifest: M): M => ({ ...manifest, ...emulatedPaths(manifest) });
