// Micro-benchmark of the file-system floor of a throughput task (issue 13): what writing one
// small result durably costs in CPU (this process, every thread: the fsyncs run in the
// thread pool), whatever the code around it. Per file, the downloader's own sequence, step
// by step: a task folder made, a temp file created, written (3 KB, the emulator's image),
// fsynced, closed, renamed into place, the folder fsynced (its entry in the job folder
// fsynced too, shared by the files made together: every 16 here), then the same with the
// fsyncs left out, and a task.json sidecar (temp file, write, rename; no fsync).
// Usage: node --import tsx test/bench/fsCost.ts [files] [dir]

import { closeSync, fsync, mkdirSync, mkdtempSync, openSync, renameSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const n = Number(process.argv[2] ?? 2_000);
const root = mkdtempSync(join(process.argv[3] ?? tmpdir(), "omnibatch-fs-cost-"));
const data = Buffer.alloc(3_013, 7);
const fsyncFd = (fd: number) => new Promise<void>((resolve, reject) => fsync(fd, (e) => (e ? reject(e) : resolve())));
const fsyncDir = async (dir: string) => {
  const fd = openSync(dir, "r");
  try {
    await fsyncFd(fd);
  } finally {
    closeSync(fd);
  }
};

const measure = async (label: string, one: (i: number, job: string) => Promise<void>, concurrency = 16) => {
  const job = join(root, label);
  mkdirSync(job);
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < n) await one(next++, job);
    }),
  );
  const cpu = process.cpuUsage(cpu0);
  process.stdout.write(
    `${label.padEnd(22)} ${((cpu.user + cpu.system) / 1000 / n).toFixed(3)} ms CPU per file (user ${(cpu.user / 1000 / n).toFixed(3)}, system ${(cpu.system / 1000 / n).toFixed(3)}), wall ${((performance.now() - t0) / n).toFixed(3)} ms per file at ${concurrency} at a time\n`,
  );
};

const durable = (sync: boolean) => async (i: number, job: string) => {
  const folder = join(job, String(i));
  mkdirSync(folder);
  const temp = join(folder, `.image-1.png.${process.pid}.${i}.part`);
  const fd = openSync(temp, "w");
  writeSync(fd, data);
  if (sync) await fsyncFd(fd);
  closeSync(fd);
  renameSync(temp, join(folder, "image-1.png"));
  if (sync) {
    await fsyncDir(folder);
    if (i % 16 === 0) await fsyncDir(job);
  }
};

try {
  await measure("durable (2.06 fsyncs)", durable(true));
  await measure("same, no fsync", durable(false));
  await measure("sidecar (temp, rename)", async (i, job) => {
    const folder = join(root, "durable (2.06 fsyncs)", String(i));
    const temp = join(folder, `.task.json.${process.pid}.${i}.tmp`);
    const fd = openSync(temp, "w");
    writeSync(fd, data.subarray(0, 973));
    closeSync(fd);
    renameSync(temp, join(folder, "task.json"));
  });
} finally {
  rmSync(root, { recursive: true, force: true });
}
