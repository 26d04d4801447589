// Receives the service's callbacks: a small HTTP listener (loopback, random port by
// default) on a path holding an unguessable token, which checks the signature when a
// secret is set and hands each task object on as an observation. It only hints:
// polling stays the source of truth, so anything doubtful is dropped without a word.

import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { ImageTask, VideoTask } from "../api/wire.js";
import { verifyWebhook } from "../protocol/verifyWebhook.js";

/** One task object a callback carried, with the kind its shape shows. */
export type CallbackObservation =
  | { readonly kind: "video"; readonly task: VideoTask }
  | { readonly kind: "image"; readonly task: ImageTask };

/** What the engine needs: the address to send on creates and the observations. */
export interface CallbackFeed {
  /** Sent as `callback_url` on creates. */
  readonly url: string;
  /** Observations go to `listener` until the returned function is called. */
  readonly subscribe: (listener: (observation: CallbackObservation) => void) => () => void;
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

/** The task object in a callback body, by shape: video A2 items have `id`, image tasks `task_id`. Pure. */
export const parseCallbackBody = (text: string): CallbackObservation | undefined => {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isObject(body)) return undefined;
  const num = (k: string) => typeof body[k] === "number";
  if (typeof body["task_id"] === "string" && typeof body["task_status"] === "string" && num("created_at") && num("updated_at")) {
    if (!["submitted", "processing", "succeed", "failed"].includes(body["task_status"])) return undefined;
    return { kind: "image", task: { task_info: {}, ...body } as unknown as ImageTask };
  }
  if (typeof body["id"] === "string" && typeof body["status"] === "string" && num("create_time") && num("update_time")) {
    if (!["submitted", "processing", "succeeded", "failed"].includes(body["status"])) return undefined;
    return { kind: "video", task: body as unknown as VideoTask };
  }
  return undefined;
};

const header = (req: IncomingMessage, name: string): string | undefined => {
  const v = req.headers[name];
  return Array.isArray(v) ? v.join(" ") : v;
};

export class CallbackListener implements CallbackFeed {
  readonly figures: CallbackFigures = { accepted: 0, dropped: 0 };
  private readonly listeners = new Set<(observation: CallbackObservation) => void>();

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

  subscribe(listener: (observation: CallbackObservation) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  close(): Promise<void> {
    this.listeners.clear();
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
      this.figures.dropped++;
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
          this.figures.dropped++;
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
      const observation = signed ? parseCallbackBody(text) : undefined;
      if (!signed) {
        this.figures.dropped++;
        return answer(401);
      }
      // Answered at once either way: the sender has nothing to fix in a body we cannot use.
      answer(204);
      if (!observation) {
        this.figures.dropped++;
        return;
      }
      this.figures.accepted++;
      for (const l of this.listeners) l(observation);
    });
  }
}
