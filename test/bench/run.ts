// `npm run bench [-- --quick] [-- --only NAME[,NAME]]`: runs the ten benchmark scenarios,
// each in its own child process (scenario.ts) with the emulator in yet another, prints
// the table (scenario, figure, value, goal, pass/miss) and writes every figure, with the
// machine it ran on, to bench-results/latest.json. Benchmarks are not tests: a miss is
// reported, the exit code stays 0 unless a scenario could not run at all.

import { spawn } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { cpus, loadavg, totalmem } from "node:os";
import { fileURLToPath } from "node:url";
import { passes, type BenchFigure, type ScenarioResult } from "./BenchFigure.js";
import { SCALE_BOUND_MS } from "./scaleBound.js";
import type { ScenarioName } from "./scenarios.js";

const root = fileURLToPath(new URL("../..", import.meta.url));
const entry = fileURLToPath(new URL("./scenario.ts", import.meta.url));
// Resume last: its 100,000 output folders are removed in the background after it.
const order: ScenarioName[] = ["saturation", "pipeline", "throughput", "expansion", "emulator", "cli", "scale", "store", "shared", "resume"];

const argv = process.argv.slice(2);
const quick = argv.includes("--quick");
const onlyAt = argv.indexOf("--only");
const only = onlyAt >= 0 ? (argv[onlyAt + 1] ?? "").split(",").filter(Boolean) : [];
const unknown = only.filter((n) => !order.includes(n as ScenarioName));
if (unknown.length > 0) {
  process.stderr.write(`bench: unknown scenario ${unknown.join(", ")}; one of ${order.join(", ")}\n`);
  process.exit(2);
}
const chosen = only.length > 0 ? order.filter((n) => only.includes(n)) : order;
/**
 * Per-scenario time limit: a scenario past it is stopped and reported, the rest still run.
 * The full scale scenario has its own bound (planning 200,000 tasks and its stop on top).
 */
const limitOf = (name: ScenarioName): number => (quick ? (name === "shared" ? 200_000 : 90_000) : name === "scale" ? SCALE_BOUND_MS + 300_000 : name === "shared" ? 480_000 : 300_000);

