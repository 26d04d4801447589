// Measures what the current process spends between start() and stop(): CPU time (user +
// system) and peak resident memory. The peak is sampled every 100 ms (each sample reads
// /proc: every 20 ms it cost the throughput scenario about 0.5 ms of CPU per task, a
// tenth of what it measured); where the process did nothing heavier before start(), the
// kernel's own high-water mark (VmHWM, Linux) is read at stop() as well, which misses no
// short peak between two samples. VmHWM cannot be reset, so it is only used when asked.

import { readFileSync } from "node:fs";

export interface ResourceFigures {
  readonly wallMs: number;
  readonly cpuUserMs: number;
  readonly cpuSystemMs: number;
  readonly peakRssMb: number;
}

export interface ResourceMeter {
  stop(): ResourceFigures;
}

export interface ResourceMeterOptions {
  readonly sampleEveryMs?: number;
  /** The process's peak so far is the measured part's (nothing heavier ran before start()): read VmHWM at stop. */
  readonly processPeak?: boolean;
}

/** The process's peak resident memory in bytes (VmHWM), or undefined where /proc does not say. */
const highWaterMark = (): number | undefined => {
  try {
    const kb = /^VmHWM:\s+(\d+)\s+kB$/m.exec(readFileSync("/proc/self/status", "utf8"))?.[1];
    return kb === undefined ? undefined : Number(kb) * 1024;
  } catch {
    return undefined;
  }
};

export const startResourceMeter = (options: ResourceMeterOptions = {}): ResourceMeter => {
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  let peak = process.memoryUsage.rss();
  const timer = setInterval(() => {
    const rss = process.memoryUsage.rss();
    if (rss > peak) peak = rss;
  }, options.sampleEveryMs ?? 100);
  timer.unref();
  return {
    stop: () => {
      clearInterval(timer);
      const cpu = process.cpuUsage(cpu0);
      const wallMs = performance.now() - t0;
      const rss = process.memoryUsage.rss();
      if (rss > peak) peak = rss;
      const hwm = options.processPeak ? highWaterMark() : undefined;
      if (hwm !== undefined && hwm > peak) peak = hwm;
      return {
        wallMs,
        cpuUserMs: cpu.user / 1000,
        cpuSystemMs: cpu.system / 1000,
        peakRssMb: peak / (1024 * 1024),
      };
    },
  };
};
