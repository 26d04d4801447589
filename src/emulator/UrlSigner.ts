// Hotlink protection of result links: a link carries its expiry and an HMAC of its
// path and expiry under a secret that only this emulator knows, so a tampered or
// expired link can be told apart from a good one without any stored state.

import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";

export type LinkCheck = { readonly ok: true; readonly expiresAt: number } | { readonly ok: false; readonly reason: "tampered" | "expired" };

export class UrlSigner {
  private readonly secret = randomBytes(32);

  private mac(path: string, expiresAt: number): string {
    return createHmac("sha256", this.secret).update(`${path}\n${expiresAt}`).digest("base64url").slice(0, 32);
  }

  /** `path?expires=..&sig=..` for a path such as /_files/123/video.mp4. */
  sign(path: string, expiresAt: number): string {
    return `${path}?expires=${expiresAt}&sig=${this.mac(path, expiresAt)}`;
  }

  check(path: string, expires: string | null, sig: string | null, now: number): LinkCheck {
    if (expires === null || sig === null || !/^\d{1,16}$/.test(expires)) return { ok: false, reason: "tampered" };
    const expiresAt = Number(expires);
    const want = Buffer.from(this.mac(path, expiresAt));
    const got = Buffer.from(sig);
    if (got.length !== want.length || !timingSafeEqual(got, want)) return { ok: false, reason: "tampered" };
    if (now >= expiresAt) return { ok: false, reason: "expired" };
    return { ok: true, expiresAt };
  }
}
