// The emulator in a separate process for a benchmark: spawns emulatorEntry.ts with a
// config patch, waits for its address, reads its figures over GET /_emulator/stats and
// stops it. The benchmark process then holds only the runner being measured.

import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { DeepPartial, EmulatorConfig, EmulatorStats } from "../../src/emulator/Emulator.js";

const entry = fileURLToPath(new URL("./emulatorEntry.ts", import.meta.url));

export interface EmulatorProcess {
  readonly url: string;
  readonly apiKey: string;
  readonly pid: number;
  stats(): Promise<EmulatorStats>;
  /** Forgets every task and figure (between two runs against the same process). */
  reset(): Promise<void>;
  close(): Promise<void>;
}

export const startEmulatorProcess = async (config: DeepPartial<EmulatorConfig>): Promise<EmulatorProcess> => {
  // BENCH_CPU_PROF profiles this process too (written when it exits on close()).
  const prof = process.env.BENCH_CPU_PROF ? ["--cpu-prof", `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : [];
  const child: ChildProcess = spawn(process.execPath, [...prof, "--import", "tsx", entry, JSON.stringify(config)], {
    // stdin stays open while this process lives; the emulator stops when it closes.
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr!.on("data", (c: Buffer) => (stderr += c.toString()));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const started = await new Promise<{ url: string; apiKey: string }>((resolve, reject) => {
    let out = "";
    const timer = setTimeout(() => reject(new Error(`emulator did not start within 30 s: ${stderr}`)), 30_000);
    child.stdout!.on("data", (c: Buffer) => {
      out += c.toString();
      const line = out.split("\n").find((l) => l.startsWith("{"));
      if (line) {
        clearTimeout(timer);
        resolve(JSON.parse(line) as { url: string; apiKey: string });
      }
    });
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`emulator exited before listening: ${stderr}`));
    });
  });
  const get = async (path: string, method = "GET"): Promise<unknown> => {
    const res = await fetch(`${started.url}${path}`, { method });
    if (!res.ok) throw new Error(`${method} ${path}: HTTP ${res.status}`);
    return res.json();
  };
  return {
    ...started,
    pid: child.pid!,
    stats: async () => (await get("/_emulator/stats")) as EmulatorStats,
    reset: async () => {
      await get("/_emulator/reset", "POST");
    },
    close: async () => {
      if (child.exitCode === null) child.kill("SIGTERM");
      // A profiled process writes its profile as it exits: give it the time to.
      const timer = setTimeout(() => child.kill("SIGKILL"), prof.length > 0 ? 60_000 : 5_000);
      await exited;
      clearTimeout(timer);
    },
  };
};
