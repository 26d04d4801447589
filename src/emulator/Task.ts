// One task as the emulator keeps it: what was asked, when it moves from state to state
// (fixed at create time from the seeded schedule) and how it ends. Its status at any
// moment is a pure function of the emulator clock.

import type { Thumbnail } from "./ReferenceImage.js";
import type { ImageStatus, VideoStatus } from "../protocol/wire.js";
import type { Charge } from "./Pricing.js";
import type { ProductKind } from "./SlotPool.js";

export interface VideoRequest {
  readonly resolution: "720p" | "1080p";
  readonly aspectRatio: "16:9" | "9:16" | "1:1";
  readonly durationSec: number;
  readonly audio: "original" | "off";
}

export interface ImageRequest {
  readonly modelName: string;
  readonly resolution: "1k" | "2k" | "4k";
  readonly resultType: "single" | "series";
  /** Images generated: n, series_amount, or the count drawn for `auto`. */
  readonly count: number;
  readonly autoCount: boolean;
  /** The requested ratio, "auto" resolved to a concrete one. */
  readonly aspectRatio: string;
}

export interface Task {
  /** Global creation order; also the order of (create_time, id). */
  readonly seq: number;
  readonly id: string;
  readonly kind: ProductKind;
  readonly externalId?: string;
  readonly callbackUrl?: string;
  readonly watermark: boolean;
  readonly createdAt: number;
  readonly processingAt: number;
  readonly endAt: number;
  readonly outcome: "succeeded" | "failed";
  /** The failure reason when outcome is failed. */
  readonly failMessage: string;
  readonly slots: number;
  readonly charge: Charge;
  readonly video?: VideoRequest;
  readonly image?: ImageRequest;
  /** The first words of the prompt, drawn on the task's result images. */
  readonly caption?: string;
  /** A small copy of its first reference image (ReferenceImage.ts): its result images are drawn over it. */
  readonly reference?: Thumbnail;
}

/** The id of task `seq` made in `epoch`: 7, the epoch (3 digits) and seq (12 digits). */
export const emulatorTaskId = (epoch: number, seq: number): string => `7${String(epoch % 1000).padStart(3, "0")}${String(seq).padStart(12, "0")}`;

export type Phase = "submitted" | "processing" | "succeeded" | "failed";

export const phaseAt = (t: Task, now: number): Phase =>
  now < t.processingAt ? "submitted" : now < t.endAt ? "processing" : t.outcome;

/** Time of the last transition at or before `now`. */
export const updatedAt = (t: Task, now: number): number =>
  now < t.processingAt ? t.createdAt : now < t.endAt ? t.processingAt : t.endAt;

export const videoStatus = (p: Phase): VideoStatus => p;
export const imageStatus = (p: Phase): ImageStatus => (p === "succeeded" ? "succeed" : p);

export const contentRiskMessage =
  "Task failed: the content was flagged by the platform's content-risk review (emulated). Change the prompt or inputs and create a new task.";
