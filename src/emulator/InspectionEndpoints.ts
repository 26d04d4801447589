// /_emulator/*: stats, slots, config (the key and callback secret hidden), reset, the
// clock and runtime config patches. Loopback clients only; plain JSON, no envelope.

import type { IncomingMessage, ServerResponse } from "node:http";
import { isLoopbackAddress } from "../protocol/Loopback.js";
import { sendJson } from "./AnswerWriter.js";
import type { DeepPartial, EmulatorConfig } from "./EmulatorConfig.js";
import type { EmulatorCore } from "./EmulatorCore.js";
import { readBody } from "./RequestBody.js";

/** A POST's JSON object body, or undefined when it is none. */
const objectBody = async (req: IncomingMessage): Promise<Record<string, unknown> | undefined> => {
  const body = await readBody(req, 1024 * 1024);
  let value: unknown;
  try {
    value = body.kind === "ok" ? JSON.parse(body.buf.toString("utf8") || "{}") : undefined;
  } catch {
    value = undefined;
  }
  return typeof value !== "object" || value === null || Array.isArray(value) ? undefined : (value as Record<string, unknown>);
};

export const handleInspection = async (core: EmulatorCore, req: IncomingMessage, res: ServerResponse, path: string): Promise<void> => {
  if (!isLoopbackAddress(req.socket.remoteAddress)) return sendJson(res, 403, { error: "inspection endpoints answer loopback clients only" });
  const route = `${req.method} ${path}`;
  const config = core.config;
  if (route === "GET /_emulator/stats") return sendJson(res, 200, core.stats());
  if (route === "GET /_emulator/slots") return sendJson(res, 200, core.store.slots.timeline());
  if (route === "GET /_emulator/config") return sendJson(res, 200, { ...config, apiKey: "(hidden)", callbacks: { ...config.callbacks, secret: config.callbacks.secret ? "(hidden)" : undefined } });
  if (route === "POST /_emulator/reset") {
    core.reset();
    return sendJson(res, 200, { ok: true, now: core.clock.now() });
  }
  if (route === "POST /_emulator/clock" || route === "POST /_emulator/config") {
    const v = await objectBody(req);
    if (v === undefined) return sendJson(res, 400, { error: "body must be a JSON object" });
    if (route === "POST /_emulator/clock") {
      const ms = v["advanceMs"];
      if (typeof ms !== "number" || !Number.isFinite(ms) || ms < 0) return sendJson(res, 400, { error: "advanceMs must be a number >= 0" });
      core.advanceClock(ms);
      return sendJson(res, 200, { now: core.clock.now() });
    }
    const patch = Object.keys(v).length === 1 && "patch" in v ? v["patch"] : v;
    try {
      core.configure(patch as DeepPartial<EmulatorConfig>);
    } catch (e) {
      return sendJson(res, 400, { error: (e as Error).message });
    }
    return sendJson(res, 200, { ok: true });
  }
  return sendJson(res, 404, { error: `no inspection endpoint ${route}` });
};
