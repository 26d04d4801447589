// A tiny loopback HTTP server for the client's error-shape tests: each request is
// recorded and answered by the test's handler (canned envelopes, resets, hangs).

import http from "node:http";
import type { AddressInfo } from "node:net";

export interface SeenRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: string;
}

export type Handler = (req: SeenRequest, res: http.ServerResponse) => void;

export interface CannedServer {
  readonly url: string;
  readonly seen: SeenRequest[];
  handle(handler: Handler): void;
  close(): Promise<void>;
}

export const envelope = (res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify(body));
};

export const startCannedServer = async (): Promise<CannedServer> => {
  let handler: Handler = (_req, res) => envelope(res, 500, { code: 5000, message: "no handler", request_id: "r" });
  const seen: SeenRequest[] = [];
  const sockets = new Set<import("node:net").Socket>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const request = { method: req.method ?? "", url: req.url ?? "", headers: req.headers, body: Buffer.concat(chunks).toString("utf8") };
      seen.push(request);
      handler(request, res);
    });
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    handle: (h) => {
      handler = h;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
};
