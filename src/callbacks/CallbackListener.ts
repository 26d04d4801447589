// Receives the service's callbacks: a small HTTP listener (loopback, random port by
// default) on a path holding an unguessable token, which checks the signature when a
// secret is set, checks the body's shape and hands on a cue: "this task may have
// changed, ask the service now". Nothing in a callback is taken as truth (a callback
// may be forged when no secret is set): state, result links, charges and failure
// reasons come only from the service's own answer to the query the cue leads to.
// Anything doubtful is dropped and reported to `onDrop` subscribers (a notice), never a crash.

import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { neutralise } from "../api/neutralise.js";
import type { ProductKind } from "../policy/Policy.js";
import { verifyWebhook } from "../protocol/verifyWebhook.js";

/** The task statuses a callback may name (video and image spellings). */
type CueStatus = "submitted" | "processing" | "succeeded" | "failed";

/**
 * What a callback is taken to say: task `taskId` (external id `externalId`) of this kind
 * may now be `status`. Only a cue to query the task; nothing here is recorded. Without an
 * external id (the service console's test callback has none) the task is found by its
 * task id among the run's tasks in flight, or the cue is dropped (src/engine/cueRules.ts).
 */
export interface CallbackObservation {
  readonly kind: ProductKind;
  readonly taskId: string;
  readonly externalId?: string;
  readonly status: CueStatus;
}

/** What the engine needs: the address to send on creates and the observations. */
export interface CallbackFeed {
  /** Sent as `callback_url` on creates. */
  readonly url: string;
  /**
   * Observations go to `listener`, and why a callback was dropped to `onDrop`, until the
   * returned function is called.
   */
  readonly subscribe: (listener: (observation: CallbackObservation) => void, onDrop?: (reason: string) => void) => () => void;
}

export interface CallbackListenerOptions {
  /** Interface to listen on. Default 127.0.0.1. */
  readonly host?: string;
  /** Default 0: any free port. */
  readonly port?: number;
  /**
   * The public address that forwards to the listener (a tunnel or reverse proxy); the
   * token is appended as a last path segment. Default: the listener's own address.
   */
  readonly publicUrl?: string;
  /** `whsec_...`: unsigned or wrongly signed callbacks are dropped. */
  readonly secret?: string;
  /** Larger bodies are refused (413). Default 1 MiB. */
  readonly maxBodyBytes?: number;
}

export interface CallbackFigures {
  /** Observations handed on. */
  accepted: number;
  /** Wrong path, method, size, signature or shape. */
  dropped: number;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** What parsing a callback body gives: a cue, or why the body is not one. */
export type ParsedCallback = { readonly ok: true; readonly observation: CallbackObservation } | { readonly ok: false; readonly problem: string };

const idPattern = /^[\x21-\x7e]{1,200}$/;
const fine = (v: unknown): v is string => typeof v === "string" && idPattern.test(v);
/** No external id: left out, null or empty (the service console's test callback names none). */
const absent = (v: unknown): boolean => v === undefined || v === null || v === "";
const time = (v: unknown): boolean => typeof v === "number" && Number.isFinite(v) && v >= 0;

/**
 * The cue in a callback body, by shape (the wire's task objects: video A2 items have
 * `id`/`status`/`external_id`, image tasks `task_id`/`task_status`/`task_info.external_task_id`).
 * The fields used must be present and well formed; the rest is not looked at, since
 * nothing else in the body is trusted. Pure.
 */
export const parseCallbackBody = (text: string): ParsedCallback => {
  const bad = (problem: string): ParsedCallback => ({ ok: false, problem });
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return bad("the body is not JSON");
  }
  if (!isObject(body)) return bad("the body is not a JSON object");
  if ("task_id" in body || "task_status" in body) {
    const info = body["task_info"];
    const externalId = isObject(info) ? info["external_task_id"] : undefined;
    if (!fine(body["task_id"])) return bad("image task: 'task_id' missing or not an id");
    if (!["submitted", "processing", "succeed", "failed"].includes(body["task_status"] as string)) return bad("image task: 'task_status' missing or unknown");
    if (!time(body["created_at"]) || !time(body["updated_at"])) return bad("image task: 'created_at'/'updated_at' missing or not times");
    if (!absent(externalId) && !fine(externalId)) return bad("image task: 'task_info.external_task_id' is not an id");
    const status = body["task_status"] === "succeed" ? "succeeded" : (body["task_status"] as CueStatus);
    return { ok: true, observation: { kind: "image", taskId: body["task_id"], ...(fine(externalId) ? { externalId } : {}), status } };
  }
  if ("id" in body || "status" in body) {
    if (!fine(body["id"])) return bad("video task: 'id' missing or not an id");
    if (!["submitted", "processing", "succeeded", "failed"].includes(body["status"] as string)) return bad("video task: 'status' missing or unknown");
    if (!time(body["create_time"]) || !time(body["update_time"])) return bad("video task: 'create_time'/'update_time' missing or not times");
    const externalId = body["external_id"];
    if (!absent(externalId) && !fine(externalId)) return bad("video task: 'external_id' is not an id");
    return { ok: true, observation: { kind: "video", taskId: body["id"], ...(fine(externalId) ? { externalId } : {}), status: body["status"] as CueStatus } };
  }
  return bad("the body is no task object");
};

