// Task identity: the external_task_id `<name>-<job>-<hash>`, where the hash covers the
// exact request that will be sent (file inputs by content, upstream results by content,
// never by path or URL), the take and the attempt. Canonical JSON (sorted keys, no
// spaces) makes it the same on every machine, path, OS and YAML key order. Pure.

import * as crypto from "node:crypto";
import { createHash } from "node:crypto";

// Requests use a handful of keys: each is quoted once, not once per task.
const quotedKeys = new Map<string, string>();
const quotedKey = (k: string): string => {
  let q = quotedKeys.get(k);
  if (q === undefined) {
    q = JSON.stringify(k);
    if (quotedKeys.size < 1000) quotedKeys.set(k, q);
  }
  return q;
};

/** JSON with object keys sorted at every level; `undefined` members are left out. */
export const canonicalJson = (value: unknown): string => {
  if (value === null || typeof value !== "object") {
    // An element id above 2^53: its exact digits, as the request carries it.
    if (typeof value === "bigint") return value.toString();
    if (typeof value === "number" && !Number.isFinite(value)) return "null";
    return value === undefined ? "null" : JSON.stringify(value);
  }
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  const keys = Object.keys(value).sort();
  let out = "{";
  let first = true;
  for (const k of keys) {
    const v = (value as Record<string, unknown>)[k];
    if (v === undefined) continue;
    out += `${first ? "" : ","}${quotedKey(k)}:${canonicalJson(v)}`;
    first = false;
  }
  return `${out}}`;
};

// The one-shot crypto.hash (Node >= 20.12) is much cheaper than a Hash object per call.
const oneShot = (crypto as { hash?: (algorithm: string, data: string, encoding: "hex") => string }).hash;
const sha256Hex = (text: string): string =>
  oneShot ? oneShot("sha256", text, "hex") : createHash("sha256").update(text).digest("hex");

/**
 * Digest of what a task asks for: the request as the service will see it, without
 * `external_task_id` (which is derived from this) and with content hashes standing in
 * for base64 files and upstream URLs (see identityRequest in buildRequest.ts).
 */
export const intentDigest = (identityRequest: unknown): string => sha256Hex(canonicalJson(identityRequest));

/** The request hash recorded in the lockfile: intent, take and attempt. */
export const requestHash = (intent: string, take: number, attempt: number): string =>
  // canonicalJson({ attempt, intent, take }), written out: this runs once per task.
  sha256Hex(`{"attempt":${attempt},"intent":"${intent}","take":${take}}`);

const BASE32 = "abcdefghijklmnopqrstuvwxyz234567";
const BASE32_CODES = Array.from(BASE32, (c) => c.charCodeAt(0));
/** Char code -> value of a hex digit (parseInt per digit cost a second per 100,000 ids). */
const HEX_VALUE = new Uint8Array(128);
for (let i = 0; i < 16; i++) {
  HEX_VALUE["0123456789abcdef".charCodeAt(i)] = i;
  HEX_VALUE["0123456789ABCDEF".charCodeAt(i)] = i;
}

/** 20 base32 characters (100 bits) of a hex digest: short, only [a-z2-7]. */
export const shortHash = (hex: string): string => {
  // 20 characters x 5 bits = 100 bits = the first 25 hex digits (4 bits each).
  const codes = new Array<number>(20);
  let acc = 0;
  let bits = 0;
  let n = 0;
  for (let i = 0; n < 20; i++) {
    acc = ((acc << 4) | HEX_VALUE[hex.charCodeAt(i) & 127]!) & 0xff;
    bits += 4;
    if (bits >= 5) {
      codes[n++] = BASE32_CODES[(acc >>> (bits - 5)) & 31]!;
      bits -= 5;
    }
  }
  return String.fromCharCode(...codes);
};

/**
 * `<name>-<job>-<hash>`. Name and job are limited by the schema to [a-z0-9_-] and 32
 * characters each, so an id is at most 86 characters of [a-z0-9_-]. Made as one flat
 * string: parts joined with `+` or a template are kept as a tree of them (a "cons
 * string") until something needs it whole, and each map lookup by such a key walks the
 * tree; ids are looked up several times per task in a run (100,000 tasks: the lockfile's
 * map, the plan, the reports). Array.join writes one string (a copy through a Buffer, as
 * before, took twice as long).
 */
export const taskId = (name: string, job: string, hash: string): string => [name, job, shortHash(hash)].join("-");
