// One HTTP exchange over node:http / node:https with keep-alive agents: the transport
// of the API client and of result downloads (OmniClient.ts decides what is sent where,
// follows redirects by hand and turns failures into ApiError values). It replaced
// node-fetch on this path (issue 13): the three requests of a throughput task cost
// about 2.0 ms of CPU through bare node-fetch against 0.8 ms through bare node:http
// (test/bench/httpCost.ts), four times the whole 0.5 ms per task the runner is allowed.
// node-fetch builds a WHATWG Request, Headers and Response per call, pipes every body
// through a PassThrough (stream.pipeline: an AbortController, and a DOMException with a
// stack trace when it finishes), and decodes the text with a TextDecoder; none of it is
// needed to send a small JSON request and read a small JSON answer, or to hand on a body.
// Callbacks, not promises: exactly one of a request's callbacks is called, once.

import dns, { type LookupAddress } from "node:dns";
import http, { type IncomingHttpHeaders, type IncomingMessage, type OutgoingHttpHeaders } from "node:http";
import https from "node:https";
import { isIP } from "node:net";
import { TLSSocket } from "node:tls";
import zlib from "node:zlib";
import { addressClass, type AddressClass } from "../protocol/AddressClass.js";

export interface Agents {
  readonly http: http.Agent;
  readonly https: https.Agent;
}

/**
 * Keep-alive agents, `maxSockets` per host. Idle sockets are dropped after 4 s, before a
 * typical server's 5 s, so a reused socket is rarely closed under a request by the other side.
 */
export const makeAgents = (maxSockets: number): Agents => {
  const options = { keepAlive: true, maxSockets, timeout: 4_000 };
  return { http: new http.Agent(options), https: new https.Agent(options) };
};

export const destroyAgents = (agents: Agents): void => {
  agents.http.destroy();
  agents.https.destroy();
};

/** A request its `lastCheck` withheld: nothing of it was written. */
export class RequestWithheld extends Error {
  constructor() {
    super("the request was withheld by its last check before sending: nothing was sent");
  }
}

/**
 * Sends one request to `url` (http or https, chosen by its protocol). `onResponse` gets
 * the answer (its body still to be read or destroyed), or `onError` a failure before it
 * (refused, reset, destroyed; `RequestWithheld`). The request is returned so that a
 * timeout or an interrupt can destroy it.
 *
 * `lastCheck`, when given, runs synchronously right before the request's first byte is
 * written, once its socket is connected (for https: past its handshake), and false
 * withholds it: the request is destroyed unwritten. Without it the request is ended at
 * once, and its bytes wait in Node's buffers for the socket (a kept-alive one is handed
 * over on a later tick; a new one writes them when it connects, one or more round trips
 * later): a check made before that is not the last word. With it, what lies between the
 * check and the write syscall is `end()`'s own synchronous steps.
 */
export const sendRequest = (
  url: URL,
  init: {
    readonly method: string;
    readonly headers: OutgoingHttpHeaders;
    readonly body?: string;
    readonly agents: Agents;
    readonly lastCheck?: () => boolean;
    /** Why a connection to this address must not be made (AddressClass.ts), checked at connect time; undefined: allowed. */
    readonly refuseAddress?: (address: string) => string | undefined;
  },
  onResponse: (response: IncomingMessage) => void,
  onError: (error: Error) => void,
): http.ClientRequest => {
  const refuse = init.refuseAddress;
  // A literal address is connected to without a lookup: judged here, before anything is sent.
  const literal = url.hostname.replace(/^\[(.*)\]$/, "$1");
  const refusedLiteral = refuse && isIP(literal) ? refuse(literal) : undefined;
  if (refusedLiteral !== undefined) throw new AddressRefused(refusedLiteral);
  const options = { method: init.method, headers: init.headers, ...(refuse ? { lookup: guardedLookup(refuse) } : {}) };
  const request =
    url.protocol === "http:"
      ? http.request(url, { ...options, agent: init.agents.http }, onResponse)
      : https.request(url, { ...options, agent: init.agents.https }, onResponse);
  request.on("error", onError);
  const lastCheck = init.lastCheck;
  if (lastCheck === undefined) {
    request.end(init.body);
    return request;
  }
  // Nothing is written before end(): Node sends the headers with the first body bytes.
  request.once("socket", (socket) => {
    const write = () => {
      if (request.destroyed) return;
      let verdict: boolean | Error;
      try {
        verdict = lastCheck();
      } catch (error) {
        verdict = error instanceof Error ? error : new Error(String(error));
      }
      if (verdict === true) {
        request.end(init.body);
        return;
      }
      // Destroyed unwritten; its own error (a hang-up) is not the news.
      request.removeListener("error", onError);
      request.on("error", () => undefined);
      request.destroy();
      onError(verdict === false ? new RequestWithheld() : verdict);
    };
    // A socket from the pool is connected (a kept-alive one served an answer, so a TLS
    // one is past its handshake); a new one is written to once it is ready to carry bytes.
    if (!socket.connecting) write();
    else socket.once(socket instanceof TLSSocket ? "secureConnect" : "connect", write);
  });
  return request;
};

/** A connection refused by `refuseAddress`: nothing was sent. */
export class AddressRefused extends Error {}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * dns.lookup, keeping only the addresses `refuse` allows: the socket connects to what this
 * answered, so a name that resolves elsewhere later (DNS rebinding) is judged again then.
 */
