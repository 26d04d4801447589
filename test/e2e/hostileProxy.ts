// A hostile service for end-to-end tests: a proxy in front of the real emulator that
// forwards every request and lets a test answer some itself (`intercept`) or change a
// JSON answer (`rewrite`). Result links in answers are rewritten to pass through it, so
// downloads can be intercepted too.

import http from "node:http";
import type { AddressInfo } from "node:net";

export interface ProxiedRequest {
  readonly method: string;
  readonly url: string;
  readonly body: string;
}

export interface HostileProxy {
  readonly url: string;
  close(): Promise<void>;
}

export interface ProxyBehaviour {
  /** Answer this request here (status and body), or undefined to forward it. */
  readonly intercept?: (req: ProxiedRequest) => { readonly status: number; readonly body: string } | undefined;
  /** Change the JSON answer the emulator gave (parsed); the returned value is sent. */
  readonly rewrite?: (req: ProxiedRequest, answer: Record<string, unknown>, status: number) => Record<string, unknown>;
}

export const startProxy = async (upstream: string, behaviour: ProxyBehaviour): Promise<HostileProxy> => {
  const up = new URL(upstream);
  let self = "";
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      const seen: ProxiedRequest = { method: req.method ?? "GET", url: req.url ?? "/", body: body.toString("utf8") };
      const own = behaviour.intercept?.(seen);
      if (own) {
        res.writeHead(own.status, { "content-type": "application/json", "content-length": Buffer.byteLength(own.body) });
        res.end(own.body);
        return;
      }
      const forward = http.request(
        { host: up.hostname, port: up.port, path: seen.url, method: seen.method, headers: { ...req.headers, host: up.host } },
        (answer) => {
          const parts: Buffer[] = [];
          answer.on("data", (c: Buffer) => parts.push(c));
          answer.on("end", () => {
            const raw = Buffer.concat(parts);
            const headers = { ...answer.headers };
            if (!raw.subarray(0, 1).equals(Buffer.from("{"))) {
              res.writeHead(answer.statusCode ?? 502, headers);
              res.end(raw);
              return;
            }
            let json = JSON.parse(raw.toString("utf8")) as Record<string, unknown>;
            if (behaviour.rewrite) json = behaviour.rewrite(seen, json, answer.statusCode ?? 200);
            const text = JSON.stringify(json).split(upstream.replace(/\/$/, "")).join(self);
            delete headers["transfer-encoding"];
            headers["content-length"] = String(Buffer.byteLength(text));
            res.writeHead(answer.statusCode ?? 502, headers);
            res.end(text);
          });
        },
      );
      forward.on("error", () => {
        res.writeHead(502);
        res.end();
      });
      forward.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  self = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: self,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
};

/** The task items of a query answer's data (A2 list, A3 page, B2 task, B3 list). */
export const taskItems = (data: unknown): Record<string, unknown>[] => {
  if (Array.isArray(data)) return data as Record<string, unknown>[];
  if (data && typeof data === "object" && Array.isArray((data as { result?: unknown }).result)) return (data as { result: Record<string, unknown>[] }).result;
  if (data && typeof data === "object" && "task_id" in data) return [data as Record<string, unknown>];
  return [];
};
