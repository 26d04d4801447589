// The client's transport: one API call from operation, method, path and body to data or
// an ApiError. It owns the HTTP side (keep-alive agents, the Authorization header, the
// service's origin and its redirects, the time and size limits, request counts) and the
// reading of answers (envelope, schema, Retry-After, x-request-id: interpretAnswer.ts),
// and it applies the configured retry schedule to idempotent calls. The operations
// (createOperations.ts, videoQueries.ts, imageQueries.ts, findImages.ts, download.ts)
// say what to send; they never touch HTTP themselves.

import type { ClientRequest } from "node:http";
import { Effect, Either, Redacted, type Schedule } from "effect";
import { DecodeError, RequestTimeout, ServiceError, TransportError, type ApiError, type Operation } from "./ApiError.js";
import { loadAnswerSchemas, type AnswerSchemas } from "./AnswerSchemas.js";
import type { ClientStats, LastCheck } from "./clientTypes.js";
import { stringifyExact } from "./exactJson.js";
import { decodeText, destroyAgents, headerValue, makeAgents, readBody, RequestWithheld, sendRequest, type Agents } from "./httpTransport.js";
import { interpretAnswer, interpretTaskAnswer, type RawAnswer, type TaskAnswer } from "./interpretAnswer.js";
import { connectCodes, errorCode, errorText, urlForMessage } from "./networkErrors.js";
import { serviceTextCleaner } from "./neutralise.js";
import { RedirectRefused, redirectOf } from "./redirects.js";
import { withRetry } from "./retry.js";

/** What the transport needs of the client's configuration (OmniClientConfig). */
export interface TransportConfig {
  readonly baseUrl: string;
  readonly apiKey: Redacted.Redacted<string>;
  readonly timeoutMs?: number;
  readonly downloadTimeoutMs?: number;
  readonly retry?: Schedule.Schedule<unknown, ApiError>;
  readonly userAgent?: string;
  readonly maxSockets?: number;
}

export type ApiOperation = Exclude<Operation, "download">;
export type TaskOperation = "queryVideos" | "cursorVideos" | "getImage" | "listImages";
/** A query answer read per task, with its HTTP status (for a DecodeError). */
export type CheckedAnswer = TaskAnswer & { readonly httpStatus: number };

export interface ApiTransport {
  /** The service's address as configured. */
  readonly base: URL;
  readonly timeoutMs: number;
  readonly downloadTimeoutMs: number;
  readonly userAgent: string;
  /** Downloads have agents of their own: a slow transfer never holds a socket an API call waits for. */
  readonly downloadAgents: Agents;
  readonly schemas: AnswerSchemas;
  /** The key scrubbed and control characters neutralised: every text of an answer passes here. */
  readonly scrub: (text: string) => string;
  /** One more request sent for this operation (ClientStats). */
  readonly count: (operation: Operation) => void;
  readonly stats: Effect.Effect<ClientStats>;
  /** One call: exchange, then the envelope and schema decide (`lastCheck`: see LastCheck). */
  readonly call: <G = never>(
    operation: ApiOperation,
    method: "GET" | "POST",
    path: string,
    body?: unknown,
    lastCheck?: LastCheck<G>,
  ) => Effect.Effect<unknown, ApiError | G>;
  /** One query call, each task checked on its own (interpretTaskAnswer). */
  readonly callTasks: (operation: TaskOperation, method: "GET" | "POST", path: string, body?: unknown) => Effect.Effect<CheckedAnswer, ApiError>;
  /** Idempotent calls get the configured retry schedule, if any. */
  readonly idempotent: <A>(effect: Effect.Effect<A, ApiError>) => Effect.Effect<A, ApiError>;
}

const defaultTimeoutMs = 30_000;
const defaultDownloadTimeoutMs = 10 * 60_000;
/**
 * The largest API answer read: far above any real one (a B3 page of 500 tasks is about
 * 1 MB), so an endless or huge body from a broken service cannot fill the memory.
 */
const maxAnswerBytes = 32 * 1024 ** 2;

/** A service's error answer, with our request (method and path, no query) named: what a refused address lacks. */
const naming = (error: ApiError, method: string, path: string): ApiError => {
  if (error._tag !== "ServiceError") return error;
  const q = path.indexOf("?");
  // Every field kept (the message is no own enumerable property of an Error: named).
  return new ServiceError({ ...error, message: error.message, request: `${method} ${q < 0 ? path : path.slice(0, q)}` });
};

