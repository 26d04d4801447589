// Every knob of the emulator, its defaults, the "realistic" timing preset, and the
// pure functions that merge a partial patch into a config and say what is wrong with
// one. No I/O here: the CLI reads files, this module only judges data.

import type { ElementDefinition } from "./ElementLibrary.js";
import { defaultElements } from "./ElementLibrary.js";
import { parseDecimal } from "./Decimal.js";

/** A [min, max] range in milliseconds (before `timing.scale`). */
export type MsRange = readonly [number, number];

export interface KindTiming {
  /** Time spent `submitted` before processing starts. */
  readonly queuedMs: MsRange;
  /** Time spent `processing` before the task ends. */
  readonly processingMs: MsRange;
}

export interface EmulatorConfig {
  /** The service's own name: `kling` as the live service (the spec writes `svc`); the video path is /omni-video/{service}-o1. */
  readonly service: string;
  /** The one bearer key accepted. */
  readonly apiKey: string;
  /** Seed of every random choice of task behaviour (durations, failures, auto counts). */
  readonly seed: number;
  /** Concurrency slots of the account per product type. */
  readonly slots: { readonly video: number; readonly image: number };
  readonly timing: {
    readonly video: KindTiming;
    readonly image: KindTiming;
    /** Multiplies every duration (0.001 turns seconds into milliseconds). */
    readonly scale: number;
  };
  readonly failure: {
    /** A prompt containing this substring ends `failed` with a content-risk message ("" disables). */
    readonly marker: string;
    /** Probability that any task ends failed with a content-risk message. */
    readonly rate: number;
    /**
     * What the marker does: the task is created and ends failed later ("fail-later"),
     * or the create is refused at once with 400 code 1301 ("reject-1301"). The real
     * service does both.
     */
    readonly markerMode: "fail-later" | "reject-1301";
    /**
     * Media that breaks the rules: refused at create with 400 code 1201 ("reject-1201"),
     * or accepted and the task ends failed with the reason ("fail-later"), as the real
     * service often does.
     */
    readonly badMedia: "reject-1201" | "fail-later";
  };
  readonly billing: {
    readonly mode: "cash" | "unit";
    readonly cash_type: "balance" | "test_balance";
    readonly currency: "USD" | "CNY";
    /** Multiplier from list price to the amount charged, e.g. 0.8. */
    readonly discount: number;
    /**
     * Account balance as a decimal string: money in cash mode, units in unit mode.
     * Absent: unlimited. When the next task's charge no longer fits: 429 code 1102.
     */
    readonly balance?: string;
    /** List prices: video per second of output by resolution, image per image by resolution. */
    readonly prices: {
      readonly video: Readonly<Record<string, string>>;
      readonly image: Readonly<Record<string, string>>;
      /** Whole-task list prices that override the per-unit ones, keyed "video/1080p/10" or "image/2k". */
      readonly overrides: Readonly<Record<string, string>>;
    };
    /** Units charged in unit mode: video per second by resolution, image per image by resolution. */
    readonly units: {
      readonly video: Readonly<Record<string, string>>;
      readonly image: Readonly<Record<string, string>>;
    };
  };
  readonly results: {
    /** How long a signed result link stays valid (emulator clock). */
    readonly urlTtlMs: number;
    /** Results older than this (counted from the task's end) are deleted: 404. */
    readonly retentionDays: number;
    /** Adds audio, voice and element output items to succeeded video tasks. */
    readonly extraOutputs: boolean;
  };
  /** The element library that element ids are checked against. */
  readonly elements: readonly ElementDefinition[];
  readonly callbacks: {
    /** `whsec_<base64>`: when set, callbacks carry Standard-Webhooks signature headers. */
    readonly secret?: string;
    /** Further attempts after a failed delivery. */
    readonly retries: number;
    /** Delay before the first retry; doubles each time. */
    readonly backoffMs: number;
    /** Per-attempt time limit. */
    readonly timeoutMs: number;
    /** Call addresses other than loopback ones (off: such callbacks are skipped and counted). */
    readonly allowNonLoopback: boolean;
    /** Probability that a callback is silently never sent (lost deliveries, seeded by `seed`). */
    readonly dropRate: number;
  };
  readonly faults: {
    /** Seed of the fault dice, separate from `seed` so faults can be replayed on their own. */
    readonly seed: number;
    /** Only these endpoint names get faults; empty = every API endpoint. */
    readonly endpoints: readonly string[];
    /** HTTP 500/502/503 (codes 5000/5000/5001), nothing processed. */
    readonly http5xxRate: number;
    /** HTTP 500 code 5000, nothing processed. */
    readonly code5000Rate: number;
    /** HTTP 503 code 5001, nothing processed. */
    readonly code5001Rate: number;
    /** HTTP 504 code 5002, nothing processed. */
    readonly code5002Rate: number;
    /** HTTP 500 code 5000 AFTER a create was carried out: the task exists. */
    readonly errorAfterCreateRate: number;
    /** After `every` API requests, the next `length` answer 429 code 1302 (every = 0: off). */
    readonly rate1302Burst: { readonly every: number; readonly length: number };
    /** Connection destroyed before the request is processed. */
    readonly resetBeforeRate: number;
    /** Connection destroyed after the request was processed (a create succeeded). */
    readonly resetAfterRate: number;
    /** Delay of a slow answer, and how often one is slow. */
    readonly slowMs: number;
    readonly slowRate: number;
    /** Downloads cut off halfway (Content-Length announces the whole file). */
    readonly truncatedDownloadRate: number;
    /**
     * A create with an external_task_id already used: 400 code 1201 ("reject-1201"), the
     * existing task ("return-existing"), or a second task with the same external id,
     * charged again ("create-second": the worst case a client must survive).
     */
    readonly duplicateExternalId: "reject-1201" | "return-existing" | "create-second";
    /**
     * A new task stays invisible to A2, A3, B2 and B3 for this long after its create
     * (emulator clock; 0: visible at once). The real service's lag is undocumented.
     */
    readonly visibilityLagMs: number;
    /**
     * One task item of a query answer (A2, A3, B2, B3) served malformed: each item with
     * probability `rate`, and always for tasks whose external id is listed. `kind` says how.
     */
    readonly malformedTask: {
      readonly rate: number;
      readonly externalIds: readonly string[];
      readonly kind: MalformedKind;
    };
    /** Probability that an A2 answer carries a task nobody asked for, and B2 answers another task. */
    readonly unrequestedTaskRate: number;
    /**
     * Probability that an API answer stalls: "never" sends nothing and holds the connection
     * open; "drip" sends the headers, then the body one byte per `dripMs` (slow loris).
     */
    readonly stall: { readonly rate: number; readonly mode: "never" | "drip"; readonly dripMs: number };
    /**
     * Result links answer 302: "" off; "self" to the same link on this emulator (one hop);
     * else a base URL (http://127.0.0.1:PORT) the path and query are appended to.
     */
    readonly resultRedirectTo: string;
    /** Error messages and failed tasks' messages echo the request's Authorization header. */
    readonly echoAuthorization: boolean;
    /**
     * Per-model capability limits (kling-image-o1: no 4k, no series; kling-v3-omni without
     * reference images: no aspect_ratio auto) refused with 1201. On by default: the real
     * outcome (refusal or silent fallback) is undocumented.
     */
    readonly modelLimits: boolean;
    /** A2 with ids that do not exist: omitted (`data: []`) or 404 code 1203. */
    readonly unknownIdsAnswer: "empty" | "error-1203";
    /** B2 also accepts an external_task_id in place of the task id. */
    readonly imageQueryByExternalId: boolean;
    /**
     * The account refuses creates with this code (HTTP 429 for 1100/1101/1304, 403 for
     * 1103); 0: the account is in good standing. Queries keep working.
     */
    readonly refuseCreates: 0 | 1100 | 1101 | 1103 | 1304;
  };
  /**
   * Where the live service answers otherwise than the emulator did before it was known
   * (spec/service-behaviour.md "Live observations"). The defaults are the live answers;
   * `specAnswers` switches every one back (docs/emulator.md).
   */
  readonly answers: {
    /** B2 for an unknown id or external id: 400 code 1201 "Task not found by id/external id: X" (live) or 404 code 1203. */
    readonly imageNotFound: "400-1201" | "404-1203";
    /** Wording of the 1201 refusal of a reused external_task_id: "External_task_id X already exists" (live) or the emulator's earlier one. */
    readonly duplicateMessage: "live" | "spec";
    /** The unified A2 and A3 (without a product_type filter) also hold image tasks, in the A2 shape (live); false: videos only. */
    readonly unifiedImages: boolean;
    /** `Retry-After` (seconds, times timing.scale) on 1302, 1303 and 5xx answers; 0: none. */
    readonly retryAfterSec: number;
    /** An `x-request-id` header on every API answer (the envelope's request_id). */
    readonly requestIdHeader: boolean;
  };
  /** Largest accepted request body; larger answers 413 code 1201. */
  readonly maxBodyBytes: number;
  /** Largest number of ids in one A2 query (task_ids and external_task_ids together): 20 at the live service. */
  readonly maxQueryIds: number;
  /** Largest media file fetched from a loopback URL, and its time limit. */
  readonly mediaFetch: { readonly maxBytes: number; readonly timeoutMs: number };
  /**
   * The `task_result` of a succeeded series image task (result_type series).
   * "vendor-example" (default), as the service's own example: the images in both `images`
   * and `series_images`, each entry with `index`, `url` and `watermark_url` (empty when
   * no watermarked copy was asked for). "series-images-only", the emulator's older shape:
   * `images` empty, the images only in `series_images`, `watermark_url` only when asked for.
   */
  readonly seriesImagesAnswer: "vendor-example" | "series-images-only";
}

