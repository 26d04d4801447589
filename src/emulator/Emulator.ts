// The emulator as a running HTTP server: the routing of each request to its handler
// (the /_emulator inspection endpoints, result downloads, the six operations), around
// one EmulatorCore (the account, its clock, faults, callbacks and figures).
// startEmulator is the programmatic API used by tests, benchmarks, `--emulate` and
// `omnibatch emulator`.

import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { fail } from "./Answer.js";
import { handleApiRequest } from "./ApiRequest.js";
import { ApiRouter } from "./ApiRoutes.js";
import { sendAnswer } from "./AnswerWriter.js";
import type { DeepPartial, EmulatorConfig } from "./EmulatorConfig.js";
import { EmulatorCore, type EmulatorStats } from "./EmulatorCore.js";
import type { EmulatorState } from "./EmulatorState.js";
import { handleInspection } from "./InspectionEndpoints.js";
import { handleDownload } from "./ResultDownloads.js";
import type { SlotSample } from "./SlotPool.js";

export type { DeepPartial, EmulatorConfig } from "./EmulatorConfig.js";
export type { EmulatorState } from "./EmulatorState.js";
export type { EmulatorStats } from "./EmulatorCore.js";
export { defaultEmulatorConfig, realisticTiming } from "./EmulatorConfig.js";
export { EmulatorConfigInvalid } from "./EmulatorConfigInvalid.js";
export { resolveEmulatorConfig } from "./EmulatorCore.js";

export interface RunningEmulator {
  /** e.g. http://127.0.0.1:43121 */
  readonly url: string;
  /** The accepted bearer key. */
  readonly apiKey: string;
  readonly config: EmulatorConfig;
  /** Changes knobs at run time (faults, slots, timing, billing...). Throws EmulatorConfigInvalid. */
  configure(patch: DeepPartial<EmulatorConfig>): void;
  stats(): EmulatorStats;
  /** Moves the emulator clock forward. */
  advanceClock(ms: number): void;
  /** The emulator clock (Unix ms). */
  now(): number;
  /** Occupancy samples over time (bounded). */
  slotTimeline(): readonly SlotSample[];
  /** Forgets every task and figure; the clock returns to wall time. */
  reset(): void;
  /** The account's tasks and clock, for a later emulator to take up (EmulatorState.ts). */
  saveState(): EmulatorState;
  /** Takes up a saved account (its tasks, ids and clock). Only before this emulator's first task: throws otherwise. */
  restoreState(state: EmulatorState): void;
  close(): Promise<void>;
}

/** Routes one request: inspection, a result file, or an operation (a wrong path or method: 404, 1202). */
const route = async (core: EmulatorCore, router: ApiRouter, req: IncomingMessage, res: ServerResponse): Promise<void> => {
  const raw = req.url ?? "/";
  const q = raw.indexOf("?");
  const rawPath = q < 0 ? raw : raw.slice(0, q);
  const search = q < 0 ? "" : raw.slice(q + 1);
  if (rawPath.startsWith("/_emulator/")) return handleInspection(core, req, res, rawPath);
  if (rawPath.startsWith("/_files/")) return handleDownload(core, req, res, rawPath, search);
  const method = req.method ?? "GET";
  const { endpoint, imageId, allowed, path } = router.route(core.config.service, rawPath, method);
  if (endpoint === undefined) {
    // The service's error table: a wrong method on a known path is HTTP 404 code 1202.
    if (allowed.length > 0) return sendAnswer(core, res, fail(404, 1202, `invalid method ${method} for ${path}; allowed: ${allowed.join(", ")}`), { allow: allowed.join(", ") });
    return sendAnswer(core, res, fail(404, 1202, `no such API: ${method} ${path}`));
  }
  return handleApiRequest(core, req, res, endpoint, imageId, search);
};

export const startEmulator = async (
  configPatch?: DeepPartial<EmulatorConfig>,
  opts: { host?: string; port?: number } = {},
): Promise<RunningEmulator> => {
  const core = new EmulatorCore(configPatch);
  const router = new ApiRouter();
  const server = createServer({ keepAliveTimeout: 30_000, requestTimeout: 120_000 }, (req, res) => {
    route(core, router, req, res).catch((e: unknown) => {
      if (res.headersSent || res.destroyed) {
        res.destroy();
        return;
      }
      sendAnswer(core, res, fail(500, 5000, `emulator internal error: ${(e as Error)?.message ?? String(e)}`));
    });
  });
  server.on("connection", (s) => {
    core.sockets.add(s);
    s.on("close", () => core.sockets.delete(s));
  });
  server.on("clientError", (_err, socket) => {
    if (socket.writable) socket.end("HTTP/1.1 400 Bad Request\r\nconnection: close\r\ncontent-length: 0\r\n\r\n");
    else socket.destroy();
  });

  const host = opts.host ?? "127.0.0.1";
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port ?? 0, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const urlHost = address.family === "IPv6" || host.includes(":") ? `[${address.address}]` : address.address === "0.0.0.0" ? "127.0.0.1" : address.address;
  const baseUrl = `http://${urlHost}:${address.port}`;
  core.setBaseUrl(baseUrl);
  core.startTicking();

  let closed: Promise<void> | undefined;
  return {
    url: baseUrl,
    get apiKey() {
      return core.config.apiKey;
    },
    get config() {
      return core.config;
    },
    configure: (patch) => core.configure(patch),
    stats: () => core.stats(),
    advanceClock: (ms) => core.advanceClock(ms),
    now: () => core.clock.now(),
    slotTimeline: () => core.store.slots.timeline(),
    reset: () => core.reset(),
    saveState: () => core.saveState(),
    restoreState: (state: EmulatorState) => core.restoreState(state),
    close: () => {
      closed ??= new Promise<void>((resolve) => {
        core.stopTicking();
        core.callbacks.cancelAll();
        server.close(() => resolve());
        for (const s of core.sockets) s.destroy();
      });
      return closed;
    },
  };
};