const header = (req: IncomingMessage, name: string): string | undefined => {
  const v = req.headers[name];
  return Array.isArray(v) ? v.join(" ") : v;
};

export class CallbackListener implements CallbackFeed {
  readonly figures: CallbackFigures = { accepted: 0, dropped: 0 };
  private readonly listeners = new Set<(observation: CallbackObservation) => void>();
  private readonly dropListeners = new Set<(reason: string) => void>();

  private constructor(
    private readonly server: Server,
    /** Where it listens, e.g. http://127.0.0.1:40123 */
    readonly listenUrl: string,
    readonly url: string,
  ) {}

  /** Starts listening; rejects when the address cannot be bound. */
  static async start(options: CallbackListenerOptions = {}): Promise<CallbackListener> {
    const token = randomBytes(16).toString("hex");
    const maxBody = options.maxBodyBytes ?? 1024 * 1024;
    const secret = options.secret;
    let self: CallbackListener | undefined;
    const server = createServer((req, res) => self?.receive(req, res, token, maxBody, secret));
    // Slow or stuck senders must not hold sockets for long.
    server.requestTimeout = 10_000;
    server.headersTimeout = 5_000;
    const host = options.host ?? "127.0.0.1";
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(options.port ?? 0, host, () => {
        server.off("error", reject);
        resolve();
      });
    });
    const address = server.address();
    const port = typeof address === "object" && address ? address.port : options.port ?? 0;
    const shownHost = host.includes(":") ? `[${host}]` : host === "0.0.0.0" ? "127.0.0.1" : host;
    const listenUrl = `http://${shownHost}:${port}`;
    const path = `/omnibatch/cb/${token}`;
    const url = options.publicUrl ? `${options.publicUrl.replace(/\/+$/, "")}/${token}` : `${listenUrl}${path}`;
    self = new CallbackListener(server, listenUrl, url);
    return self;
  }

  subscribe(listener: (observation: CallbackObservation) => void, onDrop?: (reason: string) => void): () => void {
    this.listeners.add(listener);
    if (onDrop) this.dropListeners.add(onDrop);
    return () => {
      this.listeners.delete(listener);
      if (onDrop) this.dropListeners.delete(onDrop);
    };
  }

  private dropped(reason: string): void {
    this.figures.dropped++;
    const text = neutralise(reason);
    for (const l of this.dropListeners) {
      try {
        l(text);
      } catch {
        // a subscriber's failure must not reach the HTTP server
      }
    }
  }

  close(): Promise<void> {
    this.listeners.clear();
    this.dropListeners.clear();
    return new Promise((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }

  private receive(req: IncomingMessage, res: ServerResponse, token: string, maxBody: number, secret: string | undefined): void {
    const answer = (status: number) => {
      if (!res.headersSent) res.writeHead(status, { "content-length": "0" });
      res.end();
    };
    const path = (req.url ?? "").split("?")[0] ?? "";
    // The token is the last segment, so a forwarding proxy may keep any prefix.
    if (req.method !== "POST" || path.split("/").at(-1) !== token) {
      this.dropped(`a ${req.method ?? "?"} request to an unknown path`);
      req.resume();
      return answer(404);
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let tooBig = false;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBody) {
        if (!tooBig) {
          tooBig = true;
          this.dropped(`a body over ${maxBody} bytes`);
          answer(413);
          req.destroy();
        }
        return;
      }
      chunks.push(chunk);
    });
    req.on("error", () => undefined);
    req.on("end", () => {
      if (tooBig) return;
      const text = Buffer.concat(chunks).toString("utf8");
      const signed =
        secret === undefined ||
        verifyWebhook(
          secret,
          { id: header(req, "webhook-id"), timestamp: header(req, "webhook-timestamp"), signature: header(req, "webhook-signature") },
          text,
          Math.floor(Date.now() / 1000),
        );
      if (!signed) {
        this.dropped("unsigned or wrongly signed");
        return answer(401);
      }
      const parsed = parseCallbackBody(text);
      // Answered at once either way: the sender has nothing to fix in a body we cannot use.
      answer(204);
      if (!parsed.ok) return this.dropped(parsed.problem);
      this.figures.accepted++;
      for (const l of this.listeners) {
        try {
          l(parsed.observation);
        } catch {
          // a subscriber's failure must not reach the HTTP server
        }
      }
    });
  }
}
