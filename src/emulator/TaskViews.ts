// How a task looks on the wire at a given moment: the A1/B1 create answers, the A2 item
// (also A3 result and video callback body), and the image task (B2, B3, image
// callback body). Result links are signed afresh on every call.

import type { ImageCreated, ImageResultItem, ImageTask, OutputItem, VideoCreated, VideoTask } from "../protocol/wire.js";
import type { EmulatorConfig } from "./EmulatorConfig.js";
import { imageBilling, videoBilling } from "./Pricing.js";
import { imageStatus, phaseAt, updatedAt, videoStatus, type Task } from "./Task.js";
import type { UrlSigner } from "./UrlSigner.js";

const dayMs = 86_400_000;

export interface ViewContext {
  readonly config: EmulatorConfig;
  readonly signer: UrlSigner;
  /** e.g. http://127.0.0.1:43121 */
  readonly baseUrl: string;
}

/** True once a succeeded task's results are past retention: links answer 404 and outputs are gone. */
export const resultsDeleted = (t: Task, now: number, config: EmulatorConfig): boolean =>
  t.outcome === "succeeded" && now >= t.endAt && now >= t.endAt + config.results.retentionDays * dayMs;

/** The path of one result file of a task. */
export const filePath = (taskId: string, name: string): string => `/_files/${taskId}/${name}`;

const link = (ctx: ViewContext, t: Task, name: string, now: number): string =>
  ctx.baseUrl + ctx.signer.sign(filePath(t.id, name), now + ctx.config.results.urlTtlMs);

const imageFiles = (ctx: ViewContext, t: Task, now: number): ImageResultItem[] =>
  Array.from({ length: t.image!.count }, (_, index) => ({
    index,
    url: link(ctx, t, `image-${index}.png`, now),
    ...(t.watermark ? { watermark_url: link(ctx, t, `image-${index}.wm.png`, now) } : {}),
  }));

const outputsOf = (ctx: ViewContext, t: Task, now: number): OutputItem[] => {
  if (phaseAt(t, now) !== "succeeded" || resultsDeleted(t, now, ctx.config)) return [];
  if (t.kind === "image") {
    const series = t.image!.resultType === "series";
    return imageFiles(ctx, t, now).map((f) => ({
      type: "image" as const,
      url: f.url,
      ...(f.watermark_url ? { watermark_url: f.watermark_url } : {}),
      ...(series ? { group_id: `${t.id}9` } : {}),
    }));
  }
  const duration = String(t.video!.durationSec);
  const items: OutputItem[] = [
    {
      type: "video",
      id: `${t.id}01`,
      url: link(ctx, t, "video.mp4", now),
      ...(t.watermark ? { watermark_url: link(ctx, t, "video.wm.mp4", now) } : {}),
      duration,
    },
  ];
  if (ctx.config.results.extraOutputs) {
    items.push(
      {
        type: "audio",
        id: `${t.id}02`,
        mp3_url: link(ctx, t, "audio.mp3", now),
        wav_url: link(ctx, t, "audio.wav", now),
        mp3_duration: duration,
        wav_duration: duration,
      },
      {
        type: "voice",
        id: `${t.id}03`,
        name: "Emulated narrator voice",
        url: link(ctx, t, "voice.mp3", now),
        owned_by: ctx.config.service,
        status: "succeeded",
      },
      {
        type: "element",
        id: `${t.id}04`,
        name: "Emulated character",
        description: "An element the task produced (emulated)",
        element_type: "multi_image_elements",
        references: [
          { type: "image", role: "frontal", url: link(ctx, t, "element-frontal.png", now) },
          { type: "image", role: "reference", url: link(ctx, t, "element-reference.png", now) },
        ],
        owned_by: "10001",
        status: "succeeded",
        tags: [{ id: 1, name: "character", description: "A person or creature" }],
      },
    );
  }
  return items;
};

export const videoCreatedView = (t: Task, now: number): VideoCreated => ({
  id: t.id,
  status: videoStatus(phaseAt(t, now)),
  create_time: t.createdAt,
  update_time: updatedAt(t, now),
  ...(t.externalId !== undefined ? { external_id: t.externalId } : {}),
});

/** The A2 item shape; image tasks (A3 with product_type image) map `succeed` to `succeeded`. */
export const videoTaskView = (ctx: ViewContext, t: Task, now: number): VideoTask => {
  const phase = phaseAt(t, now);
  return {
    id: t.id,
    status: videoStatus(phase),
    message: phase === "failed" ? t.failMessage : "",
    create_time: t.createdAt,
    update_time: updatedAt(t, now),
    ...(t.externalId !== undefined ? { external_id: t.externalId } : {}),
    outputs: outputsOf(ctx, t, now),
    billing: phase === "succeeded" ? videoBilling(t.charge) : [],
  };
};

export const imageCreatedView = (t: Task, now: number): ImageCreated => ({
  task_id: t.id,
  task_info: t.externalId !== undefined ? { external_task_id: t.externalId } : {},
  task_status: imageStatus(phaseAt(t, now)),
  created_at: t.createdAt,
  updated_at: updatedAt(t, now),
});

/**
 * The result lists of an image task: a single one's images in `images`; a series one's as
 * `seriesImagesAnswer` says (EmulatorConfig.ts): in both lists with `watermark_url` on
 * every entry, as the service's example, or only in `series_images`.
 */
const imageResult = (ctx: ViewContext, resultType: "single" | "series", files: ImageResultItem[]): ImageTask["task_result"] => {
  if (resultType === "single") return { result_type: resultType, images: files, series_images: [] };
  if (ctx.config.seriesImagesAnswer === "series-images-only") return { result_type: resultType, images: [], series_images: files };
  const entries = files.map((f) => ({ index: f.index, url: f.url, watermark_url: f.watermark_url ?? "" }));
  return { result_type: resultType, images: entries, series_images: entries };
};

export const imageTaskView = (ctx: ViewContext, t: Task, now: number): ImageTask => {
  const phase = phaseAt(t, now);
  const files = phase === "succeeded" && !resultsDeleted(t, now, ctx.config) ? imageFiles(ctx, t, now) : [];
  return {
    task_id: t.id,
    task_status: imageStatus(phase),
    task_status_msg: phase === "failed" ? t.failMessage : "",
    task_info: t.externalId !== undefined ? { external_task_id: t.externalId } : {},
    task_result: imageResult(ctx, t.image!.resultType, files),
    watermark_info: { enabled: t.watermark },
    ...(phase === "succeeded" ? imageBilling(t.charge) : {}),
    created_at: t.createdAt,
    updated_at: updatedAt(t, now),
  };
};
