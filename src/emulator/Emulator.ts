// The emulator as a running HTTP server: routing, authentication, the envelope, body
// limits, fault injection, result downloads and the /_emulator inspection endpoints,
// around the task store and the six operations (ApiHandlers). startEmulator is the
// programmatic API used by tests, benchmarks, `--emulate` and `omnibatch emulator`.

import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import type { RuleContext } from "../rules/index.js";
import { parseExact } from "../api/exactJson.js";
import { fail, type Answer } from "./Answer.js";
import { EmulatorApi } from "./ApiHandlers.js";
import { CallbackSender, type CallbackFigures } from "./CallbackSender.js";
import { EmulatorClock } from "./Clock.js";
import type { EmulatorState } from "./EmulatorState.js";
import {
  configProblems,
  defaultEmulatorConfig,
  mergeConfig,
  unknownKeys,
  type DeepPartial,
  type EmulatorConfig,
  type EndpointName,
} from "./EmulatorConfig.js";
import { configInvalid } from "./EmulatorConfigInvalid.js";
import { elementLookup } from "./ElementLibrary.js";
import { echoInFailures, externalIdOf, malformTask, mapTaskItems, unrequestedTask } from "./AnswerTampering.js";
import { FaultInjector } from "./FaultInjector.js";
import { isLoopbackAddress } from "../protocol/Loopback.js";
import { resultFile } from "./ResultFiles.js";
import type { SlotFigures, SlotSample } from "./SlotPool.js";
import { phaseAt } from "./Task.js";
import { TaskStore } from "./TaskStore.js";
import { imageTaskView, resultsDeleted, videoTaskView, type ViewContext } from "./TaskViews.js";
import { UrlSigner } from "./UrlSigner.js";

export type { DeepPartial, EmulatorConfig } from "./EmulatorConfig.js";
export type { EmulatorState } from "./EmulatorState.js";
export { defaultEmulatorConfig, realisticTiming } from "./EmulatorConfig.js";
export { EmulatorConfigInvalid } from "./EmulatorConfigInvalid.js";

export interface EmulatorStats {
  /** The emulator clock (Unix ms). */
  readonly now: number;
  /** Requests per endpoint name (video.create, video.query, video.cursor, image.create, image.get, image.list, download). */
  readonly requests: Record<string, number>;
  /** Error answers per envelope code. */
  readonly rejections: Record<string, number>;
  /** Tasks actually created per external_task_id. */
  readonly creates: Record<string, number>;
  readonly tasks: {
    readonly total: number;
    readonly video: number;
    readonly image: number;
    readonly byStatus: { readonly submitted: number; readonly processing: number; readonly succeeded: number; readonly failed: number };
    /**
     * Tasks whose end (succeeded or failed) a query answer (A2, A3, B2, B3) showed at least
     * once, as the handler answered (before any fault injected in transit): with no callback
     * accepted, every task whose end a run saw.
     */
    readonly endsAnswered: number;
  };
  readonly slots: { readonly video: SlotFigures; readonly image: SlotFigures };
  /** Emulator-clock time of the first create and of the last task end (null before). */
  readonly firstCreateAt: number | null;
  readonly lastFinishAt: number | null;
  readonly downloads: number;
  readonly bytesServed: number;
  /** How often each fault fired. */
  readonly faults: Record<string, number>;
  readonly callbacks: CallbackFigures;
  /** CPU time of the whole process the emulator runs in (for load measurements). */
  readonly process: { readonly cpuUserMs: number; readonly cpuSystemMs: number };
  /**
   * Client connections open now. A request is counted (`requests`) when its head is read,
   * before its connection's end is: once a client has closed its connections and this is 0,
   * every request it wrote is counted. (In one process a request written just before its
   * client ends is read on a later turn of the event loop, after the client's caller goes on.)
   */
  readonly connections: number;
}

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

/** Merges and checks a config patch; throws EmulatorConfigInvalid naming every problem. */
export const resolveEmulatorConfig = (
  patch: DeepPartial<EmulatorConfig> | undefined,
  base: EmulatorConfig = defaultEmulatorConfig,
  where = "config",
): EmulatorConfig => {
  const unknown = unknownKeys(base, patch);
  const merged = mergeConfig(base, patch);
  const problems = [...unknown.map((k) => `${k} is not a setting of the emulator`), ...configProblems(merged)];
  if (problems.length > 0) throw configInvalid(where, problems);
  return merged;
};

