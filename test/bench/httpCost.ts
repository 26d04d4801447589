// Micro-benchmark of the HTTP path (issue 13, runner CPU per task): the three requests of
// a throughput task (create an image, query it, download its result) sent N times, and
// the CPU this process spent per task, through the client (OmniClient), through bare
// node-fetch, and through bare node:http, against the emulator in its own process on
// loopback. Separates what HTTP costs from what the client adds around it.
// Usage: node --import tsx test/bench/httpCost.ts [N] [concurrency] [which,...]
//   which: client, client-sink (download written to a folder), fetch, http, transport
//   (the client's transport, httpTransport.ts, without the client around it) (default: all)

import http from "node:http";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Effect, Redacted } from "effect";
import fetch from "node-fetch";
import { OmniClient, type OmniClientService } from "../../src/api/OmniClient.js";
import { destroyAgents, makeAgents, readBody, sendRequest } from "../../src/api/httpTransport.js";
import { folderSink } from "../../src/outputs/FolderSink.js";
import { startEmulatorProcess } from "./EmulatorProcess.js";

const n = Math.min(20_000, Number(process.argv[2] ?? 2_000));
const concurrency = Math.min(256, Number(process.argv[3] ?? 16));
const which = (process.argv[4] ?? "client,client-sink,fetch,http,transport").split(",");

const emulator = await startEmulatorProcess({ slots: { video: 10, image: 10_000_000 }, timing: { scale: 0 } });
const auth = { Authorization: `Bearer ${emulator.apiKey}`, "Content-Type": "application/json", Accept: "application/json", "User-Agent": "omnibatch" };
const createBody = (i: number) => JSON.stringify({ prompt: `bench ${i}`, resolution: "1k", external_task_id: `http-cost-${Date.now()}-${i}` });

/** Runs `task(i)` for i < count, `concurrency` at a time. */
const pool = async (count: number, task: (i: number) => Promise<void>): Promise<void> => {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, count) }, async () => {
      while (next < count) await task(next++);
    }),
  );
};

/** CPU (user+system, ms) per task of `count` tasks, after a warm-up of 200. */
const measure = async (label: string, task: (i: number) => Promise<void>): Promise<void> => {
  await pool(200, task);
  await emulator.reset();
  global.gc?.();
  queries = 0;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await pool(n, task);
  const cpu = process.cpuUsage(cpu0);
  const wall = performance.now() - t0;
  const ms = (cpu.user + cpu.system) / 1000;
  process.stdout.write(
    `${label.padEnd(12)} ${(ms / n).toFixed(3)} ms CPU per task (user ${(cpu.user / 1000 / n).toFixed(3)}, system ${(cpu.system / 1000 / n).toFixed(3)}), ${(queries / n).toFixed(2)} queries per task, ${Math.round((n * 1000) / wall)} tasks/s\n`,
  );
  await emulator.reset();
};

const imageUrl = (data: unknown): string | undefined => (data as { task_result?: { images?: { url: string }[] } }).task_result?.images?.[0]?.url;

