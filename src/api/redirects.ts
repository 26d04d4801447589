// Redirects, followed by hand (never by the HTTP stack): an answer's target, or why it is
// not followed. Where a redirect may lead is the caller's rule: the service's exact
// origin for an API call (only there does the key go), any http(s) link for a download.

import type { IncomingMessage } from "node:http";

/** Redirects followed at most, for an API call (same origin only) or a download. */
const maxRedirects = 5;
const redirectStatuses = new Set([301, 302, 303, 307, 308]);

/** A redirect the client will not follow (another origin, not http(s), too many hops). */
export class RedirectRefused extends Error {}

/**
 * A redirect answer's target, or why it is not followed (malformed, past the hop limit);
 * undefined when the answer is not a redirect. Its body is never read: the connection
 * goes with it (a redirect whose body never ends must not keep a socket of the pool for
 * good). Where it may lead is the caller's rule (the service's origin, or http(s)).
 */
export const redirectOf = (response: IncomingMessage, from: URL, hops: number): URL | RedirectRefused | undefined => {
  const status = response.statusCode ?? 0;
  const location = response.headers.location;
  if (!redirectStatuses.has(status) || location === undefined) return undefined;
  response.destroy();
  let next: URL;
  try {
    next = new URL(location, from);
  } catch {
    return new RedirectRefused(`HTTP ${status} with a malformed redirect: not followed`);
  }
  if (hops >= maxRedirects) return new RedirectRefused(`more than ${maxRedirects} redirects: not followed`);
  return next;
};
