// A tool, not a scenario: compares two V8 heap snapshots (heapProbe.ts writes them) by
// node type and constructor name: count and self size in each, and the growth between
// them per task, largest first. What the runner keeps per task shows as the rows that
// grow with the tasks done.
// `node --max-old-space-size=4096 --import tsx test/bench/heapDiff.ts A.heapsnapshot B.heapsnapshot TASKS-BETWEEN [rows]`

import { readFileSync } from "node:fs";

interface Row {
  count: number;
  size: number;
}

const summarise = (path: string): Map<string, Row> => {
  const snap = JSON.parse(readFileSync(path, "utf8")) as {
    snapshot: { meta: { node_fields: string[]; node_types: [string[]] } };
    nodes: number[];
    strings: string[];
  };
  const fields = snap.snapshot.meta.node_fields;
  const types = snap.snapshot.meta.node_types[0];
  const width = fields.length;
  const typeAt = fields.indexOf("type");
  const nameAt = fields.indexOf("name");
  const sizeAt = fields.indexOf("self_size");
  const rows = new Map<string, Row>();
  for (let i = 0; i < snap.nodes.length; i += width) {
    const type = types[snap.nodes[i + typeAt]!]!;
    // Strings by type only (their names are their contents); objects by constructor.
    const name = type === "string" || type === "concatenated string" || type === "sliced string" || type === "number" ? "" : snap.strings[snap.nodes[i + nameAt]!]!.slice(0, 60);
    const key = `${type}:${name}`;
    const row = rows.get(key) ?? { count: 0, size: 0 };
    row.count++;
    row.size += snap.nodes[i + sizeAt]!;
    rows.set(key, row);
  }
  return rows;
};

const [a, b, between, top] = process.argv.slice(2);
if (!a || !b || !between) throw new Error("usage: heapDiff.ts A B TASKS-BETWEEN [rows]");
const ra = summarise(a);
const rb = summarise(b);
const n = Number(between);
const keys = new Set([...ra.keys(), ...rb.keys()]);
const diff = [...keys].map((k) => {
  const x = ra.get(k) ?? { count: 0, size: 0 };
  const y = rb.get(k) ?? { count: 0, size: 0 };
  return { k, dc: y.count - x.count, ds: y.size - x.size, size: y.size };
});
diff.sort((p, q) => q.ds - p.ds);
const total = (r: Map<string, Row>) => [...r.values()].reduce((s, v) => s + v.size, 0);
process.stdout.write(`total self size: ${(total(ra) / 1048576).toFixed(1)} MB → ${(total(rb) / 1048576).toFixed(1)} MB; ${((total(rb) - total(ra)) / n).toFixed(0)} B per task\n`);
process.stdout.write("bytes/task  objects/task  key\n");
for (const d of diff.slice(0, Number(top ?? 40))) {
  process.stdout.write(`${(d.ds / n).toFixed(1).padStart(10)}  ${(d.dc / n).toFixed(2).padStart(12)}  ${d.k}\n`);
}
