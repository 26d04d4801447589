// Scenario 7, CLI latency: how long a user waits for `omnibatch validate` of the demo
// manifest and for `omnibatch --help`, running the built CLI (dist/) as a user does: the
// file package.json "bin" names (the CommonJS launcher, src/cli/launcher.ts), with the ES
// module entry (dist/cli/bin.js) it hands commands to measured beside it for `--help`.
// Each command runs several times one after another; the median wall time is held to
// the goal (the minimum is printed too: on a shared machine it is the figure least
// disturbed by other work).

import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, readdirSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { round, type BenchFigure, type ScenarioResult } from "./BenchFigure.js";

const root = fileURLToPath(new URL("../..", import.meta.url));
const esmBin = join(root, "dist/cli/bin.js");
const bin = join(root, (JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { bin: { omnibatch: string } }).bin.omnibatch);

const newestIn = (dir: string): number =>
  readdirSync(dir, { withFileTypes: true }).reduce((newest, e) => {
    const path = join(dir, e.name);
    return Math.max(newest, e.isDirectory() ? newestIn(path) : statSync(path).mtimeMs);
  }, 0);

/** Runs `node ...argv` (the CLI's file first, unless a bare node start is measured). */
const measure = (argv: string[], runs: number) => {
  const walls: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    const r = spawnSync(process.execPath, argv, { cwd: root, encoding: "utf8", env: { ...process.env, OMNIBATCH_API_KEY: "" } });
    walls.push(performance.now() - t0);
    if (r.status !== 0) throw new Error(`cli: node ${argv.join(" ")} exited ${r.status}: ${r.stderr}`);
  }
  const sorted = [...walls].sort((a, b) => a - b);
  return { medianMs: sorted[Math.floor(sorted.length / 2)]!, minMs: sorted[0]!, runs, walls };
};

export const cliLatency = async (o: { runs: number; label: string }): Promise<ScenarioResult> => {
  if (!existsSync(bin)) throw new Error("cli: dist/ is missing: run `npm run build` first");
  if (newestIn(join(root, "src")) > statSync(bin).mtimeMs && newestIn(join(root, "src")) > newestIn(join(root, "dist"))) {
    throw new Error("cli: dist/ is older than src/: run `npm run build` first");
  }
  // One run of each first, not counted: the file system cache warm, as a user's second run.
  measure([bin, "--help"], 1);
  measure([bin, "validate", "manifests/demo.yaml"], 1);
  measure([esmBin, "--help"], 1);
  // Alternated run by run, so a burst of other work on a shared machine falls on all alike.
  const runs = Array.from({ length: o.runs }, () => ({
    help: measure([bin, "--help"], 1),
    esmHelp: measure([esmBin, "--help"], 1),
    validate: measure([bin, "validate", "manifests/demo.yaml"], 1),
    bare: measure(["-e", "0"], 1),
  }));
  const merged = (pick: (r: (typeof runs)[number]) => ReturnType<typeof measure>) => {
    const walls = runs.map((r) => pick(r).walls[0]!);
    const sorted = [...walls].sort((a, b) => a - b);
    return { medianMs: sorted[Math.floor(sorted.length / 2)]!, minMs: sorted[0]!, runs: walls.length, walls };
  };
  const help = merged((r) => r.help);
  const esmHelp = merged((r) => r.esmHelp);
  const validate = merged((r) => r.validate);
  const bare = merged((r) => r.bare);
  const s = o.label;
  // On a shared machine every start is slower alike: what the CLI adds is the figure above Node's own start.
  const above = (m: { medianMs: number }) => `${Math.round(m.medianMs - bare.medianMs)} ms above node -e 0`;
  const figures: BenchFigure[] = [
    { scenario: s, figure: "validate demo.yaml wall (median)", value: Math.round(validate.medianMs), unit: "ms", goal: { op: "<=", target: 300 }, note: `min ${Math.round(validate.minMs)} ms of ${o.runs} runs; ${above(validate)}; built CLI` },
    { scenario: s, figure: "--help wall (median)", value: Math.round(help.medianMs), unit: "ms", goal: { op: "<=", target: 150 }, note: `min ${Math.round(help.minMs)} ms of ${o.runs} runs; ${above(help)}; the installed executable (${relative(root, bin)})` },
    { scenario: s, figure: "  --help wall through bin.js (median)", value: Math.round(esmHelp.medianMs), unit: "ms", note: `min ${Math.round(esmHelp.minMs)} ms; ${above(esmHelp)}: the ES module entry, as before the launcher` },
    { scenario: s, figure: "node -e 0 wall (median)", value: Math.round(bare.medianMs), unit: "ms", note: `min ${Math.round(bare.minMs)} ms: node's own start, the floor under both` },
  ];
  return { figures, details: { help, esmHelp, validate, node: bare } };
};
