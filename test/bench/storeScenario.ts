// Scenario 9, outputs in a store: (a) the saturation run (video tasks, 8 slots, realistic
// durations compressed) with its results in a local folder, then the same seeded run
// with them streamed into a store (s3rver on 127.0.0.1): slot utilisation must not drop
// by more than 2 points; (b) a new runner's presence check of N results already in the
// store: list requests (one per 1,000 keys) and downloads (none).

import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { realisticTiming } from "../../src/emulator/EmulatorConfig.js";
import { loadManifest } from "../../src/manifest/loadManifest.js";
import { makePolicy } from "../../src/policy/Policy.js";
import { runLoadedManifest } from "../../src/run/runManifest.js";
import { openStoreSink } from "../../src/outputs/openStore.js";
import type { LockOutput } from "../../src/state/LockFile.js";
import { listRequests, startS3rver, type S3rverHandle } from "../store/s3rverServer.js";
import { writeVideoManifest } from "./benchManifest.js";
import { round, type BenchFigure, type ScenarioResult } from "./BenchFigure.js";
import { startEmulatorProcess, type EmulatorProcess } from "./EmulatorProcess.js";

export interface StoreBenchOptions {
  readonly tasks: number;
  readonly slots: number;
  readonly timeScale: number;
  readonly seed: number;
  /** Results already in the store for the presence check. */
  readonly stored: number;
  readonly label: string;
}

const utilisationOf = async (emulator: EmulatorProcess, o: StoreBenchOptions, s3: S3rverHandle, outputs: "folder" | "store") => {
  await emulator.reset(); // the same seeded durations in create order
  const dir = mkdtempSync(join(tmpdir(), "omnibatch-bench-store-"));
  try {
    const file = writeVideoManifest({ dir, name: `bench-store-${outputs}`, count: o.tasks, concurrency: o.slots });
    const loaded = await loadManifest(file);
    const manifest = outputs === "store" ? { ...loaded, outputsDir: `s3://${s3.bucket}/bench-${Date.now()}` } : loaded;
    const summary = await runLoadedManifest(manifest, {
      baseUrl: emulator.url,
      env: { OMNIBATCH_API_KEY: emulator.apiKey, ...s3.env },
      policy: makePolicy(o.timeScale),
      concurrency: o.slots,
    });
    if (summary.exitCode !== 0) throw new Error(`store bench (${outputs}): exit ${summary.exitCode} (${summary.reason ?? ""})`);
    const s = await emulator.stats();
    const makespanMs = (s.lastFinishAt ?? 0) - (s.firstCreateAt ?? 0);
    return { utilisation: s.slots.video.busyMs / (o.slots * makespanMs), makespanMs, downloads: s.downloads };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
};

/** Writes N small objects straight into s3rver's file layout (PUTting 20,000 would take minutes). */
const seed = (s3: S3rverHandle, prefix: string, n: number): LockOutput[] => {
  const outputs: LockOutput[] = [];
  for (let i = 0; i < n; i++) {
    const rel = `stills/t${String(i).padStart(5, "0")}`;
    const body = Buffer.from(`image ${i}`);
    const folder = join(s3.directory, s3.bucket, prefix, rel);
    mkdirSync(folder, { recursive: true });
    writeFileSync(join(folder, "image-1.png._S3rver_object"), body);
    const md5 = createHash("md5").update(body).digest("hex");
    writeFileSync(join(folder, "image-1.png._S3rver_object.md5"), md5);
    // As a run with a store records it: the ETag's fingerprint beside size and sha256 (compared by the presence check).
    outputs.push({ type: "image", index: 0, variant: "main", path: `${rel}/image-1.png`, size: body.length, sha256: createHash("sha256").update(body).digest("hex"), etag: md5.slice(0, 8) });
  }
  return outputs;
};

export const storeBench = async (o: StoreBenchOptions): Promise<ScenarioResult> => {
  const s3 = await startS3rver();
  const emulator = await startEmulatorProcess({ seed: o.seed, slots: { video: o.slots, image: o.slots }, timing: { ...realisticTiming, scale: o.timeScale } });
  try {
    const folder = await utilisationOf(emulator, o, s3, "folder");
    const store = await utilisationOf(emulator, o, s3, "store");

    const recorded = seed(s3, "presence", o.stored);
    const listsBefore = listRequests(s3);
    const getsBefore = s3.seen.filter((r) => r.method === "GET" && !/list-type=2/.test(r.url)).length;
    const t0 = performance.now();
    const sink = await openStoreSink(`s3://${s3.bucket}/presence`, { env: s3.env });
    const held = await sink.holds(recorded);
    const presenceMs = performance.now() - t0;
    await sink.close();
    if (!held) throw new Error("store bench: the seeded results were not all found");
    const lists = listRequests(s3) - listsBefore;
    const gets = s3.seen.filter((r) => r.method === "GET" && !/list-type=2/.test(r.url)).length - getsBefore;

    const s = o.label;
    const figures: BenchFigure[] = [
      { scenario: s, figure: "slot utilisation (local folder)", value: round(folder.utilisation), unit: "", note: `makespan ${Math.round(folder.makespanMs)} ms, ${folder.downloads} downloads` },
      { scenario: s, figure: "slot utilisation (store, s3rver)", value: round(store.utilisation), unit: "", note: `makespan ${Math.round(store.makespanMs)} ms, ${store.downloads} downloads streamed into the store` },
      { scenario: s, figure: "utilisation drop with a store", value: round(folder.utilisation - store.utilisation), unit: "", goal: { op: "<=", target: 0.02 }, note: "local folder minus store; same seeded durations" },
      { scenario: s, figure: `new runner: list requests for ${o.stored.toLocaleString("en-US")} stored results`, value: lists, unit: "req", goal: { op: "<=", target: 25 }, note: `presence check in ${Math.round(presenceMs)} ms` },
      { scenario: s, figure: "new runner: downloads (store GETs) for the presence check", value: gets, unit: "req", goal: { op: "<=", target: 0 } },
    ];
    return { figures, details: { folder, store, presence: { stored: o.stored, lists, gets, presenceMs } } };
  } finally {
    await emulator.close();
    await s3.close();
  }
};
