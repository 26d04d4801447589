// Measures what the current process spends between start() and stop(): CPU time (user +
// system) and peak resident memory, sampled every few milliseconds (VmHWM cannot be reset
// between two scenarios of one process, so peaks are sampled instead).

export interface ResourceFigures {
  readonly wallMs: number;
  readonly cpuUserMs: number;
  readonly cpuSystemMs: number;
  readonly peakRssMb: number;
}

export interface ResourceMeter {
  stop(): ResourceFigures;
}

export const startResourceMeter = (sampleEveryMs = 20): ResourceMeter => {
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  let peak = process.memoryUsage.rss();
  const timer = setInterval(() => {
    const rss = process.memoryUsage.rss();
    if (rss > peak) peak = rss;
  }, sampleEveryMs);
  timer.unref();
  return {
    stop: () => {
      clearInterval(timer);
      const rss = process.memoryUsage.rss();
      if (rss > peak) peak = rss;
      const cpu = process.cpuUsage(cpu0);
      return {
        wallMs: performance.now() - t0,
        cpuUserMs: cpu.user / 1000,
        cpuSystemMs: cpu.system / 1000,
        peakRssMb: peak / (1024 * 1024),
      };
    },
  };
};