/** How a malformed task item is broken (see faults.malformedTask). */
export const malformedKinds = [
  "nan-charge",
  "huge-charge",
  "negative-charge",
  "number-charge",
  "null-message",
  "bad-status",
  "missing-id",
  "extra-fields",
] as const;
export type MalformedKind = (typeof malformedKinds)[number];

/** A patch of a config: any subset; null on an optional setting removes it. */
export type DeepPartial<T> = T extends readonly unknown[]
  ? T
  : T extends object
    ? { -readonly [K in keyof T]?: undefined extends T[K] ? DeepPartial<T[K]> | null : DeepPartial<T[K]> }
    : T;

export const defaultEmulatorConfig: EmulatorConfig = {
  service: "kling",
  apiKey: "omni-dev-key",
  seed: 1,
  slots: { video: 5, image: 9 },
  timing: {
    video: { queuedMs: [200, 600], processingMs: [800, 2400] },
    image: { queuedMs: [100, 400], processingMs: [400, 1200] },
    scale: 1,
  },
  failure: { marker: "[fail]", rate: 0, markerMode: "fail-later", badMedia: "reject-1201" },
  billing: {
    mode: "cash",
    cash_type: "balance",
    currency: "USD",
    discount: 0.8,
    prices: {
      video: { "720p": "0.07", "1080p": "0.1" },
      image: { "1k": "0.03", "2k": "0.05", "4k": "0.1" },
      overrides: {},
    },
    units: {
      video: { "720p": "1", "1080p": "1.5" },
      image: { "1k": "1", "2k": "2", "4k": "4" },
    },
  },
  results: { urlTtlMs: 3_600_000, retentionDays: 30, extraOutputs: false },
  elements: defaultElements,
  callbacks: { retries: 3, backoffMs: 200, timeoutMs: 5_000, allowNonLoopback: false, dropRate: 0 },
  faults: {
    seed: 1,
    endpoints: [],
    http5xxRate: 0,
    code5000Rate: 0,
    code5001Rate: 0,
    code5002Rate: 0,
    errorAfterCreateRate: 0,
    rate1302Burst: { every: 0, length: 0 },
    resetBeforeRate: 0,
    resetAfterRate: 0,
    slowMs: 0,
    slowRate: 0,
    truncatedDownloadRate: 0,
    duplicateExternalId: "reject-1201",
    visibilityLagMs: 0,
    malformedTask: { rate: 0, externalIds: [], kind: "nan-charge" },
    unrequestedTaskRate: 0,
    stall: { rate: 0, mode: "never", dripMs: 1_000 },
    resultRedirectTo: "",
    echoAuthorization: false,
    modelLimits: true,
    unknownIdsAnswer: "empty",
    imageQueryByExternalId: true,
    refuseCreates: 0,
  },
  answers: { imageNotFound: "400-1201", duplicateMessage: "live", unifiedImages: true, retryAfterSec: 1, requestIdHeader: true },
  maxBodyBytes: 100 * 1024 * 1024,
  maxQueryIds: 20,
  mediaFetch: { maxBytes: 210 * 1024 * 1024, timeoutMs: 10_000 },
  seriesImagesAnswer: "vendor-example",
};