/** Queries sent (a task may still be processing at the first: the emulator settles it on its next tick). */
let queries = 0;
/** Asks `query` until the task has a result, at most 50 times, 1 ms apart. */
const untilDone = async <T>(query: () => Promise<T>, url: (answer: T) => string | undefined): Promise<string> => {
  for (let tries = 0; tries < 50; tries++) {
    queries++;
    const found = url(await query());
    if (found !== undefined) return found;
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  throw new Error("the emulator did not finish a task within 50 queries");
};

const viaClient = (client: OmniClientService, sinkDir?: string) => {
  const sink = sinkDir === undefined ? undefined : folderSink(sinkDir);
  return (i: number) =>
    Effect.runPromise(
      Effect.gen(function* () {
        const created = yield* client.createImage({ prompt: `bench ${i}`, resolution: "1k", external_task_id: `http-cost-${Date.now()}-${i}` });
        const url = yield* Effect.promise(() => untilDone(() => Effect.runPromise(client.getImageChecked(created.task_id)), (c) => imageUrl(c.tasks[0])));
        const response = yield* client.download(url);
        yield* Effect.promise(async () => {
          if (sink === undefined) {
            for await (const _ of response.body) void _;
          } else {
            await sink.write(`t${i % 500}/out-${i}.png`, { body: response.body, type: "image", cap: 100 * 1024 ** 2, ...(response.contentLength !== undefined ? { contentLength: response.contentLength } : {}) }, new AbortController().signal);
          }
        });
      }),
    );
};

const fetchAgent = new http.Agent({ keepAlive: true, maxSockets: 16 });
const viaFetch = async (i: number) => {
  const created = (await (await fetch(`${emulator.url}/v1/images/omni-image`, { method: "POST", headers: auth, body: createBody(i), agent: fetchAgent })).json()) as { data: { task_id: string } };
  const url = await untilDone(
    async () => JSON.parse(await (await fetch(`${emulator.url}/v1/images/omni-image/${created.data.task_id}`, { headers: auth, agent: fetchAgent })).text()) as { data: unknown },
    (got) => imageUrl(got.data),
  );
  const res = await fetch(url, { agent: fetchAgent });
  for await (const _ of res.body!) void _;
};

const httpAgent = new http.Agent({ keepAlive: true, maxSockets: 16 });
const request = (url: string, method: string, headers: Record<string, string>, body?: string) =>
  new Promise<Buffer>((resolve, reject) => {
    const req = http.request(url, { method, headers, agent: httpAgent }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve(Buffer.concat(chunks)));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(body);
  });
const viaHttp = async (i: number) => {
  const created = JSON.parse((await request(`${emulator.url}/v1/images/omni-image`, "POST", auth, createBody(i))).toString()) as { data: { task_id: string } };
  const url = await untilDone(
    async () => JSON.parse((await request(`${emulator.url}/v1/images/omni-image/${created.data.task_id}`, "GET", auth)).toString()) as { data: unknown },
    (got) => imageUrl(got.data),
  );
  await request(url, "GET", { "User-Agent": "omnibatch" });
};

const transportAgents = makeAgents(16);
const exchange = (url: string, method: string, headers: Record<string, string>, body?: string) =>
  new Promise<Buffer>((resolve, reject) => {
    sendRequest(new URL(url), { method, headers: body === undefined ? headers : { ...headers, "Content-Length": String(Buffer.byteLength(body)) }, agents: transportAgents, ...(body === undefined ? {} : { body }) }, (res) => readBody(res, 32 * 1024 ** 2, (error, bytes) => (error ? reject(error) : resolve(bytes))), reject);
  });
const viaTransport = async (i: number) => {
  const created = JSON.parse((await exchange(`${emulator.url}/v1/images/omni-image`, "POST", auth, createBody(i))).toString()) as { data: { task_id: string } };
  const url = await untilDone(
    async () => JSON.parse((await exchange(`${emulator.url}/v1/images/omni-image/${created.data.task_id}`, "GET", auth)).toString()) as { data: unknown },
    (got) => imageUrl(got.data),
  );
  await exchange(url, "GET", { "User-Agent": "omnibatch" });
};

const dir = mkdtempSync(join(tmpdir(), "omnibatch-httpcost-"));
try {
  process.stdout.write(`${n} tasks (create + query + download), ${concurrency} at a time, node ${process.version}\n`);
  await Effect.runPromise(
    Effect.scoped(
      Effect.flatMap(OmniClient.make({ baseUrl: emulator.url, apiKey: Redacted.make(emulator.apiKey) }), (client) =>
        Effect.promise(async () => {
          for (const w of which) {
            if (w === "client") await measure("client", viaClient(client));
            if (w === "client-sink") await measure("client-sink", viaClient(client, dir));
            if (w === "fetch") await measure("node-fetch", viaFetch);
            if (w === "http") await measure("node:http", viaHttp);
            if (w === "transport") await measure("transport", viaTransport);
          }
        }),
      ),
    ),
  );
} finally {
  fetchAgent.destroy();
  httpAgent.destroy();
  destroyAgents(transportAgents);
  await emulator.close();
  rmSync(dir, { recursive: true, force: true });
}
