// Scenario 4, resume: a manifest of N image tasks whose lockfile says every one is
// downloaded, with its (tiny) file on disk. A rerun has nothing to do: it must send no
// request, finish fast and stay small. The rerun runs in a child process (resumeChild.mjs)
// so its wall time and peak RSS are its own; making the fixture is timed separately.
// The child runs the built dist/ with plain node, as a user's run does (dist/ must be
// current: checked), or src/ under tsx with BENCH_RESUME_FROM=src (tsx's loader and
// source maps cost about 1 to 2 s of CPU and 50 to 75 MB more).

import { createHash } from "node:crypto";
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { mkdir, writeFile } from "node:fs/promises";
import { writeReports } from "../../src/report/writeReports.js";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadManifest } from "../../src/manifest/loadManifest.js";
import { serviceIdentity } from "../../src/run/serviceCheck.js";
import { LOCKFILE_VERSION, type LockFile, type LockTask } from "../../src/state/LockFile.js";
import { encodeLockFile } from "../../src/state/LockfileText.js";
import { writeImageManifest } from "./benchManifest.js";
import { round, type BenchFigure, type ScenarioResult } from "./BenchFigure.js";
import { runChildJson } from "./runChildJson.js";
import { startEmulatorProcess } from "./EmulatorProcess.js";
import { requestCounts } from "./requestCounts.js";

export interface ResumeOptions {
  readonly tasks: number;
  readonly label: string;
}

interface ChildFigures {
  from: "dist" | "src";
  wallMs: number;
  cpuMs: number;
  processCpuMs: number;
  maxRssMb: number;
  exitCode: number;
  outcome: string;
  created: number;
  adopted: number;
  downloaded: number;
  done: number;
}

const root = fileURLToPath(new URL("../..", import.meta.url));

/** The newest modification time of the files under `dir` whose names end with `ext` (a README edited after a build does not count). */
const newestIn = (dir: string, ext: string): number =>
  readdirSync(dir, { withFileTypes: true }).reduce((newest, e) => {
    const path = join(dir, e.name);
    return Math.max(newest, e.isDirectory() ? newestIn(path, ext) : e.name.endsWith(ext) ? statSync(path).mtimeMs : 0);
  }, 0);

/** Which code the rerun runs: the built dist/ (checked current) unless BENCH_RESUME_FROM=src. */
const childFrom = (): "dist" | "src" => {
  if (process.env.BENCH_RESUME_FROM === "src") return "src";
  if (!existsSync(join(root, "dist/run/runManifest.js"))) throw new Error("resume: dist/ is missing: run `npm run build` first (or BENCH_RESUME_FROM=src)");
  if (newestIn(join(root, "src"), ".ts") > newestIn(join(root, "dist"), ".js")) throw new Error("resume: dist/ is older than src/: run `npm run build` first (or BENCH_RESUME_FROM=src)");
  return "dist";
};

const runChild = async (file: string, baseUrl: string, apiKey: string, from: "dist" | "src"): Promise<{ figures: ChildFigures; processWallMs: number }> => {
  const { value, wallMs } = await runChildJson<ChildFigures>(
    "./resumeChild.mjs",
    [file, baseUrl, from],
    { ...process.env, OMNIBATCH_API_KEY: apiKey, OMNIBATCH_BASE_URL: "" },
    { tsx: from === "src" },
  );
  return { figures: value, processWallMs: wallMs };
};

/**
 * The fixture, as a finished run leaves it, in `dir`: a manifest of `tasks` images, one
 * 8-byte file per task, a lockfile recording each as downloaded at `serviceUrl`, and the
 * reports. Also made alone by resumeFixture.ts (to rerun resumeChild.mjs by hand).
 */
