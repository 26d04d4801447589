// Scenario 10, shared: one account, several runs (issue 30). N five-second videos against
// an account of 5 video slots, realistic durations compressed by `timeScale`, followed by
// polling only: as one run of N, as two runs of N/2 started at once and as three runs
// started at once, each run the built CLI in its own process (as two scheduled workflows
// of one repository would be), with OMNIBATCH_TIME_SCALE set to the emulator's scale.
// Makespan, slot utilisation, refused creates (1303) and requests come from the
// emulator's counters; each setup starts from a reset emulator with the same seed.

import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { realisticTiming } from "../../src/emulator/EmulatorConfig.js";
import { writeVideoManifest } from "./benchManifest.js";
import { round, type BenchFigure, type ScenarioResult } from "./BenchFigure.js";
import { startEmulatorProcess, type EmulatorProcess } from "./EmulatorProcess.js";
import { requestCounts, type RequestCounts } from "./requestCounts.js";

const bin = fileURLToPath(new URL("../../dist/cli/bin.js", import.meta.url));

export interface SharedOptions {
  readonly tasks: number;
  readonly slots: number;
  readonly timeScale: number;
  readonly seed: number;
  readonly label: string;
  /** One run's longest wall time; a run past it is stopped and the scenario fails. */
  readonly runLimitMs: number;
}

interface SetupFigures {
  readonly runs: number;
  readonly makespanMs: number;
  readonly utilisation: number;
  readonly refused: number;
  readonly requests: RequestCounts;
  readonly peak: number;
  readonly loadBefore: number;
  readonly loadAfter: number;
  /** Each run's own wall time, ms. */
  readonly runWallMs: readonly number[];
}

/** `node dist/cli/bin.js run FILE --no-callbacks --json` against the emulator; resolves with its wall time. */
const runCli = (emulator: EmulatorProcess, file: string, cwd: string, timeScale: number, limitMs: number): Promise<number> =>
  new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(process.execPath, [bin, "run", file, "--no-callbacks", "--json"], {
      cwd,
      stdio: ["ignore", "ignore", "pipe"],
      env: {
        ...process.env,
        OMNIBATCH_API_KEY: emulator.apiKey,
        OMNIBATCH_BASE_URL: emulator.url,
        OMNIBATCH_TIME_SCALE: String(timeScale),
      },
    });
    let err = "";
    child.stderr.on("data", (c: Buffer) => (err += c.toString()));
    const timer = setTimeout(() => child.kill("SIGKILL"), limitMs);
    child.on("exit", (code, signal) => {
      clearTimeout(timer);
      if (code === 0) return resolve(performance.now() - t0);
      reject(new Error(`shared: run of ${file} ended ${code ?? signal}: ${err.trim().split("\n").slice(-6).join("\n")}`));
    });
  });

/** `count` split into `runs` near-equal parts (40 / 3 = 14, 13, 13). */
const split = (count: number, runs: number): number[] => Array.from({ length: runs }, (_, i) => Math.floor(count / runs) + (i < count % runs ? 1 : 0));

const setup = async (emulator: EmulatorProcess, o: SharedOptions, runs: number): Promise<SetupFigures> => {
  await emulator.reset(); // same seed again: the same durations in create order
  const dir = mkdtempSync(join(tmpdir(), "omnibatch-bench-shared-"));
  try {
    const files = split(o.tasks, runs).map((count, i) =>
      writeVideoManifest({ dir: join(dir, `run${i + 1}`), name: `bench-shared-${runs}-${i + 1}`, count, concurrency: o.slots }),
    );
    const loadBefore = loadavg()[0]!;
    const runWallMs = await Promise.all(files.map((file, i) => runCli(emulator, file, join(dir, `run${i + 1}`), o.timeScale, o.runLimitMs)));
    const loadAfter = loadavg()[0]!;
    const s = await emulator.stats();
    const makespanMs = (s.lastFinishAt ?? 0) - (s.firstCreateAt ?? 0);
    return {
      runs,
      makespanMs,
      utilisation: s.slots.video.busyMs / (o.slots * makespanMs),
      refused: s.rejections["1303"] ?? 0,
      requests: requestCounts(s),
      peak: s.slots.video.peak,
      loadBefore,
      loadAfter,
      runWallMs,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
};

export const shared = async (o: SharedOptions): Promise<ScenarioResult> => {
  if (!existsSync(bin)) throw new Error("shared: dist/ is missing: run `npm run build` first");
  const emulator = await startEmulatorProcess({
    seed: o.seed,
    slots: { video: o.slots, image: o.slots },
    timing: { ...realisticTiming, scale: o.timeScale },
  });
  try {
    const one = await setup(emulator, o, 1);
    const two = await setup(emulator, o, 2);
    const three = await setup(emulator, o, 3);
    const s = o.label;
    const parts = (runs: number) => split(o.tasks, runs).join(" + ");
    const rows = (f: SetupFigures, name: string): BenchFigure[] => {
      const load = `load ${round(f.loadBefore, 2)} → ${round(f.loadAfter, 2)}`;
      return [
        { scenario: s, figure: `makespan (${name})`, value: round(f.makespanMs / 1000, 1), unit: "s", note: `first create to last end (emulator); runs' walls ${f.runWallMs.map((w) => round(w / 1000, 1)).join(", ")} s; ${load}` },
        { scenario: s, figure: `  slot utilisation (${name})`, value: round(f.utilisation), unit: "", note: `busy slot-time ÷ (${o.slots} × makespan); peak ${f.peak} slots` },
        ...(f.runs > 1
          ? [{ scenario: s, figure: `  utilisation ÷ one run's (${name})`, value: round(f.utilisation / one.utilisation), unit: "×", goal: { op: ">=", target: 0.8 } } as const]
          : []),
        { scenario: s, figure: `  refused creates, 1303 (${name})`, value: f.refused, unit: "", note: `${round(f.refused / o.tasks, 2)} per task` },
        ...(f.runs > 1 ? [{ scenario: s, figure: `  refused creates per task (${name})`, value: round(f.refused / o.tasks, 2), unit: "", goal: { op: "<=", target: 2 } } as const] : []),
        { scenario: s, figure: `  requests (${name})`, value: f.requests.total, unit: "req", note: `${f.requests.create} create / ${f.requests.query} query / ${f.requests.list} list / ${f.requests.download} download` },
      ];
    };
    const figures: BenchFigure[] = [
      { scenario: s, figure: "time scale", value: o.timeScale, unit: "×", note: `realistic video durations × ${o.timeScale}; ${o.slots} video slots; runs: the built CLI, OMNIBATCH_TIME_SCALE=${o.timeScale}, --no-callbacks` },
      ...rows(one, `one run of ${o.tasks}`),
      ...rows(two, `two runs of ${parts(2)}`),
      ...rows(three, `three runs of ${parts(3)}`),
    ];
    return { figures, details: { tasks: o.tasks, slots: o.slots, timeScale: o.timeScale, seed: o.seed, one, two, three } };
  } finally {
    await emulator.close();
  }
};
