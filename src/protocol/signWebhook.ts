// Standard-Webhooks signing of callbacks (spec/service-behaviour.md): HMAC-SHA256 over
// "{id}.{timestamp}.{body}", keyed by the base64-decoded secret after `whsec_`,
// sent as `v1,<base64>`. Pure, so it can be checked against the documented vector.

import { createHmac } from "node:crypto";

export const signWebhook = (secret: string, id: string, timestampSec: number, body: string): string => {
  const key = Buffer.from(secret.startsWith("whsec_") ? secret.slice("whsec_".length) : secret, "base64");
  return `v1,${createHmac("sha256", key).update(`${id}.${timestampSec}.${body}`).digest("base64")}`;
};
