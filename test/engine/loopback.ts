// Small loopback helpers shared by the engine tests that put a hostile server between the
// run and the emulator (a proxy forging callbacks): a free port on 127.0.0.1, a server
// listening on one, a request's body, and every file a run left under a folder.

import type { IncomingMessage, Server } from "node:http";
import { createServer as createNetServer } from "node:net";
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";

/** A port free on 127.0.0.1 at the moment of asking. */
export const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const s = createNetServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });

/** Starts `server` on a random port of 127.0.0.1; resolves to the port. */
export const listen = (server: Server): Promise<number> =>
  new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve((server.address() as { port: number }).port)));

/** A request's whole body as UTF-8 text. */
export const readBody = (req: IncomingMessage): Promise<string> =>
  new Promise((resolve) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
  });

/** Every file under `dir`, recursively. */
export const filesUnder = (dir: string): string[] =>
  readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? filesUnder(p) : [p];
  });
