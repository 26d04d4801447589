// The service's wire format (spec/omni-api.md), as TypeScript types. One source for the
// client, the emulator and the schemas in schemas/api/. Field names and types are the
// service's exactly: timestamps are Unix milliseconds, money is a decimal string, and
// the image status is spelled `succeed`.

/** Every answer of every operation. `data` may be absent on errors. */
export interface Envelope<D> {
  code: number;
  message: string;
  request_id: string;
  data?: D;
}

// ---------------------------------------------------------------- billing

export interface BillingEntry {
  charge_type: "cash" | "unit";
  /** Only when charge_type = cash. */
  cash_type?: "balance" | "test_balance";
  /** Decimal string: money with cash, units with unit. */
  amount: string;
  /** Only when charge_type = cash. */
  currency?: "CNY" | "USD";
  /** Only when charge_type = unit. */
  package_type?: "video" | "image" | "audio";
  /** Only when charge_type = cash. */
  list_price?: string;
}

// ---------------------------------------------------------------- video (A1-A3)

export type VideoContentType =
  | "prompt"
  | "first_frame"
  | "last_frame"
  | "refer_image"
  | "feature_video"
  | "base_video"
  | "element";

export type VideoContent =
  | { type: "prompt"; text: string }
  | { type: "first_frame" | "last_frame" | "refer_image"; url: string; id?: string }
  | { type: "feature_video" | "base_video"; url: string; id?: string }
  | { type: "element"; element_id: string; id: string };

export interface VideoSettings {
  audio?: "original" | "off";
  resolution?: "720p" | "1080p";
  aspect_ratio?: "16:9" | "9:16" | "1:1";
  duration?: number;
}

export interface VideoOptions {
  callback_url?: string;
  external_task_id?: string;
  watermark_info?: { enabled: boolean };
}

/** A1 body: POST /omni-video/{model} (`kling-o1`; the spec writes svc-o1) */
export interface VideoCreateRequest {
  contents: VideoContent[];
  settings?: VideoSettings;
  options?: VideoOptions;
}

export type VideoStatus = "submitted" | "processing" | "succeeded" | "failed";

/** A1 answer data. */
export interface VideoCreated {
  id: string;
  status: VideoStatus;
  create_time: number;
  update_time: number;
  external_id?: string;
}

export interface ElementReference {
  type: "image" | "video" | "voice";
  role: string;
  url: string;
  id?: string;
  name?: string;
  owned_by?: string;
}

export type OutputItem =
  | { type: "video"; id: string; url: string; watermark_url?: string; duration: string }
  | { type: "image"; url: string; watermark_url?: string; group_id?: string }
  | {
      type: "audio";
      id: string;
      mp3_url: string;
      wav_url: string;
      mp3_duration: string;
      wav_duration: string;
    }
  | {
      type: "voice";
      id: string;
      name: string;
      url: string;
      owned_by: string;
      status: "succeeded" | "deleted";
    }
  | {
      type: "element";
      id: string;
      name: string;
      description: string;
      element_type: "video_character_elements" | "multi_image_elements";
      references: ElementReference[];
      owned_by: string;
      status: "succeeded" | "deleted";
      tags: Array<{ id: number; name: string; description: string }>;
    };

/** A2 item, A3 result item, and the body of a video callback. */
export interface VideoTask {
  id: string;
  status: VideoStatus;
  message: string;
  create_time: number;
  update_time: number;
  external_id?: string;
  outputs?: OutputItem[];
  billing?: BillingEntry[];
}

/** A2: GET /tasks?task_ids=a,b or ?external_task_ids=a,b -> VideoTask[] */
export interface VideoQueryParams {
  task_ids?: string;
  external_task_ids?: string;
}

export interface CursorFilter {
  key: "status" | "product_type";
  values: string[];
}

/** A3 body: POST /tasks */
export interface CursorQueryRequest {
  start_time?: string | number;
  end_time?: string | number;
  cursor?: string;
  limit?: number;
  filters?: CursorFilter[];
}

/** A3 answer data. */
export interface CursorPage {
  result: VideoTask[];
  count: number;
  next_cursor: string;
  has_more: boolean;
}

// ---------------------------------------------------------------- image (B1-B3)

export type ImageStatus = "submitted" | "processing" | "succeed" | "failed";

/** B1 body: POST /v1/images/omni-image */
export interface ImageCreateRequest {
  model_name?: string;
  prompt: string;
  image_list?: Array<{ image: string }>;
  /** element_id is a 64-bit integer: a bigint when above 2^53 (written exactly, see exactJson.ts). */
  element_list?: Array<{ element_id: number | bigint }>;
  resolution?: "1k" | "2k" | "4k";
  result_type?: "single" | "series";
  n?: number;
  series_amount?: number | "auto";
  aspect_ratio?: string;
  watermark_info?: { enabled: boolean };
  callback_url?: string;
  external_task_id?: string;
}

/** B1 answer data. */
export interface ImageCreated {
  task_id: string;
  task_info: { external_task_id?: string };
  task_status: ImageStatus;
  created_at: number;
  updated_at: number;
}

export interface ImageResultItem {
  index: number;
  url: string;
  watermark_url?: string;
}

/** B2 answer data, a B3 item, and the body of an image callback. */
export interface ImageTask {
  task_id: string;
  task_status: ImageStatus;
  task_status_msg: string;
  task_info: { external_task_id?: string };
  task_result?: {
    result_type: "single" | "series";
    images?: ImageResultItem[];
    series_images?: ImageResultItem[];
  };
  watermark_info: { enabled: boolean };
  final_unit_deduction?: string;
  final_balance_deduction?: { quota: string; list_price: string };
  created_at: number;
  updated_at: number;
}

/** B3: GET /v1/images/omni-image?pageNum=&pageSize= -> ImageTask[] (newest first) */
export interface ImageListParams {
  pageNum?: number;
  pageSize?: number;
}

// ---------------------------------------------------------------- paths

export const paths = {
  /** A1: the last segment is the video model, `<service>-o1` by default (`kling-o1`). */
  videoCreate: (model: string) => `/omni-video/${encodeURIComponent(model)}`,
  tasks: "/tasks",
  imageCreate: "/v1/images/omni-image",
  imageTask: (id: string) => `/v1/images/omni-image/${encodeURIComponent(id)}`,
  imageList: "/v1/images/omni-image",
} as const;

/** Service error codes (spec/service-behaviour.md). */
export const ErrorCode = {
  Ok: 0,
  AuthFailed: 1000,
  AuthHeaderEmpty: 1001,
  AuthHeaderInvalid: 1002,
  TokenNotYetValid: 1003,
  TokenExpired: 1004,
  AccountAbnormal: 1100,
  AccountArrears: 1101,
  BalanceExhausted: 1102,
  NoAccess: 1103,
  InvalidRequest: 1200,
  InvalidParameter: 1201,
  InvalidMethod: 1202,
  ResourceNotFound: 1203,
  PlatformPolicy: 1300,
  ContentSafety: 1301,
  RateLimited: 1302,
  ConcurrencyExceeded: 1303,
  IpPolicy: 1304,
  Internal: 5000,
  Unavailable: 5001,
  Timeout: 5002,
} as const;