export const makeResumeFixture = async (
  dir: string,
  tasks: number,
  serviceUrl: string,
): Promise<{ file: string; lockMs: number; filesMs: number; taskCount: number; lockBytes: number }> => {
  const file = writeImageManifest({ dir, name: "bench-resume", count: tasks, concurrency: 8 });
  const t0 = performance.now();
  const manifest = await loadManifest(file);
  const content = Buffer.from("omnibat\n");
  const sha256 = createHash("sha256").update(content).digest("hex");
  const now = Date.now();
  const records: Record<string, LockTask> = {};
  manifest.tasks.forEach((t, i) => {
    records[t.id] = {
      job: t.job,
      kind: t.kind,
      vars: t.vars,
      dir: t.dir,
      request_hash: t.requestHash,
      take: t.take,
      attempt: t.attempt,
      state: "downloaded",
      task_id: `bench${(1_000_000 + i).toString(36)}`,
      planned_at: now - 60_000,
      submitted_at: now - 59_000,
      created_at: now - 59_000,
      finished_at: now - 30_000,
      updated_at: now - 29_000,
      outputs: [{ type: "image", index: 0, variant: "main", path: `${t.dir}/image-0.png`, size: content.length, sha256 }],
      billing: [{ charge_type: "cash", cash_type: "balance", amount: "0.024", currency: "USD", list_price: "0.03" }],
    };
  });
  const lock: LockFile = { lockfile_version: LOCKFILE_VERSION, name: manifest.name, tasks: records };
  // With the service the tasks were made at, as a run records it: without it the rerun
  // records it and so rewrites the whole lockfile, which a real rerun does not.
  writeFileSync(manifest.lockfilePath, encodeLockFile(lock.name, lock.tasks, serviceIdentity(serviceUrl)));
  const t1 = performance.now();
  const dirs = manifest.tasks.map((t) => join(manifest.outputsDir, t.dir));
  for (let i = 0; i < dirs.length; i += 256) {
    await Promise.all(
      dirs.slice(i, i + 256).map(async (d) => {
        await mkdir(d, { recursive: true });
        await writeFile(join(d, "image-0.png"), content);
      }),
    );
  }
  const filesMs = performance.now() - t1;
  // A finished run also left its reports, made as a run makes them (with the manifest,
  // after the files, so with every task's sidecar): the rerun finds them current.
  const t2 = performance.now();
  await writeReports({ lock, outputsDir: manifest.outputsDir, manifestName: manifest.name, env: {}, emulated: false, manifest });
  const lockMs = t1 - t0 + (performance.now() - t2);
  const taskCount = manifest.tasks.length;
  const lockBytes = statSync(manifest.lockfilePath).size;
  mkdirSync(manifest.outputsDir, { recursive: true });

  return { file, lockMs, filesMs, taskCount, lockBytes };
};

export const resume = async (o: ResumeOptions): Promise<ScenarioResult> => {
  const from = childFrom();
  const dir = mkdtempSync(join(tmpdir(), "omnibatch-bench-resume-"));
  const emulator = await startEmulatorProcess({ slots: { video: 8, image: 8 } });
  try {
    const { file, lockMs, filesMs, taskCount, lockBytes } = await makeResumeFixture(dir, o.tasks, emulator.url);

    // The rerun finds nothing to do: it reads the lockfile, plans every task and sends nothing.
    const { figures: c, processWallMs } = await runChild(file, emulator.url, emulator.apiKey, from);
    const stats = await emulator.stats();
    const req = requestCounts(stats);
    if (c.exitCode !== 0 || c.done !== taskCount) throw new Error(`resume: rerun ended ${c.outcome} (exit ${c.exitCode}), ${c.done} of ${taskCount} done`);
    const s = o.label;
    const figures: BenchFigure[] = [
      { scenario: s, figure: "rerun wall (runManifest)", value: Math.round(c.wallMs), unit: "ms", goal: { op: "<=", target: 5000 }, note: from === "dist" ? `the built dist/ (checked current) under plain node, as a user runs it; whole child process ${Math.round(processWallMs)} ms incl. node start` : `src/ under tsx (BENCH_RESUME_FROM=src); whole child process ${Math.round(processWallMs)} ms incl. node + tsx start` },
      { scenario: s, figure: "requests sent", value: req.total, unit: "req", goal: { op: "<=", target: 0 } },
      { scenario: s, figure: "rerun peak RSS", value: round(c.maxRssMb, 1), unit: "MB", goal: { op: "<=", target: 400 }, note: "getrusage maxRSS of the child" },
      { scenario: s, figure: "rerun CPU", value: Math.round(c.cpuMs), unit: "ms", note: `runManifest alone; the whole child ${Math.round(c.processCpuMs)} ms` },
      { scenario: s, figure: "fixture: lockfile + reports / files made in", value: Math.round(lockMs), unit: "ms", note: `lockfile (v2) ${(lockBytes / 1048576).toFixed(1)} MB and reports in ${Math.round(lockMs)} ms; ${taskCount} files in ${Math.round(filesMs)} ms (not part of the rerun)` },
    ];
    return { figures, details: { tasks: taskCount, child: c, processWallMs, lockBytes, lockMs, filesMs, requests: req } };
  } finally {
    await emulator.close();
    // Removing 100,000 folders takes longer than the rerun: done by a detached `rm -rf`
    // after the figures are printed (run.ts runs this scenario last), or kept on request.
    if (process.env.BENCH_KEEP_DIR) process.stderr.write(`resume: kept ${dir}\n`);
    else spawn("rm", ["-rf", dir], { detached: true, stdio: "ignore" }).unref();
  }
};
