// The ways a call to the service can fail, as one tagged union. Each error carries what
// a person (or the engine) needs to decide what to do next: the operation, the service's
// own code and message, and whether a create may have reached the service.
// No message may contain the API key: the client scrubs every text it puts here.

import { Data } from "effect";

/** The client's operations; every error names the one that failed. */
export type Operation =
  | "createVideo"
  | "createImage"
  | "queryVideos"
  | "cursorVideos"
  | "getImage"
  | "listImages"
  | "download";

/** Operations that create (and pay for) a task: never retried blindly. */
export const createOperations: ReadonlySet<Operation> = new Set(["createVideo", "createImage"]);

/**
 * The service answered with an error envelope (or an HTTP error without one).
 * `code` is the envelope's code; it is undefined when the answer carried none (a proxy's
 * 502 page, an expired download link), and then only the HTTP status is known.
 */
export class ServiceError extends Data.TaggedError("ServiceError")<{
  readonly operation: Operation;
  readonly code: number | undefined;
  readonly httpStatus: number;
  /** The service's message, as sent (scrubbed of the key). */
  readonly message: string;
  readonly requestId: string;
  /** The `x-request-id` header, when the answer had one (the live service sends it; the trace id its support asks for). */
  readonly headerRequestId?: string;
  /** Our request, method and path without the query (`POST /omni-video/svc-o1`), when the client knows it: it names what the address lacks. */
  readonly request?: string;
  /** From a `Retry-After` header (seconds or HTTP date), when there was one. */
  readonly retryAfterMs?: number;
}> {}

/**
 * No answer arrived: the connection failed. `phase` "connect" means the request never
 * left (nothing was created); "sent" means the body may have reached the service, so a
 * create's outcome is unknown.
 */
export class TransportError extends Data.TaggedError("TransportError")<{
  readonly operation: Operation;
  readonly phase: "connect" | "sent";
  /** The network library's own description (e.g. "ECONNRESET: socket hang up"). */
  readonly reason: string;
}> {
  override get message(): string {
    return `${this.operation}: network error ${this.phase === "connect" ? "before the request was sent" : "after the request was sent"}: ${this.reason}`;
  }
}

/** No complete answer within `afterMs`. The request may have been processed. */
export class RequestTimeout extends Data.TaggedError("RequestTimeout")<{
  readonly operation: Operation;
  readonly afterMs: number;
  readonly phase: "connect" | "sent";
}> {
  override get message(): string {
    return `${this.operation}: no answer within ${this.afterMs} ms`;
  }
}

/** The answer was not what the wire format (schemas/api/) says; `problems` lists where. */
export class DecodeError extends Data.TaggedError("DecodeError")<{
  readonly operation: Operation;
  readonly httpStatus: number;
  readonly requestId: string;
  readonly problems: string;
}> {
  override get message(): string {
    return `${this.operation}: unexpected answer from the service (HTTP ${this.httpStatus}${this.requestId ? `, request ${this.requestId}` : ""}): ${this.problems}`;
  }
}

export type ApiError = ServiceError | TransportError | RequestTimeout | DecodeError;

/** Whether a failure is one of the client's (and so has a class, classify.ts). */
export const isApiError = (error: unknown): error is ApiError =>
  error instanceof ServiceError || error instanceof TransportError || error instanceof RequestTimeout || error instanceof DecodeError;

/** OMNIBATCH_API_KEY is not set (or empty). Exit 2: the user must provide it. */
export class MissingApiKey extends Data.TaggedError("MissingApiKey")<{}> {
  override get message(): string {
    return "OMNIBATCH_API_KEY is not set: export the service's API key in that environment variable (it is never read from a file or a flag)";
  }
}

/** The client's configuration is unusable (no or a malformed base URL). Exit 2. */
export class ClientConfigInvalid extends Data.TaggedError("ClientConfigInvalid")<{
  readonly message: string;
}> {}
