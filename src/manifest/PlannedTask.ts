// What manifest expansion hands to the engine and to plan: one fully resolved task,
// ready to send. Pure data; the engine never reaches back into the manifest.

import type { ImageCreateRequest, VideoCreateRequest } from "../protocol/wire.js";

export interface SourcePos {
  /** Manifest (or data file) path as given by the user. */
  readonly file: string;
  /** 1-based. */
  readonly line: number;
  /** 1-based. */
  readonly col: number;
}

export type PlannedTask = PlannedVideoTask | PlannedImageTask;

interface PlannedTaskBase {
  /** external_task_id: `<name>-<job>-<hash>`; same intent, same id, on any machine. */
  readonly id: string;
  readonly job: string;
  /** Matrix values (and, downstream, `item`), for output names and reports. */
  readonly vars: Record<string, unknown>;
  /** Results folder relative to the outputs folder, sanitised, unique per task. */
  readonly dir: string;
  /**
   * The job's file-name template (`name`) for this task, sanitised to one path segment;
   * absent: default names (`video-1.mp4`). Not part of identity, like `dir`.
   */
  readonly name?: string;
  /** Hash of the exact request (inputs by content), take and attempt. */
  readonly requestHash: string;
  readonly take: number;
  readonly attempt: number;
  /** Extra attempts allowed after a failure (`retry_failed`). */
  readonly retryFailed: number;
  /** Whether content-risk failures are retried too. */
  readonly retryContentRisk: boolean;
  /** Concurrency slots the task holds at the service: 1 per video, n per image task. */
  readonly slots: number;
  /** Estimated cost from `prices`, when the manifest has them. Decimal string. */
  readonly estimate?: { readonly currency: string; readonly amount: string };
  /** Where in the manifest this task comes from. */
  readonly source: SourcePos;
  /** For downstream tasks: the upstream task and output they were made from. */
  readonly upstream?: { readonly job: string; readonly task: string; readonly output: number };
  /**
   * The request's inputs as the manifest named them (path or URL, content hash), for
   * provenance: the request itself carries local files as base64, which reports never show.
   */
  readonly inputs?: readonly PlannedInput[];
}

/** One input of a task's request, as the manifest named it. */
export interface PlannedInput {
  /** The request field it fills: `contents[1].url`, `image_list[0].image`, `element_list[0].element_id`. */
  readonly field: string;
  /** first_frame, last_frame, refer_image, feature_video, base_video, element, image. */
  readonly role: string;
  /** Its name in the manifest (`@name`, `<<<name>>>`), when it has one. */
  readonly name?: string;
  /** After templates: a path relative to the manifest, or a URL. */
  readonly src?: string;
  /** Content hash (hex) of a local file, or of the upstream result a URL names. */
  readonly sha256?: string;
  readonly element_id?: string;
  /** Where the input is declared in the manifest. */
  readonly source: SourcePos;
}

export interface PlannedVideoTask extends PlannedTaskBase {
  readonly kind: "video";
  /** The exact body to send, `options.external_task_id` included; no callback_url. */
  readonly request: VideoCreateRequest;
  /** The video model the job names (`/omni-video/{model}`); absent: the service's default (`kling-o1`). */
  readonly model?: string;
}

export interface PlannedImageTask extends PlannedTaskBase {
  readonly kind: "image";
  readonly request: ImageCreateRequest;
}

/** One output of an upstream task, as a downstream (`for_each`) job sees it. */
export interface UpstreamItem {
  readonly job: string;
  /** external_task_id of the upstream task. */
  readonly task: string;
  readonly index: number;
  readonly type: "image" | "video";
  /** A current (fresh) result URL at the service. */
  readonly url: string;
  /** The downloaded file, absolute path. */
  readonly file: string;
  /** Content hash of the file: identity of the downstream task uses this, never the URL. */
  readonly sha256: string;
  /** The upstream task's vars. */
  readonly vars: Record<string, unknown>;
}
