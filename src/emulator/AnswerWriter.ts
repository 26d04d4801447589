// An Answer written as the service writes it: the envelope with a fresh request id, the
// headers the live service adds (config.answers), and, when faults.stall says so, held
// forever or dripped out byte by byte.

import type { IncomingMessage, ServerResponse } from "node:http";
import type { Answer } from "./Answer.js";
import type { EmulatorConfig, EndpointName } from "./EmulatorConfig.js";
import type { EmulatorCore } from "./EmulatorCore.js";

/**
 * The headers the live service adds to an answer (config.answers): its request id as
 * `x-request-id`, and `Retry-After` on 1302, 1303 and 5xx (seconds, scaled with the timing).
 */
const liveHeaders = (config: EmulatorConfig, answer: Answer, requestId: string): Record<string, string> => {
  const out: Record<string, string> = {};
  const live = config.answers;
  if (live.requestIdHeader) out["x-request-id"] = requestId;
  if (live.retryAfterSec > 0 && (answer.code === 1302 || answer.code === 1303 || answer.http >= 500)) {
    out["retry-after"] = String(Math.max(0.001, Math.round(live.retryAfterSec * config.timing.scale * 1000) / 1000));
  }
  return out;
};

export const sendAnswer = (core: EmulatorCore, res: ServerResponse, answer: Answer, extraHeaders: Record<string, string> = {}): void => {
  const rejections = core.figures.rejections;
  if (answer.code !== 0) rejections[answer.code] = (rejections[answer.code] ?? 0) + 1;
  const requestId = core.nextRequestId();
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
    ...liveHeaders(core.config, answer, requestId),
    ...extraHeaders,
  });
  res.end(text);
};

/** A bare JSON answer (the /_emulator endpoints: no envelope). */
export const sendJson = (res: ServerResponse, status: number, value: unknown): void => {
  const text = JSON.stringify(value);
  res.writeHead(status, { "content-type": "application/json; charset=utf-8", "content-length": Buffer.byteLength(text) });
  res.end(text);
};

/** Sends the answer, unless faults.stall says to hold it forever or drip it out byte by byte. */
export const sendStalled = (core: EmulatorCore, endpoint: EndpointName, req: IncomingMessage, res: ServerResponse, answer: Answer): void => {
  if (!core.faults.stall(endpoint)) return sendAnswer(core, res, answer);
  const config = core.config;
  if (config.faults.stall.mode === "never") return; // the socket stays open until the client gives up or we close
  const requestId = core.nextRequestId();
  const text = JSON.stringify({ code: answer.code, message: answer.message, request_id: requestId, ...(answer.data !== undefined ? { data: answer.data } : {}) });
  const bytes = Buffer.from(text);
  res.writeHead(answer.http, { "content-type": "application/json; charset=utf-8", "content-length": bytes.length, ...liveHeaders(config, answer, requestId) });
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
