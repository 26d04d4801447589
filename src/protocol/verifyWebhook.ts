// Checks a Standard-Webhooks signature on an incoming callback: HMAC-SHA256 over
// "{id}.{timestamp}.{body}" with the secret after `whsec_` (the emulator's signing
// function, which is pure), any of several space-separated signatures, fresh timestamps only.

import { timingSafeEqual } from "node:crypto";
import { signWebhook } from "./signWebhook.js";

export interface WebhookHeaders {
  readonly id: string | undefined;
  readonly timestamp: string | undefined;
  readonly signature: string | undefined;
}

/** Timestamps further than this from our clock are refused (replays, stale deliveries). */
export const webhookToleranceSec = 5 * 60;

const sameText = (a: string, b: string): boolean => {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
};

/** True when one of the signatures matches and the timestamp is within the tolerance. Pure. */
export const verifyWebhook = (secret: string, headers: WebhookHeaders, body: string, nowSec: number): boolean => {
  const { id, timestamp, signature } = headers;
  if (!id || !timestamp || !signature || !/^\d{1,12}$/.test(timestamp)) return false;
  const ts = Number(timestamp);
  if (Math.abs(nowSec - ts) > webhookToleranceSec) return false;
  const expected = signWebhook(secret, id, ts, body);
  return signature
    .split(" ")
    .filter((s) => s.length > 0)
    .some((s) => sameText(s, expected));
};
