// Reads `perf script -F tid,ip,sym,dso` of a run (every thread, kernel included) and prints
// each area's share of the samples (issue 13's breakdown of the throughput run): a sample goes
// to the first frame from the leaf up that belongs to an area (native calls, node:fs, events
// go to their caller); other threads by what they run (V8's JIT compiles and collections,
// the thread pool's fsyncs).
// How (throughputProfile.ts prints the pid, the thread ids and the window):
//   node --perf-basic-prof-only-functions --import tsx test/bench/throughputProfile.ts 20000 src > out.txt &
//   perf record -k CLOCK_MONOTONIC -F 499 -g -p PID -o perf.data
//   perf script -i perf.data --time WINDOW -F tid,ip,sym,dso > perf.txt
//   node --import tsx test/bench/perfAreas.ts perf.txt MAIN_TID [OTHER_TID...]
// (the emulator's threads, children of the same process tree, are left out by the list).

import { readFileSync } from "node:fs";

const [file, main, ...others] = process.argv.slice(2);
if (!file || !main) {
  process.stderr.write("usage: perfAreas.ts perf.txt MAIN_TID [OTHER_TID...]\n");
  process.exit(2);
}
const keep = new Set([main, ...others]);

const areas: [string, RegExp][] = [
  ["effect runtime", /node_modules\/effect\//],
  ["node-fetch", /node_modules\/node-fetch\//],
  ["node http/net/streams", /node:(_http|net|internal\/streams|internal\/stream_base|stream|internal\/http|internal\/url|url|dns|internal\/dns)/],
  ["api client (httpTransport)", /\/api\/httpTransport/],
  ["api client (answers, schemas, json)", /\/(src|dist)\/api\/|JS:\S*validate\d*/],
  ["dns guard", /\/protocol\/AddressClass/],
  ["run lock checks", /\/state\/RunLock/],
  ["lockfile journal", /\/(src|dist)\/state\//],
  ["downloads (fs, fsyncs, folder guard)", /\/(src|dist)\/(outputs|fs)\//],
  ["reports and sidecars", /\/(src|dist)\/report\//],
  ["engine", /\/(src|dist)\/engine\//],
  ["other project", /\/(src|dist)\//],
  ["tsx loader", /node:internal\/modules|tsx/],
];
const gc = /Heap::|Scaveng|MarkCompact|Sweeper|ConcurrentMarking|MinorMC|GCTracer|IncrementalMarking|MemoryAllocator|Evacuat|PointersUpdating|MarkingVisitor|heap::base|cppgc|ArrayBufferSweeper/;
const jit = /OptimizingCompileDispatcher|Maglev|compiler::/;

const total = new Map<string, number>();
const kernel = new Map<string, number>();
let samples = 0;

const areaOf = (tid: string, frames: { sym: string; kernel: boolean }[]): string => {
  const any = (re: RegExp, n = frames.length) => frames.slice(0, n).some((f) => re.test(f.sym));
  if (tid !== main) {
    if (any(jit)) return "thread: v8 JIT compile";
    if (any(gc)) return "thread: v8 GC";
    if (any(/node::worker::Worker/)) return "thread: tsx hooks worker";
    if (frames.some((f) => f.sym === "worker" || f.sym.includes("uv__fs_work"))) {
      return frames.some((f) => f.sym === "fsync" || f.sym === "__x64_sys_fsync") ? "thread: libuv pool fsync" : "thread: libuv pool other";
    }
    return "thread: other";
  }
  if (any(gc, 12)) return "gc (main thread)";
  if (any(/Compiler::|CompileLazy|Maglev|compiler::/, 25)) return "jit (main thread)";
  for (const f of frames) {
    if (!(f.sym.startsWith("JS:") || f.sym.includes("file://") || f.sym.includes("node:"))) continue;
    for (const [name, re] of areas) if (re.test(f.sym)) return name;
  }
  const js = frames.find((f) => f.sym.startsWith("JS:"));
  if (js) return `other main: ${js.sym.replace(/^JS:\S?/, "").slice(0, 70)}`;
  const outer = [...frames].reverse().find((f) => !["[unknown]", "_start", "__libc_start_main", "__libc_start_call_main", "main", "node::Start"].includes(f.sym));
  return `other main: native ${(outer?.sym ?? "?").slice(0, 50)}`;
};

let tid: string | undefined;
let frames: { sym: string; kernel: boolean }[] = [];
const flush = () => {
  if (tid !== undefined && keep.has(tid) && frames.length > 0) {
    const area = areaOf(tid, frames);
    samples++;
    total.set(area, (total.get(area) ?? 0) + 1);
    if (frames[0]!.kernel) kernel.set(area, (kernel.get(area) ?? 0) + 1);
  }
  tid = undefined;
  frames = [];
};
for (const line of readFileSync(file, "utf8").split("\n")) {
  if (line.trim() === "") {
    flush();
    continue;
  }
  if (/^\s*\d+\s*$/.test(line)) {
    flush();
    tid = line.trim();
    continue;
  }
  const m = /^\s*[0-9a-f]+ (.*) \((.*)\)\s*$/.exec(line);
  if (m) frames.push({ sym: m[1]!, kernel: m[2]!.startsWith("[kernel") });
}
flush();
process.stdout.write(`samples ${samples}\n`);
for (const [area, n] of [...total].sort((a, b) => b[1] - a[1]).slice(0, 40)) {
  process.stdout.write(
    `${((100 * n) / samples).toFixed(1).padStart(5)}%  ${String(n).padStart(6)}  (kernel ${((100 * (kernel.get(area) ?? 0)) / n).toFixed(0).padStart(3)}%)  ${area}\n`,
  );
}
