// Where a manifest's lockfile and outputs folder are, for status and report. Loaded with
// the manifest loader (no network), so the paths are the run's own; when the manifest
// currently has errors, the lockfile can still be shown: its `name` and `outputs` are
// then read directly, following the loader's rules (`M.lock.json` beside `M.yaml`,
// outputs relative to the manifest, default `outputs/<name>`).

import { readFile } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import { parse } from "yaml";
import { ManifestInvalid } from "../manifest/Diagnostic.js";
import type { LoadedManifest } from "../manifest/LoadedManifest.js";
import { loadManifest, lockfilePathFor } from "../manifest/loadManifest.js";

export interface ManifestLocations {
  readonly file: string;
  readonly name: string;
  readonly lockfilePath: string;
  readonly outputsDir: string;
  /** Set when the manifest is invalid and only its name and outputs could be read. */
  readonly manifestInvalid?: ManifestInvalid;
  /** The loaded manifest, when it is valid (its tasks' requests go into the reports). */
  readonly manifest?: LoadedManifest;
}

const readNameAndOutputs = async (file: string): Promise<{ name: string; outputs: string } | undefined> => {
  try {
    const raw = parse(await readFile(file, "utf8")) as { name?: unknown; outputs?: unknown } | null;
    if (typeof raw?.name !== "string" || raw.name === "") return undefined;
    return { name: raw.name, outputs: typeof raw.outputs === "string" ? raw.outputs : `outputs/${raw.name}` };
  } catch {
    return undefined;
  }
};

/** Rejects with ManifestInvalid only when not even the manifest's name can be read. */
export const manifestLocations = async (manifest: string, cwd: string): Promise<ManifestLocations> => {
  try {
    const m = await loadManifest(manifest, { cwd });
    return { file: m.file, name: m.name, lockfilePath: m.lockfilePath, outputsDir: m.outputsDir, manifest: m };
  } catch (error) {
    if (!(error instanceof ManifestInvalid)) throw error;
    const file = resolve(cwd, manifest);
    const light = await readNameAndOutputs(file);
    if (!light) throw error;
    return {
      file,
      name: light.name,
      lockfilePath: lockfilePathFor(file),
      outputsDir: resolve(dirname(file), light.outputs),
      manifestInvalid: error,
    };
  }
};
