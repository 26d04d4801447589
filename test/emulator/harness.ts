// Shared helpers of the emulator conformance tests: start an emulator on a random
// loopback port with a config patch, call it over real HTTP, and serve local files
// (test media) from a tiny loopback server.

import { readFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { startEmulator, type DeepPartial, type EmulatorConfig, type RunningEmulator } from "../../src/emulator/Emulator.js";

export interface Reply<D = any> {
  status: number;
  headers: Headers;
  body: { code: number; message: string; request_id: string; data?: D };
}

/** Fixed, long durations: tests move the clock instead of waiting. */
export const fixedTiming = {
  video: { queuedMs: [10_000, 10_000] as [number, number], processingMs: [50_000, 50_000] as [number, number] },
  image: { queuedMs: [5_000, 5_000] as [number, number], processingMs: [20_000, 20_000] as [number, number] },
  scale: 1,
};

export const start = (patch: DeepPartial<EmulatorConfig> = {}): Promise<RunningEmulator> =>
  startEmulator({ timing: fixedTiming, ...patch });

export class Client {
  constructor(
    readonly emu: RunningEmulator,
    readonly key: string = emu.apiKey,
  ) {}

  async raw(method: string, path: string, init: { body?: string; headers?: Record<string, string> } = {}): Promise<Reply> {
    const res = await fetch(this.emu.url + path, {
      method,
      headers: { authorization: `Bearer ${this.key}`, ...(init.body !== undefined ? { "content-type": "application/json" } : {}), ...init.headers },
      ...(init.body !== undefined ? { body: init.body } : {}),
    });
    const text = await res.text();
    return { status: res.status, headers: res.headers, body: JSON.parse(text) };
  }

  post(path: string, body: unknown): Promise<Reply> {
    return this.raw("POST", path, { body: JSON.stringify(body) });
  }

  get(path: string): Promise<Reply> {
    return this.raw("GET", path);
  }

  createVideo(body: unknown): Promise<Reply> {
    return this.post("/omni-video/kling-o1", body);
  }

  createImage(body: unknown): Promise<Reply> {
    return this.post("/v1/images/omni-image", body);
  }
}

/** A minimal valid A1 body. */
export const videoBody = (extra: { text?: string; external?: string; settings?: object; options?: object } = {}) => ({
  contents: [{ type: "prompt", text: extra.text ?? "a lighthouse at dusk, slow pan" }],
  settings: { aspect_ratio: "16:9", ...extra.settings },
  options: { ...(extra.external !== undefined ? { external_task_id: extra.external } : {}), ...extra.options },
});

export const imageBody = (extra: Record<string, unknown> = {}) => ({ prompt: "a red bicycle against a white wall", ...extra });

export const fixture = (name: string): Buffer => readFileSync(new URL(`../fixtures/media/${name}`, import.meta.url));

/** Serves files by name from an in-memory map on a loopback port. */
export const fileServer = async (files: Record<string, Buffer | Uint8Array>): Promise<{ url: string; close: () => Promise<void>; server: Server }> => {
  const server = createServer((req: IncomingMessage, res) => {
    const name = decodeURIComponent((req.url ?? "/").slice(1));
    const f = files[name];
    if (!f) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { "content-length": f.length }).end(f);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    server,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
};

export const inspect = async <T = any>(emu: RunningEmulator, path: string, body?: unknown): Promise<{ status: number; body: T }> => {
  const res = await fetch(emu.url + path, body === undefined ? {} : { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as T };
};
