// The client of the service's six operations, plus result downloads, as an Effect
// service. It speaks HTTP (node:http over keep-alive agents, httpTransport.ts), checks every answer
// against schemas/api/, and reports failures as ApiError values. It never retries a
// create: deciding whether a create may be sent again is the engine's job.
// The key goes to the service's exact origin only: redirects are followed by hand, and
// only to that origin; downloads never carry it. Every string of every answer is
// scrubbed of the key and has its control characters neutralised before it leaves here.

import type { ClientRequest, IncomingMessage } from "node:http";
import type { Readable } from "node:stream";
import { Context, Effect, Either, Layer, Redacted, type Schedule } from "effect";
import {
  ClientConfigInvalid,
  DecodeError,
  MissingApiKey,
  RequestTimeout,
  ServiceError,
  TransportError,
  type ApiError,
  type Operation,
} from "./ApiError.js";
import { loadAnswerSchemas } from "./AnswerSchemas.js";
import { classify } from "./classify.js";
import { fillImageCreated, fillImageTask, fillVideoTask } from "./fillDefaults.js";
import { interpretAnswer, interpretTaskAnswer, type TaskAnomaly, type TaskAnswer } from "./interpretAnswer.js";
import { stringifyExact } from "./exactJson.js";
import { serviceTextCleaner } from "./neutralise.js";
import { withRetry } from "./retry.js";
import { AddressRefused, decodeText, destroyAgents, flatHeaders, headerValue, hostAddressClasses, makeAgents, readBody, RequestWithheld, sendRequest } from "./httpTransport.js";
import { resultAddressRefusal, type AddressClass } from "../protocol/AddressClass.js";
import { DEFAULT_SERVICE, defaultVideoModel, resolveServiceName } from "../rules/serviceNames.js";
import {
  paths,
  type CursorPage,
  type CursorQueryRequest,
  type ImageCreated,
  type ImageCreateRequest,
  type ImageTask,
  type VideoCreated,
  type VideoCreateRequest,
  type VideoTask,
} from "./wire.js";

export interface OmniClientConfig {
  /** The service's address, e.g. https://api.example.com (a path prefix is kept). */
  readonly baseUrl: string;
  readonly apiKey: Redacted.Redacted<string>;
  /** The service's name: the default video model is `<service>-o1` (`/omni-video/kling-o1`). Default "kling". */
  readonly service?: string;
  /** Limit for a whole API call (connect, send, answer). Default 30 s. */
  readonly timeoutMs?: number;
  /** Limit for a whole download, body included. Default 10 min; headers must still arrive within timeoutMs. */
  readonly downloadTimeoutMs?: number;
  /** Retry schedule for idempotent calls (queries, list, get, download); only "retry"-class errors are retried. Default: none. */
  readonly retry?: Schedule.Schedule<unknown, ApiError>;
  readonly userAgent?: string;
  /** Sockets per host for API calls (and, separately, for downloads). Default 16. */
  readonly maxSockets?: number;
  /** Ids per `GET /tasks` call. Default 20: the live service refuses more than 20 in total (400 code 1201). */
  readonly queryBatchSize?: number;
  /** `GET /tasks` batches in flight at once. Default 2. */
  readonly queryConcurrency?: number;
}

export interface VideoQuery {
  readonly taskIds?: readonly string[];
  readonly externalTaskIds?: readonly string[];
}

export interface FindImageOptions {
  /** B3 page size while searching. Default 100. */
  readonly pageSize?: number;
  /** Pages to search at most. Default 50 (the service allows pageNum up to 1000). */
  readonly maxPages?: number;
  /**
   * Stop paging once a whole page is older than this (Unix ms): the list is newest first,
   * so older pages cannot hold a task created later. Pass the time the create intent was
   * recorded, minus a margin for clock skew.
   */
  readonly createdAfterMs?: number;
}

export interface DownloadResponse {
  readonly status: number;
  /** Response headers, lower-case names. */
  readonly headers: Readonly<Record<string, string>>;
  /** The body, to be consumed (or destroyed) by the caller. Errors if the transfer fails or exceeds downloadTimeoutMs. */
  readonly body: Readable;
  /** From Content-Length, when the server sent it. */
  readonly contentLength?: number;
}

/** The readable tasks of one or more query answers, and the unreadable ones (see interpretTaskAnswer). */
export interface CheckedTasks<T> {
  readonly tasks: T[];
  readonly anomalies: TaskAnomaly[];
}

export interface ClientStats {
  /** HTTP requests sent, per operation (each batch and each retry counts). */
  readonly requests: Record<string, number>;
}