const runScenario = (name: ScenarioName): Promise<{ result?: ScenarioResult; error?: string; wallMs: number }> =>
  new Promise((resolve) => {
    const t0 = performance.now();
    const prof = process.env.BENCH_CPU_PROF ? ["--cpu-prof", `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : [];
    const child = spawn(process.execPath, [...prof, "--import", "tsx", entry, name, ...(quick ? ["--quick"] : [])], {
      cwd: root,
      stdio: ["ignore", "pipe", "pipe"],
      // Its own process group, so a scenario past its limit is stopped with its children.
      detached: true,
    });
    let out = "";
    let err = "";
    child.stdout.on("data", (c: Buffer) => (out += c.toString()));
    child.stderr.on("data", (c: Buffer) => (err += c.toString()));
    const timer = setTimeout(() => {
      try {
        process.kill(-child.pid!, "SIGKILL");
      } catch {
        child.kill("SIGKILL");
      }
    }, limitOf(name));
    child.on("exit", (code, signal) => {
      clearTimeout(timer);
      const wallMs = performance.now() - t0;
      const line = out.split("\n").find((l) => l.startsWith("BENCH_RESULT "));
      if (line) return resolve({ result: JSON.parse(line.slice("BENCH_RESULT ".length)) as ScenarioResult, wallMs });
      const why = signal === "SIGKILL" ? `stopped after the ${limitOf(name) / 1000} s limit` : `exited ${code ?? signal}`;
      resolve({ error: `${why}: ${(err || out).trim().split("\n").slice(-8).join("\n")}`, wallMs });
    });
  });

const formatValue = (f: BenchFigure): string => {
  const v = Number.isInteger(f.value) ? f.value.toLocaleString("en-US") : String(f.value);
  return f.unit ? `${v} ${f.unit}` : v;
};
const formatGoal = (f: BenchFigure): string => (f.goal ? `${f.goal.op === "<=" ? "≤" : "≥"} ${f.goal.target.toLocaleString("en-US")}${f.unit ? ` ${f.unit}` : ""}` : "");

const machine = {
  cpu: cpus()[0]?.model ?? "unknown",
  cores: cpus().length,
  memoryGb: Math.round(totalmem() / 1024 ** 3),
  node: process.version,
  platform: `${process.platform} ${process.arch}`,
  date: new Date().toISOString(),
  /** Other work on the machine skews wall times: the 1-minute load average at the start. */
  loadAverageAtStart: Number(loadavg()[0]!.toFixed(2)),
};

process.stdout.write(
  `omnibatch bench${quick ? " --quick" : ""}: ${chosen.join(", ")}\n` +
    `machine: ${machine.cpu}, ${machine.cores} cores, ${machine.memoryGb} GB, node ${machine.node}, ${machine.date}, load average ${machine.loadAverageAtStart}\n\n`,
);

const started = performance.now();
const results: Record<string, { wallMs: number; result?: ScenarioResult; error?: string }> = {};
const rows: BenchFigure[] = [];
for (const name of chosen) {
  process.stdout.write(`running ${name}...`);
  const r = await runScenario(name);
  results[name] = r;
  // A failure shows the scenario child's last lines (its stderr when it wrote any), not
  // only the first line of the reason.
  const why = r.error ? `FAILED: ${r.error.split("\n").join("\n    ")}` : "";
  process.stdout.write(` ${(r.wallMs / 1000).toFixed(1)} s${why ? ` ${why}` : ""}\n`);
  if (r.result) rows.push(...r.result.figures);
  else rows.push({ scenario: name, figure: "(did not complete)", value: Number.NaN, unit: "", note: r.error?.split("\n")[0] ?? "" });
}
const totalMs = performance.now() - started;

const table = rows.map((f) => {
  const ok = passes(f);
  return [f.scenario, f.figure, Number.isNaN(f.value) ? "-" : formatValue(f), formatGoal(f), ok === undefined ? "" : ok ? "pass" : "MISS", f.note ?? ""];
});
const head = ["scenario", "figure", "value", "goal", "", "note"];
const widths = head.map((h, i) => Math.max(h.length, ...table.map((r) => (i === 5 ? 0 : r[i]!.length))));
const line = (cells: string[]) => cells.map((c, i) => (i === 5 ? c : c.padEnd(widths[i]!))).join("  ").trimEnd();
process.stdout.write(`\n${line(head)}\n${line(widths.map((w) => "-".repeat(w)).slice(0, 5).concat([""]))}\n`);
let lastScenario = "";
for (const r of table) {
  process.stdout.write(`${line(r[0] === lastScenario ? ["", ...r.slice(1)] : r)}\n`);
  lastScenario = r[0]!;
}
const misses = rows.filter((f) => passes(f) === false).length;
const goals = rows.filter((f) => f.goal).length;
const loadAtEnd = Number(loadavg()[0]!.toFixed(2));
process.stdout.write(`\n${goals - misses} of ${goals} goals met; total ${(totalMs / 1000).toFixed(0)} s; load average ${machine.loadAverageAtStart} at the start, ${loadAtEnd} at the end\n`);

const outDir = `${root}bench-results`;
mkdirSync(outDir, { recursive: true });
const json = { mode: quick ? "quick" : "full", machine: { ...machine, loadAverageAtEnd: loadAtEnd }, totalMs, figures: rows.map((f) => ({ ...f, pass: passes(f) })), scenarios: results };
// A quick (CI) run does not replace the full figures that docs/benchmarks.md quotes.
const outFile = quick ? "latest-quick.json" : "latest.json";
writeFileSync(`${outDir}/${outFile}`, `${JSON.stringify(json, null, 2)}\n`);
process.stdout.write(`written: bench-results/${outFile}\n`);
if (Object.values(results).some((r) => r.error)) process.exitCode = 1;