/**
 * The answers of the emulator before the live service's were known (the spec's reading):
 * the name `svc`, 100 ids per query, image not-found as 404/1203, its own duplicate wording,
 * unified queries of videos only, no Retry-After, no x-request-id. `--spec-answers`.
 */
export const specAnswers: DeepPartial<EmulatorConfig> = {
  service: "svc",
  maxQueryIds: 100,
  answers: { imageNotFound: "404-1203", duplicateMessage: "spec", unifiedImages: false, retryAfterSec: 0, requestIdHeader: false },
};

/** The real service's typical durations: video 1 to 8 minutes, image 10 to 60 seconds. */
export const realisticTiming: EmulatorConfig["timing"] = {
  video: { queuedMs: [10_000, 60_000], processingMs: [50_000, 420_000] },
  image: { queuedMs: [2_000, 10_000], processingMs: [8_000, 50_000] },
  scale: 1,
};

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * Merges a patch into a config: objects deeply, arrays and scalars replaced, undefined
 * ignored, null removes an optional setting (billing.balance, callbacks.secret).
 */
export const mergeConfig = <T>(base: T, patch: unknown): T => {
  if (!isPlainObject(patch) || !isPlainObject(base)) return (patch === undefined ? base : patch) as T;
  const out: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(patch)) {
    if (value === undefined) continue;
    if (value === null) {
      delete out[key];
      continue;
    }
    out[key] = isPlainObject(value) && isPlainObject(out[key]) ? mergeConfig(out[key], value) : value;
  }
  return out as T;
};