/**
 * A create's last check (the run lock still ours), run synchronously right before the
 * request's bytes are written to a connected socket, for each send (a redirect's too):
 * undefined lets it go; an error withholds it (nothing sent) and the create fails with it.
 */
export type LastCheck<G> = () => G | undefined;

export interface OmniClientService {
  /** A1 to `/omni-video/{model}`; `model` absent: the service's default (`<service>-o1`). */
  readonly createVideo: <G = never>(req: VideoCreateRequest, lastCheck?: LastCheck<G>, model?: string) => Effect.Effect<VideoCreated, ApiError | G>;
  readonly createImage: <G = never>(req: ImageCreateRequest, lastCheck?: LastCheck<G>) => Effect.Effect<ImageCreated, ApiError | G>;
  /** A2 in batches of ≤ queryBatchSize ids; answers concatenated. An id missing from the answer is "not visible yet". */
  readonly queryVideos: (q: VideoQuery) => Effect.Effect<VideoTask[], ApiError>;
  readonly cursorVideos: (req: CursorQueryRequest) => Effect.Effect<CursorPage, ApiError>;
  readonly getImage: (idOrExternalId: string) => Effect.Effect<ImageTask, ApiError>;
  readonly listImages: (p: { readonly pageNum: number; readonly pageSize: number }) => Effect.Effect<ImageTask[], ApiError>;
  /** The image task with this external_task_id, or undefined when none is found (see findImages). */
  readonly findImageByExternalId: (externalId: string, opts?: FindImageOptions) => Effect.Effect<ImageTask | undefined, ApiError>;
  /**
   * The image tasks with these external_task_ids, found by paging B3 once for all of them
   * (after trying B2 directly when there are few). Ids not found are absent from the map.
   */
  readonly findImagesByExternalIds: (
    externalIds: readonly string[],
    opts?: FindImageOptions,
  ) => Effect.Effect<Map<string, ImageTask>, ApiError>;
  /**
   * GET a result URL, streaming, without the API key; redirects followed (at most 5, http(s)
   * only). Fails on a non-2xx answer (ServiceError with the HTTP status), and before
   * sending anything for a URL that is not http(s).
   */
  readonly download: (url: string) => Effect.Effect<DownloadResponse, ApiError>;
  /** queryVideos, validated per task: one unreadable task is an anomaly, the rest come through. */
  readonly queryVideosChecked: (q: VideoQuery) => Effect.Effect<CheckedTasks<VideoTask>, ApiError>;
  /** cursorVideos, validated per task. */
  readonly cursorVideosChecked: (req: CursorQueryRequest) => Effect.Effect<CursorPage & { readonly anomalies: TaskAnomaly[] }, ApiError>;
  /** getImage, validated per task: an unreadable task is an anomaly (tasks: []). */
  readonly getImageChecked: (idOrExternalId: string) => Effect.Effect<CheckedTasks<ImageTask>, ApiError>;
  /** listImages, validated per task. */
  readonly listImagesChecked: (p: { readonly pageNum: number; readonly pageSize: number }) => Effect.Effect<CheckedTasks<ImageTask>, ApiError>;
  readonly stats: Effect.Effect<ClientStats>;
}

const defaultTimeoutMs = 30_000;
/** Redirects followed at most, for an API call (same origin only) or a download. */
const maxRedirects = 5;
const redirectStatuses = new Set([301, 302, 303, 307, 308]);

/** A redirect the client will not follow (another origin, not http(s), too many hops). */
class RedirectRefused extends Error {}

/**
 * A redirect answer's target, or why it is not followed (malformed, past the hop limit);
 * undefined when the answer is not a redirect. Its body is never read: the connection
 * goes with it (a redirect whose body never ends must not keep a socket of the pool for
 * good). Where it may lead is the caller's rule (the service's origin, or http(s)).
 */
