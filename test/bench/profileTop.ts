// Reads a V8 .cpuprofile (from `node --cpu-prof`) and prints where the time went: the
// functions with the most self time, and the source files with the most self time.
// Usage: node --import tsx test/bench/profileTop.ts FILE.cpuprofile [N]

import { readFileSync } from "node:fs";

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

const file = process.argv[2];
if (!file) {
  process.stderr.write("usage: profileTop.ts FILE.cpuprofile [N]\n");
  process.exit(2);
}
const top = Number(process.argv[3] ?? 25);
const p = JSON.parse(readFileSync(file, "utf8")) as Profile;
const byId = new Map(p.nodes.map((n) => [n.id, n] as const));
const selfUs = new Map<number, number>();
p.samples.forEach((id, i) => selfUs.set(id, (selfUs.get(id) ?? 0) + (p.timeDeltas[i] ?? 0)));
const total = [...selfUs.values()].reduce((a, b) => a + b, 0);

const short = (url: string) => url.replace(/^file:\/\//, "").replace(/^.*\/work\/main\//, "").replace(/^.*node_modules\//, "nm/");
const fnKey = (n: ProfileNode) => `${n.callFrame.functionName || "(anonymous)"}  ${short(n.callFrame.url)}:${n.callFrame.lineNumber + 1}`;
const fileKey = (n: ProfileNode) => short(n.callFrame.url) || n.callFrame.functionName;

const sum = (key: (n: ProfileNode) => string) => {
  const m = new Map<string, number>();
  for (const [id, us] of selfUs) {
    const n = byId.get(id)!;
    m.set(key(n), (m.get(key(n)) ?? 0) + us);
  }
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
const parent = new Map<number, number>();
for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const inclusive = new Map<string, number>();
for (const [id, us] of selfUs) {
  const seen = new Set<string>();
  for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
    const n = byId.get(cur)!;
    if (!/\/(src|dist)\//.test(n.callFrame.url) || n.callFrame.url.includes("node_modules")) continue;
    const k = fnKey(n);
    if (seen.has(k)) continue;
    seen.add(k);
    inclusive.set(k, (inclusive.get(k) ?? 0) + us);
  }
}
print("inclusive time of project (src/) functions", [...inclusive.entries()].sort((a, b) => b[1] - a[1]));