const guardedLookup =
  (refuse: (address: string) => string | undefined) =>
  (hostname: string, options: dns.LookupOptions, callback: LookupCallback): void => {
    dns.lookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, "");
      const allowed = addresses.filter((a) => refuse(a.address) === undefined);
      if (allowed.length === 0) {
        return callback(new AddressRefused(`${hostname}: ${refuse(addresses[0]?.address ?? "") ?? "no address"}`) as NodeJS.ErrnoException, "");
      }
      if (options.all) callback(null, allowed);
      else callback(null, allowed[0]!.address, allowed[0]!.family);
    });
  };

/** The classes of address a host is on: its literal's, `localhost`'s, or those its name resolves to (none when it does not). */
export const hostAddressClasses = (hostname: string): Promise<ReadonlySet<AddressClass>> => {
  const host = hostname.replace(/^\[(.*)\]$/, "$1");
  if (isIP(host)) return Promise.resolve(new Set([addressClass(host)]));
  if (host === "localhost" || host.endsWith(".localhost")) return Promise.resolve(new Set(["loopback"]));
  return new Promise((resolve) =>
    dns.lookup(host, { all: true }, (error, addresses) => resolve(new Set(error ? [] : addresses.map((a) => addressClass(a.address))))),
  );
};

const empty = Buffer.alloc(0);

/** An answer's body was larger than the reader allows. */
export class BodyTooLarge extends Error {
  constructor(readonly limit: number) {
    super(`the answer's body is larger than ${limit} bytes: not read`);
  }
}

/**
 * Reads a whole body of at most `limit` bytes (refused from Content-Length when it says
 * more, cut off when it grows past), then calls `done` once: with the bytes, or with the
 * error that ended it (a reset, a connection closed before the end, too large).
 */
export const readBody = (response: IncomingMessage, limit: number, done: (error: Error | undefined, body: Buffer) => void): void => {
  let finished = false;
  const finish = (error: Error | undefined, body: Buffer) => {
    if (finished) return;
    finished = true;
    done(error, body);
  };
  const declared = Number(response.headers["content-length"]);
  if (declared > limit) {
    response.destroy();
    finish(new BodyTooLarge(limit), empty);
    return;
  }
  // One chunk (the usual answer) is kept as it came; from the second on, the bytes go
  // into one buffer that doubles as needed, so an answer sent in many tiny chunks costs
  // memory in proportion to its bytes, not one Buffer object per chunk.
  let first: Buffer | undefined;
  let joined: Buffer | undefined;
  let size = 0;
  response.on("data", (chunk: Buffer) => {
    const at = size;
    size += chunk.byteLength;
    if (size > limit) {
      response.destroy();
      finish(new BodyTooLarge(limit), empty);
      return;
    }
    if (joined === undefined) {
      if (first === undefined) {
        first = chunk;
        return;
      }
      joined = Buffer.allocUnsafe(Math.min(limit, Math.max(64 * 1024, size * 2)));
      first.copy(joined, 0);
      first = undefined;
    } else if (size > joined.byteLength) {
      const grown = Buffer.allocUnsafe(Math.min(limit, Math.max(joined.byteLength * 2, size)));
      joined.copy(grown, 0, 0, at);
      joined = grown;
    }
    chunk.copy(joined, at);
  });
  response.once("end", () => finish(undefined, joined !== undefined ? joined.subarray(0, size) : (first ?? empty)));
  response.once("error", (error) => finish(error, empty));
  // Closed without an end and without an error: the body was cut short. (The error is
  // made only then: an Error captures a stack trace, and 'close' follows every answer.)
  response.once("close", () => {
    if (!finished) finish(Object.assign(new Error("the connection closed before the answer ended"), { code: "ECONNRESET" }), empty);
  });
};

/**
 * A body as text: decompressed when the server compressed it although nothing asked it
 * to (gzip, deflate, br; at most `limit` bytes decoded), a UTF-8 byte order mark dropped
 * (as a TextDecoder would). An encoding not known is left as is (it reads as "not JSON").
 */
export const decodeText = (body: Buffer, headers: IncomingHttpHeaders, limit: number): string => {
  const encoding = headers["content-encoding"]?.trim().toLowerCase();
  let bytes = body;
  if (encoding === "gzip" || encoding === "x-gzip") bytes = zlib.gunzipSync(body, { maxOutputLength: limit });
  else if (encoding === "deflate") bytes = zlib.inflateSync(body, { maxOutputLength: limit });
  else if (encoding === "br") bytes = zlib.brotliDecompressSync(body, { maxOutputLength: limit });
  const text = bytes.toString("utf8");
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
};

/** A header's value as one string (repeated headers joined with ", "), or null when absent. */
export const headerValue = (headers: IncomingHttpHeaders, name: string): string | null => {
  const value = headers[name];
  return value === undefined ? null : Array.isArray(value) ? value.join(", ") : value;
};

/** Every header as one string per lower-case name. */
export const flatHeaders = (headers: IncomingHttpHeaders): Record<string, string> => {
  const out: Record<string, string> = {};
  for (const name in headers) {
    const value = headers[name];
    if (value !== undefined) out[name] = Array.isArray(value) ? value.join(", ") : value;
  }
  return out;
};
