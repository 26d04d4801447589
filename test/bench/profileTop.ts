// Reads V8 .cpuprofile files (from `node --cpu-prof`, or the bench's BENCH_CPU_PROF) and
// prints where the time went: the functions with the most self time, the source files with
// the most self time, and the inclusive time of project functions. Several profiles (the
// processes of one run, e.g. `/tmp/prof/CPU.*.cpuprofile`) are added together.
// Usage: node --import tsx test/bench/profileTop.ts FILE.cpuprofile... [--top N | N]
// (rows per table, default 25: `--top N`, or a last argument that is a plain number and not a file).

import { existsSync, readFileSync } from "node:fs";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const usage = () => {
  process.stderr.write("usage: profileTop.ts FILE.cpuprofile... [--top N | N]\n");
  process.exit(2);
};
const args = process.argv.slice(2);
let top = 25;
const topAt = args.indexOf("--top");
if (topAt >= 0) {
  top = Number(args[topAt + 1]);
  args.splice(topAt, 2);
} else if (args.length > 1 && /^\d+$/.test(args.at(-1)!) && !existsSync(args.at(-1)!)) {
  top = Number(args.pop());
}
if (args.length === 0 || !Number.isInteger(top) || top <= 0) usage();
const profiles = args.map((file) => JSON.parse(readFileSync(file, "utf8")) as Profile);

// Self time per node, each node keyed by its profile (node ids restart in every profile).
const selfUs = new Map<ProfileNode, number>();
for (const p of profiles) {
  const byId = new Map(p.nodes.map((n) => [n.id, n] as const));
  p.samples.forEach((id, i) => {
    const n = byId.get(id)!;
    selfUs.set(n, (selfUs.get(n) ?? 0) + (p.timeDeltas[i] ?? 0));
  });
}
const total = [...selfUs.values()].reduce((a, b) => a + b, 0);

const short = (url: string) =>
  url.replace(/^file:\/\//, "").replace(/^.*\/work\/(main|wt\/[^/]+)\//, "").replace(/^.*node_modules\//, "nm/");
const fnKey = (n: ProfileNode) => `${n.callFrame.functionName || "(anonymous)"}  ${short(n.callFrame.url)}:${n.callFrame.lineNumber + 1}`;
const fileKey = (n: ProfileNode) => short(n.callFrame.url) || n.callFrame.functionName;

const sum = (key: (n: ProfileNode) => string) => {
  const m = new Map<string, number>();
  for (const [n, us] of selfUs) m.set(key(n), (m.get(key(n)) ?? 0) + us);
  return [...m.entries()].sort((a, b) => b[1] - a[1]);
};

const print = (title: string, rows: [string, number][]) => {
  process.stdout.write(`\n${title} (total ${(total / 1000).toFixed(0)} ms sampled)\n`);
  for (const [k, us] of rows.slice(0, top)) {
    process.stdout.write(`${((us / total) * 100).toFixed(1).padStart(5)}%  ${(us / 1000).toFixed(0).padStart(7)} ms  ${k}\n`);
  }
};

print("self time by function", sum(fnKey));
print("self time by file", sum(fileKey));

// Inclusive time of project functions (src/): the time spent under each.
const parent = new Map<ProfileNode, ProfileNode>();
for (const p of profiles) {
  const byId = new Map(p.nodes.map((n) => [n.id, n] as const));
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(byId.get(c)!, n);
}
const inclusive = new Map<string, number>();
for (const [node, us] of selfUs) {
  const seen = new Set<string>();
  for (let n: ProfileNode | undefined = node; n !== undefined; n = parent.get(n)) {
    if (!/\/(src|dist)\//.test(n.callFrame.url) || n.callFrame.url.includes("node_modules")) continue;
    const k = fnKey(n);
    if (seen.has(k)) continue;
    seen.add(k);
    inclusive.set(k, (inclusive.get(k) ?? 0) + us);
  }
}
print("inclusive time of project (src/) functions", [...inclusive.entries()].sort((a, b) => b[1] - a[1]));

// Time by area (issue 13's breakdown): each sample goes to the first frame, from the leaf up,
// whose file belongs to an area below (native calls, node:fs, events and timers are passed
// through to their caller, so an fsync counts where it was asked for).
const areas: [string, RegExp][] = [
  ["gc", /^\(garbage collector\)$/],
  ["idle", /^\(idle\)$/],
  ["effect runtime", /nm\/effect\//],
  ["node-fetch", /nm\/node-fetch\//],
  ["node http/net/streams", /^node:(_http|net|internal\/streams|internal\/stream_base|stream|internal\/http|internal\/url|url|dns|internal\/dns)/],
  ["api client (httpTransport)", /src\/api\/httpTransport|dist\/api\/httpTransport/],
  ["api client (answers, schemas, json)", /(src|dist)\/api\/|validate\d*$/],
  ["dns guard", /(src|dist)\/protocol\/AddressClass/],
  ["run lock checks", /(src|dist)\/state\/RunLock/],
  ["lockfile journal", /(src|dist)\/state\//],
  ["downloads (fs, fsyncs, folder guard)", /(src|dist)\/(outputs|fs)\//],
  ["reports and sidecars", /(src|dist)\/report\//],
  ["engine", /(src|dist)\/engine\//],
  ["other project", /(src|dist)\//],
];
const areaUs = new Map<string, number>();
for (const [node, us] of selfUs) {
  let area: string | undefined;
  for (let n: ProfileNode | undefined = node; n !== undefined && area === undefined; n = parent.get(n)) {
    const key = short(n.callFrame.url) || n.callFrame.functionName;
    for (const [name, re] of areas) if (re.test(key) || (name === "api client (answers, schemas, json)" && re.test(n.callFrame.functionName) && n.callFrame.url === "")) { area = name; break; }
  }
  const k = area ?? `other: ${fileKey(node)}`;
  areaUs.set(k, (areaUs.get(k) ?? 0) + us);
}
print("time by area (first area frame from the leaf up)", [...areaUs.entries()].sort((a, b) => b[1] - a[1]));