/**
 * The strict (whole-answer) reading the first callers rely on: any anomaly fails the
 * answer as a DecodeError (retried like any unreadable answer).
 */
export const strict = <T extends CheckedAnswer>(checked: T): Effect.Effect<T, ApiError> =>
  checked.anomalies.length === 0
    ? Effect.succeed(checked)
    : Effect.fail(
        new DecodeError({
          operation: checked.anomalies[0]!.operation,
          httpStatus: checked.httpStatus,
          requestId: checked.anomalies[0]!.requestId,
          problems: checked.anomalies.map((a) => a.problems).join("; "),
        }),
      );

interface Exchanging {
  readonly base: URL;
  /** The address without trailing slashes: paths are appended to it (a path prefix is kept). */
  readonly baseText: string;
  readonly apiKey: Redacted.Redacted<string>;
  readonly userAgent: string;
  readonly timeoutMs: number;
  readonly agents: Agents;
  readonly counts: Record<string, number>;
  readonly scrub: (text: string) => string;
}

/** One HTTP exchange, the whole answer read as text within timeoutMs (`lastCheck`: see LastCheck). */
const exchange = <G = never>(
  x: Exchanging,
  operation: ApiOperation,
  method: "GET" | "POST",
  path: string,
  body?: unknown,
  lastCheck?: LastCheck<G>,
) =>
  Effect.async<RawAnswer, TransportError | RequestTimeout | G>((resume) => {
    x.counts[operation] = (x.counts[operation] ?? 0) + 1;
    // Element ids above 2^53 travel as bigint and are written as exact JSON integers.
    const bodyText = body === undefined ? undefined : stringifyExact(body);
    let current: ClientRequest | undefined;
    let ended = false;
    const end = (effect: Effect.Effect<RawAnswer, TransportError | RequestTimeout | G>) => {
      if (ended) return;
      ended = true;
      clearTimeout(timer);
      resume(effect);
    };
    const timer = setTimeout(() => {
      end(Effect.fail(new RequestTimeout({ operation, afterMs: x.timeoutMs, phase: "sent" })));
      current?.destroy();
    }, x.timeoutMs);
    // The last check's verdict when it withheld a send (nothing of it was written).
    let withheld: G | undefined;
    const check = lastCheck && ((): boolean => (withheld = lastCheck()) === undefined);
    const failed = (error: unknown) => {
      if (error instanceof RequestWithheld && withheld !== undefined) {
        x.counts[operation] = (x.counts[operation] ?? 1) - 1; // counted as sent, and never was
        return end(Effect.fail(withheld));
      }
      const code = errorCode(error);
      end(
        Effect.fail(
          new TransportError({
            operation,
            // A refused redirect answered a request that was sent: a create's outcome is unknown.
            phase: !(error instanceof RedirectRefused) && code !== undefined && connectCodes.has(code) ? "connect" : "sent",
            reason: x.scrub(error instanceof RedirectRefused ? error.message : errorText(error)),
          }),
        ),
      );
    };
    // Redirects are followed by hand, and only within the exact origin of the service
    // (scheme, host and port): only there does the key go. Only a GET follows one: a
    // POST (a create) answered with a redirect may have been carried out already, so
    // it is never sent again here; its outcome is unknown and is looked up by its
    // external id, as for any other create whose answer proves nothing.
    const send = (url: URL, sendMethod: "GET" | "POST", hops: number) => {
      const withBody = bodyText !== undefined && sendMethod !== "GET";
      current = sendRequest(
        url,
        {
          method: sendMethod,
          agents: x.agents,
          headers: {
            // The key leaves its Redacted wrapper only here, at the moment of sending.
            Authorization: `Bearer ${Redacted.value(x.apiKey)}`,
            "Content-Type": "application/json",
            Accept: "application/json",
            "User-Agent": x.userAgent,
            ...(withBody ? { "Content-Length": Buffer.byteLength(bodyText) } : {}),
          },
          ...(withBody ? { body: bodyText } : {}),
          ...(check !== undefined ? { lastCheck: check } : {}),
        },
        (response) => {
          if (ended) {
            response.destroy();
            return;
          }
          const status = response.statusCode ?? 0;
          const next = redirectOf(response, url, hops);
          if (next !== undefined) {
            if (next instanceof RedirectRefused) return failed(next);
            if (next.origin !== x.base.origin) {
              return failed(
                new RedirectRefused(
                  `the service answered HTTP ${status} redirecting to another origin (${urlForMessage(next.href)}); ` +
                    `the API key is sent only to ${x.base.origin}, so the redirect was not followed`,
                ),
              );
            }
            if (sendMethod !== "GET") {
              return failed(
                new RedirectRefused(
                  `the service answered HTTP ${status} (a redirect) to a ${sendMethod}: not sent again, since the service may have carried it out already`,
                ),
              );
            }
            try {
              return send(next, sendMethod, hops + 1);
            } catch (error) {
              return failed(error);
            }
          }
          readBody(response, maxAnswerBytes, (error, bytes) => {
            if (error !== undefined) return failed(error);
            let text: string;
            try {
              text = decodeText(bytes, response.headers, maxAnswerBytes);
            } catch (decodeError) {
              return failed(new Error(`the answer's compressed body could not be read (${errorText(decodeError)})`));
            }
            end(
              Effect.succeed({
                httpStatus: status,
                retryAfter: headerValue(response.headers, "retry-after"),
                headerRequestId: headerValue(response.headers, "x-request-id"),
                body: text,
              }),
            );
          });
        },
        failed,
      );
    };
    try {
      send(new URL(`${x.baseText}${path}`), method, 0);
    } catch (error) {
      // A request Node refuses to send (a header it cannot carry): an error, not a defect.
      failed(error);
      current?.destroy();
    }
    return Effect.sync(() => {
      ended = true;
      clearTimeout(timer);
      current?.destroy();
    });
  });

