// Runs an entry of test/bench in a child process (under tsx unless asked otherwise: a
// plain JavaScript entry on the built dist/ runs as a user's run does) and parses the JSON
// object its last stdout line holds; rejects with the child's output when there is none.

import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

export const runChildJson = <T>(
  entry: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
  options: { readonly tsx?: boolean } = {},
): Promise<{ value: T; wallMs: number }> =>
  new Promise((resolve, reject) => {
    const t0 = performance.now();
    const file = fileURLToPath(new URL(entry, import.meta.url));
    const prof = process.env.BENCH_CPU_PROF ? ["--cpu-prof", `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : [];
    const p = spawn(process.execPath, [...prof, ...(options.tsx === false ? [] : ["--import", "tsx"]), file, ...args], { env, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    p.stdout.on("data", (c: Buffer) => (out += c.toString()));
    p.stderr.on("data", (c: Buffer) => (err += c.toString()));
    p.on("exit", (code) => {
      const wallMs = performance.now() - t0;
      const line = out.trim().split("\n").pop() ?? "";
      try {
        resolve({ value: JSON.parse(line) as T, wallMs });
      } catch {
        reject(new Error(`${entry} exited ${code}:\n${out}\n${err}`));
      }
    });
  });
