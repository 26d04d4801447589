// The emulator's own cost per image task, as the throughput and scale scenarios use it
// (create, one B2 query, the download of its one tiny result), without a runner: a
// keep-alive loopback load from this process against the bench's emulator process
// (EmulatorProcess). CPU (from /proc) and RSS of the emulator process are read per window
// of tasks, so a cost that grows with the number of tasks held shows as a rising figure.
// `node --import tsx test/bench/emulatorImageLoad.ts [tasks] [connections] [windows]`
// prints one JSON object; BENCH_CPU_PROF=<dir> profiles the emulator process.

import { readFileSync } from "node:fs";
import { Agent, request } from "node:http";
import { startEmulatorProcess } from "./EmulatorProcess.js";
import { processCpuMs } from "./processCpu.js";

export interface ImageLoadWindow {
  /** Tasks held by the emulator when the window ended. */
  readonly tasksHeld: number;
  /** Emulator CPU (user + system) per task over the window. */
  readonly cpuMsPerTask: number;
  readonly rssMb: number;
}

export interface ImageLoadResult {
  readonly tasks: number;
  readonly connections: number;
  readonly errors: number;
  readonly windows: readonly ImageLoadWindow[];
  /** Emulator CPU per task over the whole run. */
  readonly cpuMsPerTask: number;
  /** RSS when idle before the load, and after it (tasks all held). */
  readonly rssBeforeMb: number;
  readonly rssAfterMb: number;
  /** (RSS after - RSS before) / tasks: memory the emulator keeps per task held. */
  readonly rssKbPerTask: number;
  readonly peakRssMb: number;
  readonly wallMs: number;
}

const statusKb = (pid: number, field: string): number => {
  try {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) : Number.NaN;
  } catch {
    return Number.NaN;
  }
};

interface Reply {
  readonly status: number;
  readonly body: Buffer;
}

const call = (agent: Agent, base: URL, key: string, method: string, path: string, body?: string): Promise<Reply> =>
  new Promise((resolve, reject) => {
    const req = request(
      {
        agent,
        host: base.hostname,
        port: base.port,
        method,
        path,
        headers: {
          authorization: `Bearer ${key}`,
          ...(body !== undefined ? { "content-type": "application/json", "content-length": Buffer.byteLength(body) } : {}),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) }));
        res.on("error", reject);
      },
    );
    req.setTimeout(30_000, () => req.destroy(new Error(`${method} ${path}: no answer in 30 s`)));
    req.on("error", reject);
    req.end(body);
  });

export const measureEmulatorImageLoad = async (o: { tasks: number; connections: number; windows: number }): Promise<ImageLoadResult> => {
  const emulator = await startEmulatorProcess({ slots: { video: 10, image: 10_000_000 }, timing: { scale: 0 } });
  const agent = new Agent({ keepAlive: true, maxSockets: o.connections });
  try {
    const base = new URL(emulator.url);
    const key = emulator.apiKey;
    const t0 = performance.now();
    const rssBeforeMb = statusKb(emulator.pid, "VmRSS") / 1024;
    let next = 0;
    let done = 0;
    let errors = 0;
    const windowSize = Math.max(1, Math.ceil(o.tasks / o.windows));
    const windows: ImageLoadWindow[] = [];
    const cpuStart = processCpuMs(emulator.pid);
    let cpuMark = cpuStart;
    let doneMark = 0;
    const oneTask = async (i: number): Promise<void> => {
      const body = JSON.stringify({ prompt: `bench still ${i}, a lighthouse at dusk`, resolution: "1k", external_task_id: `load-${i}` });
      const created = await call(agent, base, key, "POST", "/v1/images/omni-image", body);
      const id = (JSON.parse(created.body.toString("utf8")) as { data?: { task_id?: string } }).data?.task_id;
      if (created.status !== 200 || id === undefined) throw new Error(`create: HTTP ${created.status}`);
      // Bounded: tasks end the moment they start (timing.scale 0), one query suffices.
      for (let attempt = 0; attempt < 100; attempt++) {
        const got = await call(agent, base, key, "GET", `/v1/images/omni-image/${id}`);
        const task = (JSON.parse(got.body.toString("utf8")) as { data?: { task_status?: string; task_result?: { images?: { url: string }[] } } }).data;
        if (task?.task_status === "succeed") {
          const url = new URL(task.task_result!.images![0]!.url);
          const file = await call(agent, base, key, "GET", `${url.pathname}${url.search}`);
          if (file.status !== 200 || file.body.length === 0) throw new Error(`download: HTTP ${file.status}`);
          return;
        }
        if (task?.task_status === "failed") throw new Error("task failed");
        await new Promise((r) => setTimeout(r, 5));
      }
      throw new Error("task did not end after 100 queries");
    };
    const worker = async () => {
      while (next < o.tasks) {
        const i = next++;
        try {
          await oneTask(i);
        } catch {
          errors += 1;
        }
        done += 1;
        if (done - doneMark >= windowSize || done === o.tasks) {
          const cpu = processCpuMs(emulator.pid);
          windows.push({ tasksHeld: done, cpuMsPerTask: (cpu - cpuMark) / (done - doneMark), rssMb: statusKb(emulator.pid, "VmRSS") / 1024 });
          cpuMark = cpu;
          doneMark = done;
        }
      }
    };
    await Promise.all(Array.from({ length: o.connections }, worker));
    const cpuMs = processCpuMs(emulator.pid) - cpuStart;
    const rssAfterMb = statusKb(emulator.pid, "VmRSS") / 1024;
    return {
      tasks: o.tasks,
      connections: o.connections,
      errors,
      windows: windows.map((w) => ({ ...w, cpuMsPerTask: Math.round(w.cpuMsPerTask * 1000) / 1000, rssMb: Math.round(w.rssMb) })),
      cpuMsPerTask: Math.round((cpuMs / o.tasks) * 1000) / 1000,
      rssBeforeMb: Math.round(rssBeforeMb),
      rssAfterMb: Math.round(rssAfterMb),
      rssKbPerTask: Math.round((((rssAfterMb - rssBeforeMb) * 1024) / o.tasks) * 100) / 100,
      peakRssMb: Math.round(statusKb(emulator.pid, "VmHWM") / 1024),
      wallMs: Math.round(performance.now() - t0),
    };
  } finally {
    agent.destroy();
    await emulator.close();
  }
};

if (import.meta.url === `file://${process.argv[1]}`) {
  const [tasks = 20_000, connections = 32, windows = 10] = process.argv.slice(2).map(Number);
  const r = await measureEmulatorImageLoad({ tasks, connections, windows });
  process.stdout.write(`${JSON.stringify(r)}\n`);
}