const redirectOf = (response: IncomingMessage, from: URL, hops: number): URL | RedirectRefused | undefined => {
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
const defaultDownloadTimeoutMs = 10 * 60_000;
/**
 * The largest API answer read: far above any real one (a B3 page of 500 tasks is about
 * 1 MB), so an endless or huge body from a broken service cannot fill the memory.
 */
const maxAnswerBytes = 32 * 1024 ** 2;
/** The most of a failed download's answer read, for an envelope's code and message. */
const maxErrorPageBytes = 64 * 1024;
/** With this many ids or fewer, asking B2 per id is cheaper than paging B3. */
const directLookupLimit = 3;

/** Network failures that happen before any byte of the request left: nothing reached the service. */
const connectCodes = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH", "EADDRNOTAVAIL"]);

const errorCode = (error: unknown): string | undefined => {
  const code = (error as { code?: unknown; cause?: { code?: unknown } } | null)?.code ?? (error as { cause?: { code?: unknown } } | null)?.cause?.code;
  return typeof code === "string" ? code : undefined;
};

const errorText = (error: unknown): string => {
  const code = errorCode(error);
  const message = error instanceof Error ? error.message : String(error);
  return code !== undefined && !message.includes(code) ? `${code}: ${message}` : message;
};

/** A service's error answer, with our request (method and path, no query) named: what a refused address lacks. */
const naming = (error: ApiError, method: string, path: string): ApiError => {
  if (error._tag !== "ServiceError") return error;
  const q = path.indexOf("?");
  // Every field kept (the message is no own enumerable property of an Error: named).
  return new ServiceError({ ...error, message: error.message, request: `${method} ${q < 0 ? path : path.slice(0, q)}` });
};

/** A URL fit for an error message: no query string (signed links carry signatures there). */
const urlForMessage = (url: string): string => {
  try {
    const parsed = new URL(url);
    return `${parsed.origin}${parsed.pathname}`;
  } catch {
    return "(malformed URL)";
  }
};

const chunk = <T>(items: readonly T[], size: number): T[][] => {
  const batches: T[][] = [];
  for (let i = 0; i < items.length; i += size) batches.push(items.slice(i, i + size));
  return batches;
};

/** Builds the client; its agents are closed when the scope ends. */
const make = (config: OmniClientConfig) =>
  Effect.gen(function* () {
    const base = new URL(config.baseUrl);
    const baseText = config.baseUrl.replace(/\/+$/, "");
    const timeoutMs = config.timeoutMs ?? defaultTimeoutMs;
    const downloadTimeoutMs = config.downloadTimeoutMs ?? defaultDownloadTimeoutMs;
    const videoModel = defaultVideoModel(config.service ?? DEFAULT_SERVICE);
    const userAgent = config.userAgent ?? "omnibatch";
    const batchSize = Math.max(1, config.queryBatchSize ?? QUERY_BATCH_MAX);
    const queryConcurrency = Math.max(1, config.queryConcurrency ?? 2);
    const schemas = loadAnswerSchemas();
    const counts: Record<string, number> = {};

    const scrub = serviceTextCleaner(Redacted.value(config.apiKey));

    // Downloads have agents of their own: a slow transfer never holds a socket an API call waits for.
    const apiAgents = makeAgents(config.maxSockets ?? 16);
    const downloadAgents = makeAgents(config.maxSockets ?? 16);
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        destroyAgents(apiAgents);
        destroyAgents(downloadAgents);
      }),
    );

    const count = (operation: Operation) => {
      counts[operation] = (counts[operation] ?? 0) + 1;
    };

    /** One HTTP exchange, the whole answer read as text within timeoutMs (`lastCheck`: see LastCheck). */
    const exchange = <G = never>(
      operation: Exclude<Operation, "download">,
      method: "GET" | "POST",
      path: string,
      body?: unknown,
      lastCheck?: LastCheck<G>,
    ) =>
      Effect.async<
        { httpStatus: number; retryAfter: string | null; headerRequestId: string | null; body: string },
        TransportError | RequestTimeout | G
      >((resume) => {
        count(operation);
        // Element ids above 2^53 travel as bigint and are written as exact JSON integers.
        const bodyText = body === undefined ? undefined : stringifyExact(body);
        let current: ClientRequest | undefined;
        let ended = false;
        const end = (effect: Effect.Effect<{ httpStatus: number; retryAfter: string | null; headerRequestId: string | null; body: string }, TransportError | RequestTimeout | G>) => {
          if (ended) return;
          ended = true;
          clearTimeout(timer);
          resume(effect);
        };
        const timer = setTimeout(() => {
          end(Effect.fail(new RequestTimeout({ operation, afterMs: timeoutMs, phase: "sent" })));
          current?.destroy();
        }, timeoutMs);
        // The last check's verdict when it withheld a send (nothing of it was written).
        let withheld: G | undefined;
        const check = lastCheck && ((): boolean => (withheld = lastCheck()) === undefined);
        const failed = (error: unknown) => {
          if (error instanceof RequestWithheld && withheld !== undefined) {
            counts[operation] = (counts[operation] ?? 1) - 1; // counted as sent, and never was
            return end(Effect.fail(withheld));
          }
          const code = errorCode(error);
          end(
            Effect.fail(
              new TransportError({
                operation,
                // A refused redirect answered a request that was sent: a create's outcome is unknown.
                phase: !(error instanceof RedirectRefused) && code !== undefined && connectCodes.has(code) ? "connect" : "sent",
                reason: scrub(error instanceof RedirectRefused ? error.message : errorText(error)),
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
              agents: apiAgents,
              headers: {
                // The key leaves its Redacted wrapper only here, at the moment of sending.
                Authorization: `Bearer ${Redacted.value(config.apiKey)}`,
                "Content-Type": "application/json",
                Accept: "application/json",
                "User-Agent": userAgent,
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
                if (next.origin !== base.origin) {
                  return failed(
                    new RedirectRefused(
                      `the service answered HTTP ${status} redirecting to another origin (${urlForMessage(next.href)}); ` +
                        `the API key is sent only to ${base.origin}, so the redirect was not followed`,
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
          send(new URL(`${baseText}${path}`), method, 0);
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

    /** One call: exchange, then the envelope and schema decide. */
    const call = <G = never>(operation: Exclude<Operation, "download">, method: "GET" | "POST", path: string, body?: unknown, lastCheck?: LastCheck<G>) =>
      exchange(operation, method, path, body, lastCheck).pipe(
        Effect.flatMap((answer) => Either.match(interpretAnswer(operation, answer, schemas, scrub, Date.now()), {
          onLeft: (error) => Effect.fail(naming(error, method, path)),
          onRight: (data) => Effect.succeed(data),
        })),
      );

    /** Idempotent calls get the configured retry schedule, if any. */
    const idempotent = <A>(effect: Effect.Effect<A, ApiError>): Effect.Effect<A, ApiError> =>
      config.retry === undefined ? effect : withRetry(effect, config.retry);

    const createVideo = <G = never>(req: VideoCreateRequest, lastCheck?: LastCheck<G>, model?: string) =>
      call("createVideo", "POST", paths.videoCreate(model ?? videoModel), req, lastCheck) as Effect.Effect<VideoCreated, ApiError | G>;

    const createImage = <G = never>(req: ImageCreateRequest, lastCheck?: LastCheck<G>) =>
      Effect.map(call("createImage", "POST", paths.imageCreate, req, lastCheck), (data) => fillImageCreated(data as ImageCreated));

    /** One query call, each task checked on its own (interpretTaskAnswer). */
    const callTasks = (operation: "queryVideos" | "cursorVideos" | "getImage" | "listImages", method: "GET" | "POST", path: string, body?: unknown) =>
      exchange(operation, method, path, body).pipe(
        Effect.flatMap((answer) =>
          Either.match(interpretTaskAnswer(operation, answer, schemas, scrub, Date.now()), {
            onLeft: (error) => Effect.fail(naming(error, method, path)),
            onRight: (data) => Effect.succeed({ ...data, httpStatus: answer.httpStatus }),
          }),
        ),
      );

    /**
     * The strict (whole-answer) reading the first callers rely on: any anomaly fails the
     * answer as a DecodeError (retried like any unreadable answer).
     */
    const strict = <T extends TaskAnswer & { httpStatus: number }>(checked: T): Effect.Effect<T, ApiError> =>
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

    const queryBatch = (param: "task_ids" | "external_task_ids", ids: readonly string[], strictly: boolean) =>
      idempotent(
        Effect.map(
          Effect.flatMap(callTasks("queryVideos", "GET", `${paths.tasks}?${param}=${ids.map(encodeURIComponent).join(",")}`), (c) =>
            strictly ? strict(c) : Effect.succeed(c),
          ),
          (c): CheckedTasks<VideoTask> => ({ tasks: (c.tasks as VideoTask[]).map(fillVideoTask), anomalies: c.anomalies }),
        ),
      );

    const merge = <T>(parts: readonly CheckedTasks<T>[]): CheckedTasks<T> => ({
      tasks: parts.flatMap((p) => p.tasks),
      anomalies: parts.flatMap((p) => p.anomalies),
    });

    // The live service takes at most 20 ids per GET /tasks (the default batch). A batch
    // answered 1201 (a deployment with a smaller limit) is split in halves; if the halves
    // pass, later calls use the smaller size.
    // Some deployments answer 1203 for a batch holding an unknown id instead of leaving
    // it out: the batch is then split until the unknown ids are isolated (not visible).
    let batchLimit = batchSize;

    const queryIds = (param: "task_ids" | "external_task_ids", ids: readonly string[], strictly: boolean): Effect.Effect<CheckedTasks<VideoTask>, ApiError> =>
      queryBatch(param, ids, strictly).pipe(
        Effect.catchIf(
          (error) => error._tag === "ServiceError" && (error.code === 1201 || error.code === 1203) && ids.length > 1,
          (error) => {
            const half = Math.ceil(ids.length / 2);
            // A limit learnt meanwhile (by an earlier half) applies to the later halves at once.
            const queryPart = (part: readonly string[]) =>
              Effect.suspend(() =>
                part.length > batchLimit
                  ? Effect.map(Effect.forEach(chunk(part, batchLimit), (p) => queryIds(param, p, strictly)), merge)
                  : queryIds(param, part, strictly),
              );
            return Effect.map(Effect.forEach(chunk(ids, half), queryPart), (parts) => {
              // Halves that worked after a 1201 mean the batch was too large for the service.
              if (error._tag === "ServiceError" && error.code === 1201) batchLimit = Math.min(batchLimit, half);
              return merge(parts);
            });
          },
        ),
        Effect.catchIf(
          (error) => error._tag === "ServiceError" && error.code === 1203 && ids.length === 1,
          () => Effect.succeed<CheckedTasks<VideoTask>>({ tasks: [], anomalies: [] }),
        ),
      );

    const queryVideosWith = (q: VideoQuery, strictly: boolean) =>
      Effect.suspend(() => {
        // The two id kinds must not share a call; each list is split into batches.
        const batches = [
          ...chunk([...new Set(q.taskIds ?? [])], batchLimit).map((ids) => ["task_ids", ids] as const),
          ...chunk([...new Set(q.externalTaskIds ?? [])], batchLimit).map((ids) => ["external_task_ids", ids] as const),
        ];
        return Effect.map(Effect.forEach(batches, ([param, ids]) => queryIds(param, ids, strictly), { concurrency: queryConcurrency }), merge);
      });

    const queryVideos = (q: VideoQuery) => Effect.map(queryVideosWith(q, true), (c) => c.tasks);
    const queryVideosChecked = (q: VideoQuery) => queryVideosWith(q, false);

    const cursorVideosWith = (req: CursorQueryRequest, strictly: boolean) => {
      // The service takes the time bounds as strings of Unix milliseconds.
      const body: CursorQueryRequest = {
        ...req,
        ...(req.start_time !== undefined ? { start_time: String(req.start_time) } : {}),
        ...(req.end_time !== undefined ? { end_time: String(req.end_time) } : {}),
      };
      return idempotent(
        Effect.map(
          Effect.flatMap(callTasks("cursorVideos", "POST", paths.tasks, body), (c) => (strictly ? strict(c) : Effect.succeed(c))),
          (c) => {
            const page = (c.page ?? {}) as Partial<CursorPage>;
            const result = (c.tasks as VideoTask[]).map(fillVideoTask);
            return {
              ...page,
              result,
              has_more: page.has_more === true,
              count: page.count ?? result.length,
              next_cursor: page.next_cursor ?? "",
              anomalies: c.anomalies,
            };
          },
        ),
      );
    };

    const cursorVideos = (req: CursorQueryRequest): Effect.Effect<CursorPage, ApiError> =>
      Effect.map(cursorVideosWith(req, true), ({ anomalies: _anomalies, ...page }) => page);
    const cursorVideosChecked = (req: CursorQueryRequest) => cursorVideosWith(req, false);

    const getImageChecked = (idOrExternalId: string) =>
      idempotent(
        Effect.map(
          callTasks("getImage", "GET", paths.imageTask(idOrExternalId)),
          (c): CheckedTasks<ImageTask> => ({ tasks: (c.tasks as ImageTask[]).map(fillImageTask), anomalies: c.anomalies }),
        ),
      );

    const listImagesChecked = (p: { readonly pageNum: number; readonly pageSize: number }) =>
      idempotent(
        Effect.map(
          callTasks("listImages", "GET", `${paths.imageList}?pageNum=${p.pageNum}&pageSize=${p.pageSize}`),
          (c): CheckedTasks<ImageTask> => ({ tasks: (c.tasks as ImageTask[]).map(fillImageTask), anomalies: c.anomalies }),
        ),
      );

    const getImage = (idOrExternalId: string) =>
      idempotent(Effect.map(call("getImage", "GET", paths.imageTask(idOrExternalId)), (data) => fillImageTask(data as ImageTask)));

    const listImages = (p: { readonly pageNum: number; readonly pageSize: number }) =>
      idempotent(
        Effect.map(
          call("listImages", "GET", `${paths.imageList}?pageNum=${p.pageNum}&pageSize=${p.pageSize}`),
          (data) => (data as ImageTask[]).map(fillImageTask),
        ),
      );

    // Whether B2 accepts an external_task_id is uncertain (service-behaviour.md); once it
    // has missed a task that B3 then found, it is not asked again.
    let directLookupWorks: boolean | undefined;

    /** B2 with an external id: the task if B2 answers one carrying that id, else undefined. */
    const tryDirect = (externalId: string) =>
      getImage(externalId).pipe(
        Effect.map((task) => (task.task_info.external_task_id === externalId ? task : undefined)),
        Effect.catchIf(
          (error) => classify(error) === "task-rejected",
          () => Effect.succeed(undefined),
        ),
      );

    const findImagesByExternalIds = (externalIds: readonly string[], opts: FindImageOptions = {}) =>
      Effect.gen(function* () {
        const wanted = new Set(externalIds);
        const found = new Map<string, ImageTask>();
        if (wanted.size === 0) return found;
        if (directLookupWorks !== false && wanted.size <= directLookupLimit) {
          for (const id of wanted) {
            const task = yield* tryDirect(id);
            if (task !== undefined) found.set(id, task);
          }
          if (found.size > 0) directLookupWorks = true;
          if (found.size === wanted.size) return found;
        }
        const missedDirectly = directLookupWorks !== false && wanted.size <= directLookupLimit;
        const pageSize = Math.min(500, Math.max(1, opts.pageSize ?? 100));
        const maxPages = Math.min(1000, Math.max(1, opts.maxPages ?? 50));
        for (let pageNum = 1; pageNum <= maxPages; pageNum++) {
          const checked = yield* listImagesChecked({ pageNum, pageSize });
          // An unreadable task that may be one we look for must not read as "not found"
          // (that would send its create again): the lookup fails instead. Others are skipped.
          const doubtful = checked.anomalies.filter((a) => a.externalId === undefined || wanted.has(a.externalId));
          if (doubtful.length > 0) {
            return yield* Effect.fail(
              new DecodeError({ operation: "listImages", httpStatus: 200, requestId: doubtful[0]!.requestId, problems: doubtful.map((d) => d.problems).join("; ") }),
            );
          }
          const page = checked.tasks;
          for (const task of page) {
            const id = task.task_info.external_task_id;
            if (id !== undefined && wanted.has(id) && !found.has(id)) {
              found.set(id, task);
              if (missedDirectly && directLookupWorks === undefined) directLookupWorks = false;
            }
          }
          if (found.size === wanted.size || page.length + checked.anomalies.length < pageSize) break;
          if (opts.createdAfterMs !== undefined && page.every((task) => task.created_at < opts.createdAfterMs!)) break;
        }
        return found;
      });

    const findImageByExternalId = (externalId: string, opts?: FindImageOptions) =>
      Effect.map(findImagesByExternalIds([externalId], opts), (found) => found.get(externalId));

    // Result links lead only to public addresses, or to addresses of a class the service's
    // own is on (the emulator on loopback): checked at connect time (AddressClass.ts).
    let serviceClasses: Promise<ReadonlySet<AddressClass>> | undefined;
    const linkGuard = Effect.promise(() => (serviceClasses ??= hostAddressClasses(base.hostname))).pipe(
      Effect.map((classes) => (address: string) => resultAddressRefusal(address, classes)),
    );

    const downloadOnce = (url: string, refuseAddress: (address: string) => string | undefined) =>
      Effect.async<DownloadResponse, ApiError>((resume) => {
        let target: URL;
        try {
          target = new URL(url);
        } catch {
          resume(Effect.fail(new TransportError({ operation: "download", phase: "connect", reason: "malformed URL" })));
          return;
        }
        if (target.protocol !== "http:" && target.protocol !== "https:") {
          resume(
            Effect.fail(
              new ServiceError({
                operation: "download",
                code: undefined,
                httpStatus: 400,
                message: scrub(`refusing to fetch a result link that is not http(s) (${target.protocol.slice(0, 20)})`),
                requestId: "",
              }),
            ),
          );
          return;
        }
        count("download");
        const started = Date.now();
        const headersWithinMs = Math.min(timeoutMs, downloadTimeoutMs);
        let current: ClientRequest | undefined;
        let ended = false;
        const end = (effect: Effect.Effect<DownloadResponse, ApiError>) => {
          if (ended) return;
          ended = true;
          clearTimeout(timer);
          resume(effect);
        };
        const timer = setTimeout(() => {
          end(Effect.fail(new RequestTimeout({ operation: "download", afterMs: headersWithinMs, phase: "sent" })));
          current?.destroy();
        }, headersWithinMs);
        const failed = (error: unknown) => {
          const code = errorCode(error);
          end(
            Effect.fail(
              new TransportError({
                operation: "download",
                phase: error instanceof AddressRefused || (!(error instanceof RedirectRefused) && code !== undefined && connectCodes.has(code)) ? "connect" : "sent",
                reason: scrub(`${error instanceof RedirectRefused ? error.message : errorText(error)} (${urlForMessage(url)})`),
              }),
            ),
          );
        };
        // Result links are signed: a download never carries the key, wherever it points.
        const headers = { "User-Agent": userAgent };
        const get = (href: URL, hops: number) => {
          current = sendRequest(
            href,
            { method: "GET", headers, agents: downloadAgents, refuseAddress },
            (response) => {
              if (ended) {
                response.destroy();
                return;
              }
              const status = response.statusCode ?? 0;
              const next = redirectOf(response, href, hops);
              if (next !== undefined) {
                if (next instanceof RedirectRefused) return failed(next);
                if (next.protocol !== "http:" && next.protocol !== "https:") {
                  return failed(new RedirectRefused(`HTTP ${status} redirecting to a link that is not http(s) (${next.protocol.slice(0, 20)}): not followed`));
                }
                try {
                  return get(next, hops + 1);
                } catch (error) {
                  return failed(error);
                }
              }
              if (status < 200 || status >= 300) {
                // The error page is read (within the header limit) for an envelope's code.
                readBody(response, maxErrorPageBytes, (_error, bytes) => {
                  let text = "";
                  try {
                    text = decodeText(bytes, response.headers, maxErrorPageBytes);
                  } catch {
                    // an unreadable error page: the status alone says what happened
                  }
                  end(Effect.fail(downloadFailure(url, status, headerValue(response.headers, "retry-after"), text)));
                });
                return;
              }
              // Nothing asked for a compressed body: bytes sent compressed are not the result
              // (stored as they came, they would pass a size check against their own length).
              const encoding = headerValue(response.headers, "content-encoding")?.trim().toLowerCase();
              if (encoding !== undefined && encoding !== "" && encoding !== "identity") {
                response.destroy();
                return failed(new Error(`the result came with Content-Encoding "${encoding.slice(0, 40)}", which nothing asked for: not stored`));
              }
              // The body may take longer than an API answer: a separate, longer limit, on
              // the stream the caller reads (it errors when the limit passes).
              clearTimeout(timer);
              const bodyTimer = setTimeout(
                () => response.destroy(new Error(`the download took longer than ${downloadTimeoutMs} ms (${urlForMessage(url)})`)),
                Math.max(0, downloadTimeoutMs - (Date.now() - started)),
              );
              bodyTimer.unref();
              response.once("close", () => clearTimeout(bodyTimer));
              const lengthHeader = response.headers["content-length"];
              const length = Number(lengthHeader);
              end(
                Effect.succeed({
                  status,
                  headers: flatHeaders(response.headers),
                  body: response,
                  ...(lengthHeader !== undefined && Number.isFinite(length) ? { contentLength: length } : {}),
                }),
              );
            },
            failed,
          );
        };
        try {
          get(target, 0);
        } catch (error) {
          failed(error);
          current?.destroy();
        }
        return Effect.sync(() => {
          ended = true;
          clearTimeout(timer);
          current?.destroy();
        });
      });

    /** A non-2xx download answer: the envelope's code if the body has one, else only the status. */
    const downloadFailure = (url: string, httpStatus: number, retryAfter: string | null, text: string): ServiceError => {
      const answer = interpretAnswer("getImage", { httpStatus, retryAfter, body: text }, schemas, scrub, Date.now());
      const fromEnvelope = Either.isLeft(answer) && answer.left._tag === "ServiceError" ? answer.left : undefined;
      const retryAfterMs = fromEnvelope?.retryAfterMs;
      return new ServiceError({
        operation: "download",
        code: fromEnvelope?.code,
        httpStatus,
        message:
          fromEnvelope?.code !== undefined
            ? `${fromEnvelope.message} (HTTP ${httpStatus} for ${urlForMessage(url)})`
            : `HTTP ${httpStatus} for ${urlForMessage(url)}`,
        requestId: fromEnvelope?.requestId ?? "",
        ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
      });
    };

    const download = (url: string) => Effect.flatMap(linkGuard, (refuse) => idempotent(downloadOnce(url, refuse)));

    const stats = Effect.sync((): ClientStats => ({ requests: { ...counts } }));

    return OmniClient.of({
      createVideo,
      createImage,
      queryVideos,
      cursorVideos,
      getImage,
      listImages,
      findImageByExternalId,
      findImagesByExternalIds,
      download,
      queryVideosChecked,
      cursorVideosChecked,
      getImageChecked,
      listImagesChecked,
      stats,
    });
  });

/** Ids the live service takes in one `GET /tasks` (task_ids and external_task_ids in total). */
export const QUERY_BATCH_MAX = 20;

/** The real service's global host: the default address (docs/real-service.md). */
export const DEFAULT_BASE_URL = "https://api-singapore.klingai.com";
/** The real service's host for mainland China; task ids of one host are invisible from the other. */
export const BEIJING_BASE_URL = "https://api-beijing.klingai.com";

/**
 * The service's name from --service (`flag`), else OMNIBATCH_SERVICE, else `kling`;
 * an error message when the name cannot be one (it becomes part of paths and model names).
 */
export const serviceNameFrom = (env: Readonly<Record<string, string | undefined>>, flag?: string): Either.Either<string, ClientConfigInvalid> => {
  const resolved = resolveServiceName(env, flag);
  return "name" in resolved ? Either.right(resolved.name) : Either.left(new ClientConfigInvalid({ message: resolved.problem }));
};

/** The configuration from the environment (OMNIBATCH_API_KEY, OMNIBATCH_BASE_URL, OMNIBATCH_SERVICE), overrides first. */
const configFromEnv = (
  env: Readonly<Record<string, string | undefined>>,
  overrides: Partial<OmniClientConfig> = {},
): Either.Either<OmniClientConfig, MissingApiKey | ClientConfigInvalid> => {
  const key = env["OMNIBATCH_API_KEY"]?.trim();
  const apiKey = overrides.apiKey ?? (key ? Redacted.make(key) : undefined);
  if (apiKey === undefined || Redacted.value(apiKey) === "") return Either.left(new MissingApiKey());
  // A key no header can carry (a control character from a bad export, a pasted space) would
  // fail every request locally, looking like a network fault: say so before anything is sent.
  // The message never quotes the key.
  if (!/^[\x21-\x7e]+$/.test(Redacted.value(apiKey))) {
    return Either.left(
      new ClientConfigInvalid({
        message:
          "OMNIBATCH_API_KEY holds characters an API key cannot have (spaces, control or non-ASCII characters): check how it was exported",
      }),
    );
  }
  // No address given: the real service's global host (Beijing, a gateway: OMNIBATCH_BASE_URL or --base-url).
  const fromEnv = env["OMNIBATCH_BASE_URL"]?.trim();
  const baseUrl = overrides.baseUrl ?? (fromEnv ? fromEnv : DEFAULT_BASE_URL);
  const service = serviceNameFrom(env, overrides.service);
  if (Either.isLeft(service)) return Either.left(service.left);
  let parsed: URL;
  try {
    parsed = new URL(baseUrl);
  } catch {
    return Either.left(new ClientConfigInvalid({ message: `the service address '${baseUrl}' is not a URL (expected e.g. https://api.example.com)` }));
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    return Either.left(new ClientConfigInvalid({ message: `the service address '${baseUrl}' must start with http:// or https://` }));
  }
  return Either.right({ ...overrides, baseUrl, apiKey, service: service.right });
};

export class OmniClient extends Context.Tag("omnibatch/OmniClient")<OmniClient, OmniClientService>() {
  /** The live client; its HTTP agents are closed when the layer is released. */
  static layer = (config: OmniClientConfig): Layer.Layer<OmniClient> => Layer.scoped(OmniClient, make(config));

  /** The client as a scoped value, for code that does not use layers. */
  static make = make;

  static configFromEnv = configFromEnv;

  /** The live client configured from the environment; MissingApiKey / ClientConfigInvalid (exit 2) when it cannot be. */
  static fromEnv = (
    env: Readonly<Record<string, string | undefined>>,
    overrides: Partial<OmniClientConfig> = {},
  ): Layer.Layer<OmniClient, MissingApiKey | ClientConfigInvalid> =>
    Either.match(configFromEnv(env, overrides), {
      onLeft: (error) => Layer.fail(error),
      onRight: (config) => OmniClient.layer(config),
    });
}
