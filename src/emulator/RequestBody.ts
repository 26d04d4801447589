// A request's body, read within a limit: past it the rest is read and dropped (the client
// gets a clean 413), and a body far past it is cut off instead of read forever. readJson
// answers an unusable body itself (413, 1200) and says whether there is a value.

import type { IncomingMessage, ServerResponse } from "node:http";
import { parseExact } from "../api/exactJson.js";
import { fail } from "./Answer.js";
import { sendAnswer } from "./AnswerWriter.js";
import type { EmulatorCore } from "./EmulatorCore.js";

type BodyRead = { readonly kind: "ok"; readonly buf: Buffer } | { readonly kind: "too-large"; readonly destroy: boolean } | { readonly kind: "aborted" };

export const readBody = (req: IncomingMessage, max: number): Promise<BodyRead> =>
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

export const readJson = async (core: EmulatorCore, req: IncomingMessage, res: ServerResponse): Promise<{ ok: true; value: unknown } | { ok: false }> => {
  const body = await readBody(req, core.config.maxBodyBytes);
  if (body.kind === "aborted") {
    req.socket.destroy();
    return { ok: false };
  }
  if (body.kind === "too-large") {
    sendAnswer(core, res, fail(413, 1201, `body: larger than the limit of ${core.config.maxBodyBytes} bytes`), { connection: "close" });
    if (body.destroy) res.on("finish", () => req.socket.destroy());
    return { ok: false };
  }
  if (body.buf.length === 0) {
    sendAnswer(core, res, fail(400, 1200, "body: a JSON object is required"));
    return { ok: false };
  }
  try {
    // Integers above 2^53 (64-bit element ids) are read exactly, as bigint.
    return { ok: true, value: parseExact(body.buf.toString("utf8")) };
  } catch (e) {
    sendAnswer(core, res, fail(400, 1200, `body: malformed JSON (${(e as Error).message.slice(0, 120)})`));
    return { ok: false };
  }
};