/** Keys of the patch that the config does not have (typos), as dotted paths. */
export const unknownKeys = (base: unknown, patch: unknown, prefix = ""): string[] => {
  if (!isPlainObject(patch) || !isPlainObject(base)) return [];
  const out: string[] = [];
  for (const [key, value] of Object.entries(patch)) {
    const path = prefix ? `${prefix}.${key}` : key;
    if (!(key in base)) {
      // Optional keys absent from the defaults.
      if (path === "billing.balance" || path === "callbacks.secret") continue;
      if (prefix === "billing.prices.overrides" || /^billing\.(prices|units)\.(video|image)$/.test(prefix)) continue;
      out.push(path);
      continue;
    }
    out.push(...unknownKeys(base[key], value, path));
  }
  return out;
};

/** Every problem of a config, each naming the key; empty when it is usable. */
export const configProblems = (c: EmulatorConfig): string[] => {
  const p: string[] = [];
  const rate = (path: string, v: unknown) => {
    if (typeof v !== "number" || !(v >= 0 && v <= 1)) p.push(`${path} must be a number from 0 to 1`);
  };
  const nonNeg = (path: string, v: unknown) => {
    if (typeof v !== "number" || !Number.isFinite(v) || v < 0) p.push(`${path} must be a number >= 0`);
  };
  const int = (path: string, v: unknown, min: number) => {
    if (typeof v !== "number" || !Number.isInteger(v) || v < min) p.push(`${path} must be an integer >= ${min}`);
  };
  const range = (path: string, v: unknown) => {
    if (!Array.isArray(v) || v.length !== 2 || v.some((x) => typeof x !== "number" || !Number.isFinite(x) || x < 0) || v[0] > v[1]) {
      p.push(`${path} must be [min, max] in milliseconds with 0 <= min <= max`);
    }
  };
  const oneOf = (path: string, v: unknown, allowed: readonly string[]) => {
    if (typeof v !== "string" || !allowed.includes(v)) p.push(`${path} must be one of ${allowed.join(", ")}`);
  };
  const decimal = (path: string, v: unknown) => {
    if (typeof v !== "string" || parseDecimal(v) === undefined) p.push(`${path} must be a decimal string like "0.35"`);
  };
  if (typeof c.service !== "string" || !/^[A-Za-z0-9_.-]+$/.test(c.service)) p.push("service must be a name of letters, digits, '-', '_' or '.'");
  if (typeof c.apiKey !== "string" || c.apiKey.length === 0 || /\s/.test(c.apiKey)) p.push("apiKey must be a non-empty string without spaces");
  int("seed", c.seed, 0);
  int("slots.video", c.slots?.video, 0);
  int("slots.image", c.slots?.image, 0);
  for (const kind of ["video", "image"] as const) {
    range(`timing.${kind}.queuedMs`, c.timing?.[kind]?.queuedMs);
    range(`timing.${kind}.processingMs`, c.timing?.[kind]?.processingMs);
  }
  nonNeg("timing.scale", c.timing?.scale);
  if (typeof c.failure?.marker !== "string") p.push("failure.marker must be a string");
  rate("failure.rate", c.failure?.rate);
  oneOf("failure.markerMode", c.failure?.markerMode, ["fail-later", "reject-1301"]);
  oneOf("failure.badMedia", c.failure?.badMedia, ["reject-1201", "fail-later"]);
  oneOf("billing.mode", c.billing?.mode, ["cash", "unit"]);
  oneOf("billing.cash_type", c.billing?.cash_type, ["balance", "test_balance"]);
  oneOf("billing.currency", c.billing?.currency, ["USD", "CNY"]);
  if (typeof c.billing?.discount !== "number" || !(c.billing.discount >= 0 && c.billing.discount <= 1)) p.push("billing.discount must be a number from 0 to 1");
  if (c.billing?.balance !== undefined) decimal("billing.balance", c.billing.balance);
  for (const table of ["prices", "units"] as const) {
    for (const kind of ["video", "image"] as const) {
      const t = c.billing?.[table]?.[kind];
      if (!isPlainObject(t)) p.push(`billing.${table}.${kind} must be an object of decimal strings`);
      else for (const [k, v] of Object.entries(t)) decimal(`billing.${table}.${kind}.${k}`, v);
    }
  }
  if (isPlainObject(c.billing?.prices?.overrides)) {
    for (const [k, v] of Object.entries(c.billing.prices.overrides)) decimal(`billing.prices.overrides.${k}`, v);
  }
  nonNeg("results.urlTtlMs", c.results?.urlTtlMs);
  nonNeg("results.retentionDays", c.results?.retentionDays);
  if (typeof c.results?.extraOutputs !== "boolean") p.push("results.extraOutputs must be true or false");
  if (!Array.isArray(c.elements)) p.push("elements must be an array");
  else {
    const seen = new Set<string>();
    c.elements.forEach((e, i) => {
      if (!isPlainObject(e) || typeof e.id !== "string" || !/^\d+$/.test(e.id)) p.push(`elements[${i}].id must be a string of digits`);
      else if (seen.has(e.id)) p.push(`elements[${i}].id ${e.id} is used twice`);
      else seen.add(e.id);
      if (!isPlainObject(e) || typeof e.name !== "string" || e.name.length === 0) p.push(`elements[${i}].name must be a non-empty string`);
      if (!isPlainObject(e)) return;
      oneOf(`elements[${i}].element_type`, e.element_type, ["multi_image_elements", "video_character_elements"]);
    });
  }
  if (c.callbacks?.secret !== undefined) {
    const s = c.callbacks.secret;
    if (typeof s !== "string" || !/^whsec_[A-Za-z0-9+/]+={0,2}$/.test(s)) p.push('callbacks.secret must look like "whsec_<base64>"');
  }
  int("callbacks.retries", c.callbacks?.retries, 0);
  nonNeg("callbacks.backoffMs", c.callbacks?.backoffMs);
  nonNeg("callbacks.timeoutMs", c.callbacks?.timeoutMs);
  if (typeof c.callbacks?.allowNonLoopback !== "boolean") p.push("callbacks.allowNonLoopback must be true or false");
  rate("callbacks.dropRate", c.callbacks?.dropRate);
  const f = c.faults;
  int("faults.seed", f?.seed, 0);
  if (!Array.isArray(f?.endpoints) || f.endpoints.some((e) => !endpointNames.includes(e as EndpointName))) {
    p.push(`faults.endpoints must be a list of: ${endpointNames.join(", ")}`);
  }
  for (const key of ["http5xxRate", "code5000Rate", "code5001Rate", "code5002Rate", "errorAfterCreateRate", "resetBeforeRate", "resetAfterRate", "slowRate", "truncatedDownloadRate"] as const) {
    rate(`faults.${key}`, f?.[key]);
  }
  int("faults.rate1302Burst.every", f?.rate1302Burst?.every, 0);
  int("faults.rate1302Burst.length", f?.rate1302Burst?.length, 0);
  nonNeg("faults.slowMs", f?.slowMs);
  oneOf("faults.duplicateExternalId", f?.duplicateExternalId, ["reject-1201", "return-existing", "create-second"]);
  nonNeg("faults.visibilityLagMs", f?.visibilityLagMs);
  rate("faults.malformedTask.rate", f?.malformedTask?.rate);
  if (!Array.isArray(f?.malformedTask?.externalIds) || f.malformedTask.externalIds.some((e) => typeof e !== "string")) {
    p.push("faults.malformedTask.externalIds must be a list of strings");
  }
  oneOf("faults.malformedTask.kind", f?.malformedTask?.kind, malformedKinds);
  rate("faults.unrequestedTaskRate", f?.unrequestedTaskRate);
  rate("faults.stall.rate", f?.stall?.rate);
  oneOf("faults.stall.mode", f?.stall?.mode, ["never", "drip"]);
  nonNeg("faults.stall.dripMs", f?.stall?.dripMs);
  if (typeof f?.resultRedirectTo !== "string" || (f.resultRedirectTo !== "" && f.resultRedirectTo !== "self" && !/^https?:\/\/[^/?#]+$/.test(f.resultRedirectTo))) {
    p.push('faults.resultRedirectTo must be "", "self" or a base URL like http://127.0.0.1:9000');
  }
  if (typeof f?.echoAuthorization !== "boolean") p.push("faults.echoAuthorization must be true or false");
  if (typeof f?.modelLimits !== "boolean") p.push("faults.modelLimits must be true or false");
  oneOf("faults.unknownIdsAnswer", f?.unknownIdsAnswer, ["empty", "error-1203"]);
  if (typeof f?.imageQueryByExternalId !== "boolean") p.push("faults.imageQueryByExternalId must be true or false");
  if (![0, 1100, 1101, 1103, 1304].includes(f?.refuseCreates as number)) p.push("faults.refuseCreates must be 0, 1100, 1101, 1103 or 1304");
  oneOf("answers.imageNotFound", c.answers?.imageNotFound, ["400-1201", "404-1203"]);
  oneOf("answers.duplicateMessage", c.answers?.duplicateMessage, ["live", "spec"]);
  if (typeof c.answers?.unifiedImages !== "boolean") p.push("answers.unifiedImages must be true or false");
  nonNeg("answers.retryAfterSec", c.answers?.retryAfterSec);
  if (typeof c.answers?.requestIdHeader !== "boolean") p.push("answers.requestIdHeader must be true or false");
  int("maxBodyBytes", c.maxBodyBytes, 1024);
  int("maxQueryIds", c.maxQueryIds, 1);
  oneOf("seriesImagesAnswer", c.seriesImagesAnswer, ["vendor-example", "series-images-only"]);
  int("mediaFetch.maxBytes", c.mediaFetch?.maxBytes, 1);
  nonNeg("mediaFetch.timeoutMs", c.mediaFetch?.timeoutMs);
  return p;
};

/** Names under which requests are counted in stats and which faults.endpoints selects. */
export const endpointNames = [
  "video.create",
  "video.query",
  "video.cursor",
  "image.create",
  "image.get",
  "image.list",
  "download",
] as const;
export type EndpointName = (typeof endpointNames)[number];
