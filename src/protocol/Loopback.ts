// Which addresses count as this machine: the emulator only fetches media from, and only
// calls back to, loopback hosts unless told otherwise, so it never sends traffic away.

import { isIP } from "node:net";

export const isLoopbackHost = (hostname: string): boolean => {
  const h = hostname.startsWith("[") && hostname.endsWith("]") ? hostname.slice(1, -1) : hostname;
  if (h === "localhost" || h.endsWith(".localhost")) return true;
  if (isIP(h) === 4) return h.startsWith("127.");
  if (isIP(h) === 6) return h === "::1" || h.toLowerCase().startsWith("::ffff:127.");
  return false;
};

export const isLoopbackAddress = (address: string | undefined): boolean =>
  address !== undefined && isLoopbackHost(address);

/** An http(s) address whose host is this machine by name or literal (not resolved: no DNS). */
export const isLoopbackUrl = (url: string): boolean => {
  try {
    return isLoopbackHost(new URL(url).hostname);
  } catch {
    return false;
  }
};