const apiRoutes = (service: string) => ({
  [`/omni-video/${service}-o1`]: { POST: "video.create" },
  "/tasks": { GET: "video.query", POST: "video.cursor" },
  "/v1/images/omni-image": { POST: "image.create", GET: "image.list" },
}) as Record<string, Partial<Record<string, EndpointName>>>;

const imageTaskPrefix = "/v1/images/omni-image/";

type BodyRead = { readonly kind: "ok"; readonly buf: Buffer } | { readonly kind: "too-large"; readonly destroy: boolean } | { readonly kind: "aborted" };

const readBody = (req: IncomingMessage, max: number): Promise<BodyRead> =>
  new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    // Past the limit the rest is read and dropped, so the client gets a clean answer;
    // a body far past it is cut off instead of read forever.
    const hardCap = max * 2 + 16 * 1024 * 1024;
    const finish = (r: BodyRead) => {
      if (!done) {
        done = true;
        resolve(r);
      }
    };
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size <= max) chunks.push(chunk);
      else if (size > hardCap) {
        req.pause();
        finish({ kind: "too-large", destroy: true });
      }
    });
    req.on("end", () => finish(size > max ? { kind: "too-large", destroy: false } : { kind: "ok", buf: Buffer.concat(chunks, size) }));
    req.on("error", () => finish({ kind: "aborted" }));
    req.on("close", () => finish({ kind: "aborted" }));
  });

