// Shared by the end-to-end tests: a small manifest written to a temp folder (images, a
// plain video job and a downstream video job), the built CLI, and checks that every
// result is on disk with the lockfile's sha256.

import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { execa, type ResultPromise } from "execa";
import * as assert from "uvu/assert";
import { readLockFile } from "../../src/state/readLockFile.js";
import type { LockFile } from "../../src/state/LockFile.js";

export const bin = fileURLToPath(new URL("../../dist/cli/bin.js", import.meta.url));

export const manifestYaml = (name: string, o: { subjects?: number; moods?: number; concurrency?: number; extra?: string } = {}) => `version: 1
name: ${name}
outputs: out
concurrency: ${o.concurrency ?? 4}
${o.extra ?? ""}
defaults:
  video: { resolution: 720p, aspect_ratio: "16:9", duration: 5 }
  image: { resolution: 1k }
jobs:
  stills:
    kind: image
    matrix:
      subject: [${["apple", "boat", "chair", "door", "egg", "fork", "gate", "hat"].slice(0, o.subjects ?? 4).join(", ")}]
    prompt: "a {{ subject }} on a table"
    n: 2
  clips:
    kind: video
    matrix:
      mood: [${["calm", "busy", "dark", "bright", "wet", "dry"].slice(0, o.moods ?? 3).join(", ")}]
    prompt: "a {{ mood }} street"
  moves:
    kind: video
    for_each: stills.outputs
    contents:
      - first_frame: "{{ item.url }}"
        id: start
    prompt: "@start turns slowly"
    settings: { duration: 5 }
`;

/**
 * The head the small end-to-end manifests share, up to `jobs:`: name, outputs (default
 * `out`), concurrency (default 4; null: none) and the defaults of both kinds.
 */
export const manifestHead = (name: string, o: { outputs?: string; concurrency?: number | null } = {}): string =>
  `version: 1
name: ${name}
outputs: ${o.outputs ?? "out"}
${o.concurrency === null ? "" : `concurrency: ${o.concurrency ?? 4}\n`}defaults:
  video: { resolution: 720p, aspect_ratio: "16:9", duration: 5 }
  image: { resolution: 1k }
jobs:
`;

/** A `stills` image job, one task per subject (`a {{ subject }} on a table`); `more`: lines of the job after its prompt. */
export const stillsJob = (subjects: readonly string[], more = ""): string =>
  `  stills:
    kind: image
    matrix:
      subject: [${subjects.join(", ")}]
    prompt: "a {{ subject }} on a table"
${more}`;

export interface Workspace {
  readonly dir: string;
  readonly manifest: string;
  readonly lockfile: string;
  readonly outputs: string;
  remove(): void;
}

export const workspace = (yaml: string): Workspace => {
  const dir = mkdtempSync(join(tmpdir(), "omnibatch-e2e-"));
  const manifest = join(dir, "m.yaml");
  writeFileSync(manifest, yaml);
  return {
    dir,
    manifest,
    lockfile: join(dir, "m.lock.json"),
    outputs: join(dir, "out"),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
};

export const runCli = (
  ws: Workspace,
  args: readonly string[],
  env: Record<string, string> = {},
): ResultPromise<{ reject: false; all: true }> =>
  execa("node", [bin, "run", ws.manifest, ...args], {
    cwd: ws.dir,
    reject: false,
    all: true,
    env: { OMNIBATCH_TIME_SCALE: "0.05", ...env },
    extendEnv: false,
  }) as never;

/** Every task downloaded, every file present with its recorded size and sha256. */
export const assertAllResults = async (ws: Workspace): Promise<LockFile> => {
  const lock = await readLockFile(ws.lockfile);
  assert.ok(lock, "a lockfile exists");
  for (const [id, task] of Object.entries(lock!.tasks)) {
    assert.is(task.state, "downloaded", id);
    for (const o of task.outputs) {
      if (!o.path) continue;
      const file = join(ws.outputs, o.path);
      if (!existsSync(file)) {
        const folder = dirname(file);
        const there = existsSync(folder) ? readdirSync(folder).join(", ") || "(empty)" : "(the folder does not exist)";
        assert.unreachable(
          `${id}: the lockfile records ${o.path} as downloaded (${o.size} bytes, sha256 ${o.sha256?.slice(0, 12)}) but ${file} is missing; its folder holds: ${there}`,
        );
      }
      const data = readFileSync(file);
      assert.is(data.length, o.size, file);
      assert.is(createHash("sha256").update(data).digest("hex"), o.sha256, file);
    }
  }
  return lock!;
};
