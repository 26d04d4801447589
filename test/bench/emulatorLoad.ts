// Load measurement of the emulator: starts it in a separate process (the CLI, with
// validation on), drives a keep-alive loopback load of creates and queries from this
// process for a fixed time, and reports throughput and the emulator's CPU time.

import { existsSync, readFileSync } from "node:fs";
import { Agent, request } from "node:http";
import { fileURLToPath } from "node:url";
import { execa } from "execa";

const root = fileURLToPath(new URL("../..", import.meta.url));

export interface EmulatorLoadOptions {
  readonly durationMs: number;
  /** Keep-alive connections, each with one request in flight. */
  readonly connections: number;
  /** Extra flags for `omnibatch emulator`. */
  readonly emulatorArgs?: readonly string[];
}

export interface EmulatorLoadResult {
  /** Answered requests per second over the measured window (creates + queries). */
  readonly requestsPerSecond: number;
  readonly creates: number;
  readonly queries: number;
  /** Requests that did not answer HTTP 200 with code 0. */
  readonly errors: number;
  /** CPU user time the emulator process spent during the window. */
  readonly cpuUserMs: number;
  /** CPU system time (mostly socket I/O) of the emulator process during the window. */
  readonly cpuSystemMs: number;
  /** Requests per second of emulator CPU (user + system): what one core could serve. */
  readonly requestsPerCpuSecond: number;
}

interface Reply {
  status: number;
  body: string;
}

const call = (agent: Agent, base: URL, method: string, path: string, key: string, body?: string): Promise<Reply> =>
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
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") }));
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(body);
  });

const emulatorCommand = (): { file: string; args: string[] } => {
  const built = `${root}dist/cli/bin.js`;
  return existsSync(built)
    ? { file: process.execPath, args: [built, "emulator"] }
    : { file: process.execPath, args: ["--import", "tsx", `${root}src/cli/bin.ts`, "emulator"] };
};

export const measureEmulatorThroughput = async (opts: EmulatorLoadOptions): Promise<EmulatorLoadResult> => {
  const cmd = emulatorCommand();
  // Slots far above the load, tasks finishing in milliseconds: every create is accepted.
  const child = execa(
    cmd.file,
    [...cmd.args, "--port", "0", "--slots-video", "10000000", "--slots-image", "10000000", "--time-scale", "0.001", ...(opts.emulatorArgs ?? [])],
    { cwd: root, reject: false, stdout: "pipe", stderr: "pipe" },
  );
  try {
    const { url, key } = await new Promise<{ url: string; key: string }>((resolve, reject) => {
      let out = "";
      const timer = setTimeout(() => reject(new Error(`emulator did not start within 20 s:\n${out}`)), 20_000);
      child.stdout!.on("data", (chunk: Buffer) => {
        out += chunk.toString();
        const u = /OMNIBATCH_BASE_URL=(\S+)/.exec(out);
        const k = /OMNIBATCH_API_KEY=(\S+)/.exec(out);
        if (u && k) {
          clearTimeout(timer);
          resolve({ url: u[1]!, key: k[1]! });
        }
      });
      void child.then((r) => reject(new Error(`emulator exited early (${r.exitCode}):\n${out}${r.stderr}`)));
    });
    const base = new URL(url);
    const agent = new Agent({ keepAlive: true, maxSockets: opts.connections });
    const png = readFileSync(`${root}test/fixtures/media/img_300x300.png`).toString("base64");
    const ids: string[] = [];
    let seq = 0;
    const createBody = (): string => {
      seq += 1;
      const withImage = seq % 4 === 0;
      return JSON.stringify({
        contents: [
          { type: "prompt", text: `load test clip ${seq}: a lighthouse at dusk, slow pan${withImage ? " from @start" : ""}` },
          ...(withImage ? [{ type: "first_frame", url: png, id: "start" }] : []),
        ],
        settings: { resolution: "720p", duration: 5, ...(withImage ? {} : { aspect_ratio: "16:9" }) },
        options: { external_task_id: `load-${process.pid}-${seq}` },
      });
    };
    const cpu = async (): Promise<{ cpuUserMs: number; cpuSystemMs: number }> =>
      (JSON.parse((await call(agent, base, "GET", "/_emulator/stats", key)).body) as { process: { cpuUserMs: number; cpuSystemMs: number } }).process;

    let measuring = false;
    let creates = 0;
    let queries = 0;
    let errors = 0;
    const worker = async (stopAt: number, w: number) => {
      let turn = w;
      while (Date.now() < stopAt) {
        turn += 1;
        const isCreate = turn % 2 === 0 || ids.length < 10;
        try {
          const reply = isCreate
            ? await call(agent, base, "POST", "/omni-video/kling-o1", key, createBody())
            : await call(agent, base, "GET", `/tasks?task_ids=${ids.slice(-10).join(",")}`, key);
          const okay = reply.status === 200 && reply.body.startsWith('{"code":0,');
          if (isCreate && okay) {
            const id = (JSON.parse(reply.body) as { data: { id: string } }).data.id;
            ids.push(id);
            if (ids.length > 1000) ids.splice(0, 500);
          }
          if (!measuring) continue;
          if (!okay) errors += 1;
          else if (isCreate) creates += 1;
          else queries += 1;
        } catch {
          if (measuring) errors += 1;
        }
      }
    };
    const warmupMs = Math.min(1000, Math.floor(opts.durationMs / 4));
    await Promise.all(Array.from({ length: opts.connections }, (_, w) => worker(Date.now() + warmupMs, w)));
    const cpuBefore = await cpu();
    measuring = true;
    const started = Date.now();
    await Promise.all(Array.from({ length: opts.connections }, (_, w) => worker(started + opts.durationMs, w)));
    const elapsed = Date.now() - started;
    measuring = false;
    const cpuAfter = await cpu();
    agent.destroy();
    const user = cpuAfter.cpuUserMs - cpuBefore.cpuUserMs;
    const system = cpuAfter.cpuSystemMs - cpuBefore.cpuSystemMs;
    return {
      requestsPerSecond: Math.round(((creates + queries) * 1000) / elapsed),
      creates,
      queries,
      errors,
      cpuUserMs: Math.round(user),
      cpuSystemMs: Math.round(system),
      requestsPerCpuSecond: Math.round(((creates + queries) * 1000) / Math.max(1, user + system)),
    };
  } finally {
    child.kill("SIGTERM");
    await child;
  }
};
