// The client of the service's six operations, plus result downloads, as an Effect
// service: the interface, its configuration, and the assembly of the transport
// (ApiTransport.ts: HTTP over keep-alive agents, the key, answers checked against
// schemas/api/, failures as ApiError values, retries of idempotent calls) with the
// operations over it (createOperations.ts, videoQueries.ts, imageQueries.ts,
// findImages.ts, download.ts). It never retries a create: deciding whether a create may
// be sent again is the engine's job. The key goes to the service's exact origin only:
// redirects are followed by hand, and only to that origin; downloads never carry it.
// Every string of every answer is scrubbed of the key and has its control characters
// neutralised before it leaves here.

import { Context, Effect, Either, Layer, Redacted, type Schedule } from "effect";
import { ClientConfigInvalid, MissingApiKey, type ApiError } from "./ApiError.js";
import { makeApiTransport } from "./ApiTransport.js";
import type { CheckedTasks, ClientStats, DownloadResponse, FindImageOptions, ImagePage, LastCheck, VideoQuery } from "./clientTypes.js";
import { createOperations } from "./createOperations.js";
import { downloads } from "./download.js";
import { findImages } from "./findImages.js";
import { imageQueries } from "./imageQueries.js";
import type { TaskAnomaly } from "./interpretAnswer.js";
import { videoQueries } from "./videoQueries.js";
import { DEFAULT_SERVICE, defaultVideoModel, resolveServiceName } from "../rules/serviceNames.js";
import type { CursorPage, CursorQueryRequest, ImageCreated, ImageCreateRequest, ImageTask, VideoCreated, VideoCreateRequest, VideoTask } from "../protocol/wire.js";

export type { CheckedTasks, ClientStats, DownloadResponse, FindImageOptions, LastCheck, VideoQuery } from "./clientTypes.js";

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

export interface OmniClientService {
  /** A1 to `/omni-video/{model}`; `model` absent: the service's default (`<service>-o1`). */
  readonly createVideo: <G = never>(req: VideoCreateRequest, lastCheck?: LastCheck<G>, model?: string) => Effect.Effect<VideoCreated, ApiError | G>;
  readonly createImage: <G = never>(req: ImageCreateRequest, lastCheck?: LastCheck<G>) => Effect.Effect<ImageCreated, ApiError | G>;
  /** A2 in batches of ≤ queryBatchSize ids; answers concatenated. An id missing from the answer is "not visible yet". */
  readonly queryVideos: (q: VideoQuery) => Effect.Effect<VideoTask[], ApiError>;
  readonly cursorVideos: (req: CursorQueryRequest) => Effect.Effect<CursorPage, ApiError>;
  readonly getImage: (idOrExternalId: string) => Effect.Effect<ImageTask, ApiError>;
  readonly listImages: (p: ImagePage) => Effect.Effect<ImageTask[], ApiError>;
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
  readonly listImagesChecked: (p: ImagePage) => Effect.Effect<CheckedTasks<ImageTask>, ApiError>;
  readonly stats: Effect.Effect<ClientStats>;
}

/**
 * Builds the client: the transport (ApiTransport.ts: HTTP, the key, limits, answers read,
 * retries) and the operations over it; its agents are closed when the scope ends.
 */
const make = (config: OmniClientConfig) =>
  Effect.gen(function* () {
    const transport = yield* makeApiTransport(config);
    const images = imageQueries(transport);
    return OmniClient.of({
      ...createOperations(transport, defaultVideoModel(config.service ?? DEFAULT_SERVICE)),
      ...videoQueries(transport, Math.max(1, config.queryBatchSize ?? QUERY_BATCH_MAX), Math.max(1, config.queryConcurrency ?? 2)),
      ...images,
      ...findImages(images),
      ...downloads(transport),
      stats: transport.stats,
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
