// Where a result link may lead. Result links come from the service's answers, which are
// untrusted: a link to this machine, the local network or a cloud metadata address would
// have the run fetch local data and store it as a result (server-side request forgery).
// Such addresses are refused unless the service itself is on one of the same kind (the
// emulator on loopback, a proxy on the local network). Judged on the address a link's
// host resolves to, at connect time (httpTransport.ts): DNS may answer differently later.
// Pure.

import { isIP } from "node:net";

export type AddressClass = "loopback" | "link-local" | "private" | "unspecified" | "public";

const v4 = (text: string): number[] | undefined => {
  const parts = text.split(".");
  if (parts.length !== 4) return undefined;
  const bytes = parts.map(Number);
  return bytes.every((b) => Number.isInteger(b) && b >= 0 && b <= 255) ? bytes : undefined;
};

const classOfV4 = ([a, b]: number[]): AddressClass => {
  if (a === 0) return "unspecified"; // 0.0.0.0/8: "this host"; connecting to it reaches this machine
  if (a === 127) return "loopback";
  if (a === 169 && b === 254) return "link-local"; // cloud metadata (169.254.169.254) lives here
  if (a === 10 || (a === 172 && b! >= 16 && b! <= 31) || (a === 192 && b === 168)) return "private";
  if (a === 100 && b! >= 64 && b! <= 127) return "private"; // 100.64/10, carrier-grade NAT
  if (a! >= 224) return "private"; // multicast, reserved, broadcast: no result host
  return "public";
};

/** The 8 groups of an IPv6 address, or undefined when it is not one. */
const v6Groups = (text: string): number[] | undefined => {
  let t = text.toLowerCase();
  const zone = t.indexOf("%");
  if (zone >= 0) t = t.slice(0, zone);
  // A dotted IPv4 tail (::ffff:127.0.0.1) is two groups.
  const lastColon = t.lastIndexOf(":");
  const tail = t.slice(lastColon + 1);
  if (tail.includes(".")) {
    const b = v4(tail);
    if (!b) return undefined;
    t = `${t.slice(0, lastColon + 1)}${((b[0]! << 8) | b[1]!).toString(16)}:${((b[2]! << 8) | b[3]!).toString(16)}`;
  }
  const halves = t.split("::");
  if (halves.length > 2) return undefined;
  const parse = (s: string) => (s === "" ? [] : s.split(":").map((g) => (/^[0-9a-f]{1,4}$/.test(g) ? parseInt(g, 16) : Number.NaN)));
  const head = parse(halves[0]!);
  const rest = halves.length === 2 ? parse(halves[1]!) : [];
  if ([...head, ...rest].some(Number.isNaN)) return undefined;
  const known = head.length + rest.length;
  if (halves.length === 1 ? known !== 8 : known > 7) return undefined;
  return [...head, ...new Array<number>(8 - known).fill(0), ...rest];
};

/** What kind of address an IP address (v4 or v6, as a resolver or a socket gives it) is. */
export const addressClass = (address: string): AddressClass => {
  const ip = address.startsWith("[") && address.endsWith("]") ? address.slice(1, -1) : address;
  if (isIP(ip) === 4) return classOfV4(v4(ip)!);
  const g = v6Groups(ip);
  // Not an address at all: nothing to allow.
  if (!g) return "unspecified";
  if (g.every((x) => x === 0)) return "unspecified";
  if (g.slice(0, 7).every((x) => x === 0) && g[7] === 1) return "loopback";
  // IPv4-mapped (::ffff:a.b.c.d) and IPv4-compatible (::a.b.c.d): the IPv4 address decides.
  if (g.slice(0, 5).every((x) => x === 0) && (g[5] === 0xffff || g[5] === 0)) {
    return classOfV4([g[6]! >> 8, g[6]! & 0xff, g[7]! >> 8, g[7]! & 0xff]);
  }
  if ((g[0]! & 0xffc0) === 0xfe80) return "link-local";
  if ((g[0]! & 0xfe00) === 0xfc00) return "private"; // fc00::/7, unique local
  if ((g[0]! & 0xffc0) === 0xfec0) return "private"; // fec0::/10, old site-local
  if ((g[0]! & 0xff00) === 0xff00) return "private"; // multicast
  return "public";
};

/** How a refusal starts, so the downloader can tell it from a network failure worth retrying. */
export const linkRefused = "refusing to fetch a result link that leads to";

/**
 * Why a result link whose host resolved to `address` must not be fetched, or undefined
 * when it may: a public address always may; any other only when the service's own address
 * is of that class (`service`: the classes its base URL's host is or resolves to).
 */
export const resultAddressRefusal = (address: string, service: ReadonlySet<AddressClass>): string | undefined => {
  const cls = addressClass(address);
  if (cls === "public" || service.has(cls)) return undefined;
  return (
    `${linkRefused} ${address} (a ${cls} address): result links may lead only to public ` +
    `addresses unless the service's own base URL is on a ${cls} address too`
  );
};
