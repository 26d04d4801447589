// Where a manifest's lockfile and outputs folder are, for status and report. Loaded with
// the manifest loader (no network), so the paths are the run's own; when the manifest
// currently has errors, the lockfile can still be shown: its `name` and `outputs` are
// then read directly, following the loader's rules (`M.lock.json` beside `M.yaml`,
// outputs relative to the manifest, default `outputs/<name>`).

import { readFile } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import { parse } from "yaml";
import { ManifestInvalid } from "../manifest/Diagnostic.js";
import { loadManifest, lockfilePathFor } from "../manifest/loadManifest.js";
import type { LoadedManifest } from "../manifest/LoadedManifest.js";
import type { ManifestShape } from "./failureGroups.js";
import { serviceInEnv } from "../rules/serviceNames.js";

export interface ManifestLocations {
  readonly file: string;
  readonly name: string;
  readonly lockfilePath: string;
  readonly outputsDir: string;
  /** Set when the manifest is invalid and only its name and outputs could be read. */
  readonly manifestInvalid?: ManifestInvalid;
  /** The jobs' for_each links and retries (for failures and what they cost downstream); absent when invalid. */
  readonly shape?: ManifestShape;
  /** The loaded manifest, when it is valid (its tasks' requests go into the reports). */
  readonly manifest?: LoadedManifest;
}

/** For each for_each job, about how many of its tasks one upstream task gives; each job's retry_failed. */
export const shapeOf = (m: Pick<LoadedManifest, "jobs" | "tasks" | "expectedDownstreamCount">): ManifestShape => {
  const expected = new Map<string, number>();
  for (const job of m.jobs) {
    expected.set(job.id, job.upstream ? m.expectedDownstreamCount(job.id) : m.tasks.filter((t) => t.job === job.id).length);
  }
  return {
    downstream: m.jobs.flatMap((j) => {
      if (!j.upstream) return [];
      const up = expected.get(j.upstream.job) ?? 0;
      return [{ job: j.id, upstream: j.upstream.job, perUpstreamTask: up > 0 ? (expected.get(j.id) ?? 0) / up : 0 }];
    }),
    retryFailed: Object.fromEntries(m.jobs.map((j) => [j.id, j.retryFailed])),
    retryContentRisk: Object.fromEntries(m.jobs.filter((j) => j.retryContentRisk === true).map((j) => [j.id, true])),
  };
};

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
    const m = await loadManifest(manifest, { cwd, service: serviceInEnv(process.env) });
    return { file: m.file, name: m.name, lockfilePath: m.lockfilePath, outputsDir: m.outputsDir, shape: shapeOf(m), manifest: m };
  } catch (error) {
    if (!(error instanceof ManifestInvalid)) throw error;
    const file = resolve(cwd, manifest);
    const light = await readNameAndOutputs(file);
    if (!light) throw error;
    return {
      file,
      name: light.name,
      lockfilePath: lockfilePathFor(file),
      outputsDir: /^s3:\/\//i.test(light.outputs) ? light.outputs : resolve(dirname(file), light.outputs),
      manifestInvalid: error,
    };
  }
};