const delay = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export const startEmulator = async (
  configPatch?: DeepPartial<EmulatorConfig>,
  opts: { host?: string; port?: number } = {},
): Promise<RunningEmulator> => {
  let config = resolveEmulatorConfig(configPatch);
  const getConfig = () => config;
  const clock = new EmulatorClock();
  const signer = new UrlSigner();
  const store = new TaskStore(getConfig);
  const faults = new FaultInjector(getConfig);
  const callbacks = new CallbackSender(getConfig);
  let requests: Record<string, number> = {};
  let rejections: Record<string, number> = {};
  let downloads = 0;
  let bytesServed = 0;
  let requestSeq = 0;
  const requestPrefix = `${Date.now().toString(36)}`;
  let baseUrl = "";

  let viewCache: { config: EmulatorConfig; view: ViewContext } | undefined;
  const view = (): ViewContext => {
    if (viewCache?.config !== config) viewCache = { config, view: { config, signer, baseUrl } };
    return viewCache.view;
  };
  let rulesCache: { elements: EmulatorConfig["elements"]; service: string; modelLimits: boolean; ctx: RuleContext } | undefined;
  const rules = (): RuleContext => {
    if (rulesCache?.elements !== config.elements || rulesCache.service !== config.service || rulesCache.modelLimits !== config.faults.modelLimits) {
      rulesCache = {
        elements: config.elements,
        service: config.service,
        modelLimits: config.faults.modelLimits,
        ctx: { service: config.service, elements: elementLookup(config.elements), modelLimits: config.faults.modelLimits },
      };
    }
    return rulesCache.ctx;
  };

  store.onTransition = ({ task, at }) => {
    if (task.callbackUrl === undefined) return;
    const body = task.kind === "video" ? videoTaskView(view(), task, at) : imageTaskView(view(), task, at);
    callbacks.send(task.id, task.callbackUrl, body);
  };

  let routeCache = { service: config.service, routes: apiRoutes(config.service) };
  const api = new EmulatorApi({ config: getConfig, store, now: () => clock.now(), view, rules });

  const countRequest = (name: string) => {
    requests[name] = (requests[name] ?? 0) + 1;
  };

  /**
   * The headers the live service adds to an answer (config.answers): its request id as
   * `x-request-id`, and `Retry-After` on 1302, 1303 and 5xx (seconds, scaled with the timing).
   */
  const liveHeaders = (answer: Answer, requestId: string): Record<string, string> => {
    const out: Record<string, string> = {};
    const live = config.answers;
    if (live.requestIdHeader) out["x-request-id"] = requestId;
    if (live.retryAfterSec > 0 && (answer.code === 1302 || answer.code === 1303 || answer.http >= 500)) {
      out["retry-after"] = String(Math.max(0.001, Math.round(live.retryAfterSec * config.timing.scale * 1000) / 1000));
    }
    return out;
  };

  const send = (res: ServerResponse, answer: Answer, extraHeaders: Record<string, string> = {}) => {
    if (answer.code !== 0) rejections[answer.code] = (rejections[answer.code] ?? 0) + 1;
    const requestId = `${requestPrefix}-${(++requestSeq).toString(36)}`;
    const envelope: Record<string, unknown> = {
      code: answer.code,
      message: answer.message,
      request_id: requestId,
    };
    if (answer.data !== undefined) envelope["data"] = answer.data;
    const text = JSON.stringify(envelope);
    res.writeHead(answer.http, {
      "content-type": "application/json; charset=utf-8",
      "content-length": Buffer.byteLength(text),
      ...liveHeaders(answer, requestId),
      ...extraHeaders,
    });
    res.end(text);
  };

  const sendJson = (res: ServerResponse, status: number, value: unknown) => {
    const text = JSON.stringify(value);
    res.writeHead(status, { "content-type": "application/json; charset=utf-8", "content-length": Buffer.byteLength(text) });
    res.end(text);
  };

  const stats = (): EmulatorStats => {
    const now = clock.now();
    store.settle(now);
    return {
      now,
      requests: { ...requests },
      rejections: { ...rejections },
      creates: store.createsByExternal(),
      tasks: { total: store.all.length, video: store.videos.length, image: store.images.length, byStatus: { ...store.byStatus }, endsAnswered: store.endsAnswered },
      slots: {
        video: store.slots.figures("video", config.slots.video, now),
        image: store.slots.figures("image", config.slots.image, now),
      },
      firstCreateAt: store.firstCreateAt ?? null,
      lastFinishAt: store.lastFinishAt ?? null,
      downloads,
      bytesServed,
      faults: Object.fromEntries(faults.fired),
      callbacks: { ...callbacks.figures },
      process: (({ user, system }) => ({ cpuUserMs: user / 1000, cpuSystemMs: system / 1000 }))(process.cpuUsage()),
      connections: sockets.size,
    };
  };

  const configure = (patch: DeepPartial<EmulatorConfig>) => {
    config = resolveEmulatorConfig(patch, config, "runtime patch");
    faults.reseedIfChanged();
  };

  const advanceClock = (ms: number) => {
    if (!Number.isFinite(ms) || ms < 0) throw new RangeError("advanceClock: ms must be a finite number >= 0");
    clock.advance(ms);
    store.settle(clock.now());
  };

  const reset = () => {
    callbacks.cancelAll();
    callbacks.resetFigures();
    store.reset();
    clock.reset();
    faults.reset();
    requests = {};
    rejections = {};
    downloads = 0;
    bytesServed = 0;
  };

  const readJson = async (req: IncomingMessage, res: ServerResponse): Promise<{ ok: true; value: unknown } | { ok: false }> => {
    const body = await readBody(req, config.maxBodyBytes);
    if (body.kind === "aborted") {
      req.socket.destroy();
      return { ok: false };
    }
    if (body.kind === "too-large") {
      send(res, fail(413, 1201, `body: larger than the limit of ${config.maxBodyBytes} bytes`), { connection: "close" });
      if (body.destroy) res.on("finish", () => req.socket.destroy());
      return { ok: false };
    }
    if (body.buf.length === 0) {
      send(res, fail(400, 1200, "body: a JSON object is required"));
      return { ok: false };
    }
    try {
      // Integers above 2^53 (64-bit element ids) are read exactly, as bigint.
      return { ok: true, value: parseExact(body.buf.toString("utf8")) };
    } catch (e) {
      send(res, fail(400, 1200, `body: malformed JSON (${(e as Error).message.slice(0, 120)})`));
      return { ok: false };
    }
  };

  const handleInspection = async (req: IncomingMessage, res: ServerResponse, path: string) => {
    if (!isLoopbackAddress(req.socket.remoteAddress)) return sendJson(res, 403, { error: "inspection endpoints answer loopback clients only" });
    const route = `${req.method} ${path}`;
    if (route === "GET /_emulator/stats") return sendJson(res, 200, stats());
    if (route === "GET /_emulator/slots") return sendJson(res, 200, store.slots.timeline());
    if (route === "GET /_emulator/config") return sendJson(res, 200, { ...config, apiKey: "(hidden)", callbacks: { ...config.callbacks, secret: config.callbacks.secret ? "(hidden)" : undefined } });
    if (route === "POST /_emulator/reset") {
      reset();
      return sendJson(res, 200, { ok: true, now: clock.now() });
    }
    if (route === "POST /_emulator/clock" || route === "POST /_emulator/config") {
      const body = await readBody(req, 1024 * 1024);
      let value: unknown;
      try {
        value = body.kind === "ok" ? JSON.parse(body.buf.toString("utf8") || "{}") : undefined;
      } catch {
        value = undefined;
      }
      if (typeof value !== "object" || value === null || Array.isArray(value)) return sendJson(res, 400, { error: "body must be a JSON object" });
      const v = value as Record<string, unknown>;
      if (route === "POST /_emulator/clock") {
        const ms = v["advanceMs"];
        if (typeof ms !== "number" || !Number.isFinite(ms) || ms < 0) return sendJson(res, 400, { error: "advanceMs must be a number >= 0" });
        advanceClock(ms);
        return sendJson(res, 200, { now: clock.now() });
      }
      const patch = Object.keys(v).length === 1 && "patch" in v ? v["patch"] : v;
      try {
        configure(patch as DeepPartial<EmulatorConfig>);
      } catch (e) {
        return sendJson(res, 400, { error: (e as Error).message });
      }
      return sendJson(res, 200, { ok: true });
    }
    return sendJson(res, 404, { error: `no inspection endpoint ${route}` });
  };

  const handleDownload = async (req: IncomingMessage, res: ServerResponse, path: string, search: string) => {
    countRequest("download");
    if (req.method !== "GET" && req.method !== "HEAD") return send(res, fail(405, 1202, "result links answer GET only"), { allow: "GET" });
    const params = new URLSearchParams(search);
    const redirectTo = config.faults.resultRedirectTo;
    if (redirectTo !== "" && params.get("hop") === null) {
      // "self": one hop back to this emulator (marked so it is served the second time).
      const location = redirectTo === "self" ? `${path}?${search}&hop=1` : `${redirectTo}${path}?${search}`;
      res.writeHead(302, { location, "content-length": 0 });
      res.end();
      return;
    }
    const now = clock.now();
    const check = signer.check(path, params.get("expires"), params.get("sig"), now);
    if (!check.ok && check.reason === "tampered") return send(res, fail(403, 1103, "result link signature is not valid (hotlink protection)"));
    const m = /^\/_files\/(\d+)\/([A-Za-z0-9.-]+)$/.exec(path);
    const task = m ? store.get(m[1]!) : undefined;
    if (!m || !task) return send(res, fail(404, 1203, "no such result"));
    store.settle(now);
    if (phaseAt(task, now) !== "succeeded") return send(res, fail(404, 1203, "no such result"));
    if (resultsDeleted(task, now, config)) {
      return send(res, fail(404, 1203, `results of task ${task.id} were deleted ${config.results.retentionDays} days after generation`));
    }
    if (!check.ok) return send(res, fail(403, 1103, "result link expired; query the task again for a fresh link"));
    let file;
    try {
      file = resultFile(task, m[2]!, config.results.extraOutputs);
    } catch (e) {
      return send(res, fail(500, 5000, `emulator could not make the file: ${(e as Error).message}`));
    }
    if (!file) return send(res, fail(404, 1203, "no such result"));
    const slow = faults.slowMs("download");
    if (slow > 0) await delay(slow);
    downloads += 1;
    res.writeHead(200, { "content-type": file.contentType, "content-length": file.bytes.length, "cache-control": "private, no-store" });
    if (req.method === "HEAD") return res.end();
    if (faults.truncateDownload()) {
      const half = file.bytes.subarray(0, Math.floor(file.bytes.length / 2));
      bytesServed += half.length;
      res.write(half, () => res.destroy());
      return;
    }
    bytesServed += file.bytes.length;
    res.end(file.bytes);
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const raw = req.url ?? "/";
    const q = raw.indexOf("?");
    let path = q < 0 ? raw : raw.slice(0, q);
    const search = q < 0 ? "" : raw.slice(q + 1);
    if (path.startsWith("/_emulator/")) return handleInspection(req, res, path);
    if (path.startsWith("/_files/")) return handleDownload(req, res, path, search);
    if (path.length > 1 && path.endsWith("/")) path = path.slice(0, -1);
    const method = req.method ?? "GET";
    let endpoint: EndpointName | undefined;
    let imageId: string | undefined;
    let allowed: string[] = [];
    if (routeCache.service !== config.service) routeCache = { service: config.service, routes: apiRoutes(config.service) };
    const routes = routeCache.routes[path];
    if (routes) {
      endpoint = routes[method];
      allowed = Object.keys(routes);
    } else if (path.startsWith(imageTaskPrefix) && path.length > imageTaskPrefix.length && !path.slice(imageTaskPrefix.length).includes("/")) {
      allowed = ["GET"];
      if (method === "GET") {
        endpoint = "image.get";
        try {
          imageId = decodeURIComponent(path.slice(imageTaskPrefix.length));
        } catch {
          imageId = path.slice(imageTaskPrefix.length);
        }
      }
    }
    if (!endpoint) {
      // The service's error table: a wrong method on a known path is HTTP 404 code 1202.
      if (allowed.length > 0) return send(res, fail(404, 1202, `invalid method ${method} for ${path}; allowed: ${allowed.join(", ")}`), { allow: allowed.join(", ") });
      return send(res, fail(404, 1202, `no such API: ${method} ${path}`));
    }
    countRequest(endpoint);
    const auth = req.headers.authorization;
    if (auth === undefined || auth.trim() === "") return send(res, fail(401, 1001, "Authorization header is empty"));
    if (auth !== `Bearer ${config.apiKey}`) return send(res, fail(401, 1002, "Authorization header is invalid"));
    faults.reseedIfChanged();
    const slow = faults.slowMs(endpoint);
    if (slow > 0) await delay(slow);
    const echo = (a: Answer): Answer => (config.faults.echoAuthorization && a.code !== 0 ? { ...a, message: `${a.message} (request Authorization: ${auth})` } : a);
    const fault = faults.before(endpoint);
    if (fault?.kind === "reset") {
      req.socket.destroy();
      return;
    }
    if (fault) return stalled(endpoint, req, res, echo(fail(fault.http, fault.code, fault.message)));
    let answer: Answer;
    if (method === "POST") {
      const type = req.headers["content-type"];
      if (type === undefined || !/^application\/json\s*(;|$)/i.test(type)) {
        return send(res, fail(400, 1200, `Content-Type: must be application/json (got ${type === undefined ? "none" : `'${type.slice(0, 80)}'`})`));
      }
      const body = await readJson(req, res);
      if (!body.ok) return;
      answer =
        endpoint === "video.create"
          ? await api.createVideo(body.value)
          : endpoint === "image.create"
            ? await api.createImage(body.value)
            : api.queryCursor(body.value);
    } else {
      const params = new URLSearchParams(search);
      answer = endpoint === "video.query" ? api.queryVideos(params) : endpoint === "image.list" ? api.listImages(params) : api.getImage(imageId!);
    }
    if (res.destroyed || req.socket.destroyed) return;
    if (faults.resetAfter(endpoint)) {
      req.socket.destroy();
      return;
    }
    if ((endpoint === "video.create" || endpoint === "image.create") && answer.code === 0 && faults.errorAfterCreate(endpoint)) {
      answer = fail(500, 5000, "internal error (emulated, after the task was created)");
    }
    if (answer.code === 0 && (endpoint === "video.query" || endpoint === "video.cursor" || endpoint === "image.get" || endpoint === "image.list")) {
      answer = tamper(endpoint, answer, auth);
    }
    return stalled(endpoint, req, res, echo(answer));
  };

  /** Query answers as a misbehaving service sends them (faults.malformedTask, unrequestedTaskRate, echoAuthorization). */
  const tamper = (endpoint: EndpointName, answer: Answer, auth: string): Answer => {
    let data = mapTaskItems(answer.data, (item) => (faults.malformed(endpoint, externalIdOf(item)) ? malformTask(item, config.faults.malformedTask.kind) : item));
    if (config.faults.echoAuthorization) data = mapTaskItems(data, (item) => echoInFailures(item, auth));
    if ((endpoint === "video.query" || endpoint === "image.get") && faults.unrequested(endpoint)) {
      const extra = unrequestedTask(endpoint === "video.query" ? "video" : "image", ++unrequestedSeq, clock.now());
      data = Array.isArray(data) ? [...data, extra] : extra;
    }
    return { ...answer, data };
  };
  let unrequestedSeq = 0;

  /** Sends the answer, unless faults.stall says to hold it forever or drip it out byte by byte. */
  const stalled = (endpoint: EndpointName, req: IncomingMessage, res: ServerResponse, answer: Answer): void => {
    if (!faults.stall(endpoint)) return send(res, answer);
    if (config.faults.stall.mode === "never") return; // the socket stays open until the client gives up or we close
    const requestId = `${requestPrefix}-${(++requestSeq).toString(36)}`;
    const text = JSON.stringify({ code: answer.code, message: answer.message, request_id: requestId, ...(answer.data !== undefined ? { data: answer.data } : {}) });
    const bytes = Buffer.from(text);
    res.writeHead(answer.http, { "content-type": "application/json; charset=utf-8", "content-length": bytes.length, ...liveHeaders(answer, requestId) });
    let at = 0;
    const timer = setInterval(() => {
      if (res.destroyed || at >= bytes.length) {
        clearInterval(timer);
        if (!res.destroyed) res.end();
        return;
      }
      res.write(bytes.subarray(at, at + 1));
      at += 1;
    }, Math.max(1, config.faults.stall.dripMs));
    timer.unref();
    req.socket.once("close", () => clearInterval(timer));
  };

  const sockets = new Set<Socket>();
  const server = createServer({ keepAliveTimeout: 30_000, requestTimeout: 120_000 }, (req, res) => {
    handle(req, res).catch((e: unknown) => {
      if (res.headersSent || res.destroyed) {
        res.destroy();
        return;
      }
      send(res, fail(500, 5000, `emulator internal error: ${(e as Error)?.message ?? String(e)}`));
    });
  });
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
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
  baseUrl = `http://${urlHost}:${address.port}`;
  viewCache = undefined;

  // Transitions also happen while nobody asks (callbacks are due on time): a timer for the
  // next due transition, re-armed by each settle, and a 10 ms tick that arms it for new tasks.
  let dueTimer: NodeJS.Timeout | undefined;
  let dueAt = Number.POSITIVE_INFINITY;
  const armDue = () => {
    const at = store.nextEventAt();
    if (at === undefined || at >= dueAt) return;
    clearTimeout(dueTimer);
    dueAt = at;
    dueTimer = setTimeout(() => {
      dueAt = Number.POSITIVE_INFINITY;
      store.settle(clock.now());
      armDue();
    }, Math.max(0, at - clock.now()));
    dueTimer.unref();
  };
  const ticker = setInterval(() => {
    store.settle(clock.now());
    armDue();
  }, 10);
  ticker.unref();

  let closed: Promise<void> | undefined;
  return {
    url: baseUrl,
    get apiKey() {
      return config.apiKey;
    },
    get config() {
      return config;
    },
    configure,
    stats,
    advanceClock,
    now: () => clock.now(),
    slotTimeline: () => store.slots.timeline(),
    reset,
    saveState: () => {
      const now = clock.now();
      store.settle(now);
      return { clock: clock.saved(), store: store.saved() };
    },
    restoreState: (state) => {
      if (store.all.length > 0) throw new Error("restoreState: this emulator already holds tasks");
      clock.restore(state.clock);
      store.restore(state.store, clock.now());
      armDue();
    },
    close: () => {
      closed ??= new Promise<void>((resolve) => {
        clearInterval(ticker);
        clearTimeout(dueTimer);
        callbacks.cancelAll();
        server.close(() => resolve());
        for (const s of sockets) s.destroy();
      });
      return closed;
    },
  };
};
