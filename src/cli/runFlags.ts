// `run`'s flags as the run's request: durations, the concurrency, the callback choice, the
// selection or saved plan. Each mistake is a UsageError naming the flag and what to write.

import { UsageError } from "./UsageError.js";
import type { CallbackSetting } from "../run/CallbackSetting.js";

type Values = Record<string, string | boolean | string[] | undefined>;

const units: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** `90s`, `25m`, `2h`, `1.5h`, `500ms`; a bare number is seconds. */
export const parseDuration = (text: string): number | undefined => {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*$/i.exec(text);
  if (!m) return undefined;
  return Math.round(Number(m[1]) * units[(m[2] ?? "s").toLowerCase()]!);
};

/** --no-callbacks / --callback-url / --callback-listen: undefined leaves the choice to the engine (on for loopback). */
export const callbackSetting = (v: Values): false | CallbackSetting | undefined => {
  const url = typeof v["callback-url"] === "string" ? v["callback-url"] : undefined;
  const listen = typeof v["callback-listen"] === "string" ? v["callback-listen"] : undefined;
  if (v["no-callbacks"]) {
    if (url !== undefined || listen !== undefined) {
      throw new UsageError({ command: "run", message: "--no-callbacks excludes --callback-url and --callback-listen" });
    }
    return false;
  }
  if (url === undefined && listen === undefined) return undefined;
  if (url !== undefined && !/^https?:\/\/[^/\s]+/i.test(url)) {
    throw new UsageError({ command: "run", message: `--callback-url '${url}' must be an http(s) address, e.g. https://hooks.example.com/omnibatch` });
  }
  let host: string | undefined;
  let port: number | undefined;
  if (listen !== undefined) {
    const m = /^\[?([^\]]*?)\]?:(\d{1,5})$/.exec(listen.trim());
    port = m ? Number(m[2]) : NaN;
    if (!m || !m[1] || port > 65535) {
      throw new UsageError({ command: "run", message: `--callback-listen '${listen}' must be HOST:PORT, e.g. 0.0.0.0:8787` });
    }
    host = m[1];
  }
  return { ...(url !== undefined ? { url } : {}), ...(host !== undefined ? { host } : {}), ...(port !== undefined ? { port } : {}) };
};

export interface RunFlags {
  readonly maxWaitMs?: number;
  readonly concurrency?: number;
  readonly callbacks: false | CallbackSetting | undefined;
}

/** --max-wait, --concurrency and the callback flags, checked. */
export const runFlags = (v: Values): RunFlags => {
  let maxWaitMs: number | undefined;
  if (typeof v["max-wait"] === "string") {
    maxWaitMs = parseDuration(v["max-wait"]);
    if (maxWaitMs === undefined || maxWaitMs <= 0) {
      throw new UsageError({ command: "run", message: `--max-wait '${v["max-wait"]}' is not a duration: use e.g. 90s, 25m or 2h` });
    }
  }
  let concurrency: number | undefined;
  if (typeof v["concurrency"] === "string") {
    concurrency = Number(v["concurrency"]);
    if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 1000) {
      throw new UsageError({ command: "run", message: `--concurrency '${v["concurrency"]}' must be a whole number from 1 to 1000` });
    }
  }
  const callbacks = callbackSetting(v);
  if (v["emulate"] && typeof v["base-url"] === "string") {
    throw new UsageError({ command: "run", message: "--emulate and --base-url exclude each other: --emulate runs against an in-process emulator" });
  }
  return { ...(maxWaitMs !== undefined ? { maxWaitMs } : {}), ...(concurrency !== undefined ? { concurrency } : {}), callbacks };
};
