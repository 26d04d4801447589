// Shared by the tests of the review page with outputs in a store: a real S3-compatible
// server (s3rver, on 127.0.0.1, in the test's process), a standalone emulator, and the
// demo with `review: true` on its keyframes run once by the built CLI with
// `--outputs s3://...` (five stills made, recorded and uploaded; the clips wait on review).

import { join } from "node:path";
import * as assert from "uvu/assert";
import type { LockFile } from "../../src/state/LockFile.js";
import { readLockFile } from "../../src/state/readLockFile.js";
import { startS3rver, type S3rverHandle } from "../store/s3rverServer.js";
import { cli, removeDir, reviewedDemo, startEmulatorProcess, type EmulatorProcess } from "./reviewFlow.js";

export const M = "manifests/demo.yaml";

export interface StoreReviewed {
  readonly dir: string;
  readonly s3: S3rverHandle;
  readonly emulator: EmulatorProcess;
  /** s3://results/... where the run put its results. */
  readonly url: string;
  /** The env a CLI run needs (the service and the store). */
  readonly env: Record<string, string>;
  readonly lock: LockFile;
  /** Each still by its folder (`keyframes/A-1_studio`): task id, path, sha256, size. */
  readonly stills: Map<string, { id: string; path: string; sha256: string; size: number }>;
  readonly close: () => Promise<void>;
}

export const storeReviewed = async (): Promise<StoreReviewed> => {
  const s3 = await startS3rver();
  const emulator = await startEmulatorProcess();
  const dir = reviewedDemo();
  const close = async () => {
    await emulator.stop();
    await s3.close();
    removeDir(dir);
  };
  try {
    const url = `s3://${s3.bucket}/review/demo`;
    const env = { ...emulator.env, ...s3.env };
    const first = await cli(dir, ["run", M, "--yes", "--outputs", url], env);
    assert.is(first.exitCode, 3, first.all);
    const lock = (await readLockFile(join(dir, "manifests", "demo.lock.json")))!;
    const stills = new Map(
      Object.entries(lock.tasks)
        .filter(([, t]) => t.job === "keyframes")
        .map(([id, t]) => {
          const o = t.outputs[0]!;
          return [t.dir, { id, path: o.path!, sha256: o.sha256!, size: o.size! }] as const;
        }),
    );
    assert.is(stills.size, 5);
    return { dir, s3, emulator, url, env, lock, stills, close };
  } catch (error) {
    await close();
    throw error;
  }
};