/** Builds the transport; its agents are closed when the scope ends. */
export const makeApiTransport = (config: TransportConfig) =>
  Effect.gen(function* () {
    const counts: Record<string, number> = {};
    const scrub = serviceTextCleaner(Redacted.value(config.apiKey));
    const schemas = loadAnswerSchemas();
    const apiAgents = makeAgents(config.maxSockets ?? 16);
    const downloadAgents = makeAgents(config.maxSockets ?? 16);
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        destroyAgents(apiAgents);
        destroyAgents(downloadAgents);
      }),
    );
    const x: Exchanging = {
      base: new URL(config.baseUrl),
      baseText: config.baseUrl.replace(/\/+$/, ""),
      apiKey: config.apiKey,
      userAgent: config.userAgent ?? "omnibatch",
      timeoutMs: config.timeoutMs ?? defaultTimeoutMs,
      agents: apiAgents,
      counts,
      scrub,
    };

    const call = <G = never>(operation: ApiOperation, method: "GET" | "POST", path: string, body?: unknown, lastCheck?: LastCheck<G>) =>
      exchange(x, operation, method, path, body, lastCheck).pipe(
        Effect.flatMap((answer) => Either.match(interpretAnswer(operation, answer, schemas, scrub, Date.now()), {
          onLeft: (error) => Effect.fail(naming(error, method, path)),
          onRight: (data) => Effect.succeed(data),
        })),
      );

    const callTasks = (operation: TaskOperation, method: "GET" | "POST", path: string, body?: unknown) =>
      exchange(x, operation, method, path, body).pipe(
        Effect.flatMap((answer) =>
          Either.match(interpretTaskAnswer(operation, answer, schemas, scrub, Date.now()), {
            onLeft: (error) => Effect.fail(naming(error, method, path)),
            onRight: (data) => Effect.succeed({ ...data, httpStatus: answer.httpStatus }),
          }),
        ),
      );

    const idempotent = <A>(effect: Effect.Effect<A, ApiError>): Effect.Effect<A, ApiError> =>
      config.retry === undefined ? effect : withRetry(effect, config.retry);

    const transport: ApiTransport = {
      base: x.base,
      timeoutMs: x.timeoutMs,
      downloadTimeoutMs: config.downloadTimeoutMs ?? defaultDownloadTimeoutMs,
      userAgent: x.userAgent,
      downloadAgents,
      schemas,
      scrub,
      count: (operation) => {
        counts[operation] = (counts[operation] ?? 0) + 1;
      },
      stats: Effect.sync((): ClientStats => ({ requests: { ...counts } })),
      call,
      callTasks,
      idempotent,
    };
    return transport;
  });
