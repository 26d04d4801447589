// Reads an image or video input of a create request and applies the spec's media rules:
// raw base64 is decoded; URLs are fetched only when their host is loopback (bounded in
// size and time); any other URL is accepted unchecked, since the emulator never sends
// traffic off this machine.

import { request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";
import {
  checkImageMedia,
  checkVideoMedia,
  describeProbeFailure,
  probeImage,
  probeVideo,
  type Violation,
} from "../rules/index.js";
import { isLoopbackHost } from "../protocol/Loopback.js";

export interface MediaFetchLimits {
  readonly maxBytes: number;
  readonly timeoutMs: number;
}

export interface MediaInputRef {
  readonly value: string;
  readonly expected: "image" | "video";
  /** Which create operation the image feeds (size limits differ). */
  readonly side: "video" | "image";
  readonly field: string;
}

const base64Pattern = /^[A-Za-z0-9+/]*={0,2}$/;

const bad = (field: string, rule: string, text: string): Violation => ({
  field,
  rule,
  message: `${field}: ${text}`,
  code: 1201,
});

/** The first media violation of one input, or undefined when it passes (or was not checked). */
export const checkMediaInput = async (input: MediaInputRef, limits: MediaFetchLimits): Promise<Violation | undefined> => {
  const { value, field, expected } = input;
  let bytes: Uint8Array;
  if (/^https?:\/\//i.test(value)) {
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      return bad(field, "media.url", `'${value.slice(0, 200)}' is not a valid URL`);
    }
    if (!isLoopbackHost(url.hostname)) return undefined;
    const fetched = await fetchBounded(url, limits);
    if (typeof fetched === "string") return bad(field, "media.fetch", `could not fetch ${url.href}: ${fetched}`);
    bytes = fetched;
  } else if (/^data:/i.test(value)) {
    return bad(field, "media.base64.prefix", "base64 content must be raw, without a 'data:...;base64,' prefix");
  } else {
    if (value.length === 0 || value.length % 4 === 1 || !base64Pattern.test(value)) {
      return bad(field, `media.${expected}.encoding`, `is neither an http(s) URL nor valid base64 content`);
    }
    bytes = Buffer.from(value, "base64");
  }
  if (expected === "image") {
    const info = probeImage(bytes);
    if (info.kind === "unreadable") return describeProbeFailure(info, field, "image");
    return checkImageMedia(info, input.side, field)[0];
  }
  const info = probeVideo(bytes);
  if (info.kind === "unreadable") return describeProbeFailure(info, field, "video");
  return checkVideoMedia(info, field)[0];
};

/**
 * The first media violation among several inputs, in their order. One at a time, so at
 * most one fetched file is held in memory per request.
 */
export const checkMediaInputs = async (
  inputs: readonly MediaInputRef[],
  limits: MediaFetchLimits,
): Promise<Violation | undefined> => {
  for (const input of inputs) {
    const v = await checkMediaInput(input, limits);
    if (v) return v;
  }
  return undefined;
};

const fetchBounded = (url: URL, limits: MediaFetchLimits): Promise<Uint8Array | string> =>
  new Promise((resolve) => {
    const req = (url.protocol === "https:" ? httpsRequest : httpRequest)(url, { method: "GET", timeout: limits.timeoutMs }, (res) => {
      if ((res.statusCode ?? 0) < 200 || (res.statusCode ?? 0) >= 300) {
        res.resume();
        resolve(`HTTP ${res.statusCode}`);
        return;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      res.on("data", (chunk: Buffer) => {
        size += chunk.length;
        if (size > limits.maxBytes) {
          req.destroy();
          resolve(`larger than ${limits.maxBytes} bytes`);
          return;
        }
        chunks.push(chunk);
      });
      res.on("end", () => resolve(Buffer.concat(chunks, size)));
      res.on("error", (e) => resolve(e.message));
    });
    const timer = setTimeout(() => {
      req.destroy();
      resolve(`no complete answer within ${limits.timeoutMs} ms`);
    }, limits.timeoutMs);
    req.on("close", () => clearTimeout(timer));
    req.on("timeout", () => {
      req.destroy();
      resolve(`no answer within ${limits.timeoutMs} ms`);
    });
    req.on("error", (e) => resolve(e.message));
    req.end();
  });
