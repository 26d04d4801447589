// The service's two task shapes (video A2 items, image B2/B3 items) seen the same way:
// a status in the lockfile's words, the failure reason, the outputs to fetch and the
// billing entries. Pure functions of the answer; no effects.

import type { BillingEntry, ImageTask, OutputItem, VideoTask } from "./wire.js";

export type RemoteStatus = "submitted" | "processing" | "succeeded" | "failed";

/** An output item's type as the service names it (the lockfile records it so). */
export type OutputType = "video" | "image" | "audio" | "voice" | "element";
/** Which file of an item: main result, watermarked copy, mp3, wav; voice and element items are metadata only. */
export type OutputVariant = "main" | "watermark" | "mp3" | "wav" | "meta";

/** One file (or metadata record) a finished task offers. */
export interface RemoteOutput {
  readonly type: OutputType;
  readonly index: number;
  readonly variant: OutputVariant;
  /** Where to fetch it now (expiring link); absent for metadata-only items. */
  readonly url?: string;
  readonly remote_id?: string;
  readonly group_id?: string;
  readonly meta?: Record<string, unknown>;
}

export interface TaskView {
  readonly taskId: string;
  readonly externalId: string | undefined;
  readonly status: RemoteStatus;
  readonly createdAt: number;
  readonly updatedAt: number;
  /** The service's reason when failed. */
  readonly message: string;
  readonly outputs: readonly RemoteOutput[];
  readonly billing: readonly BillingEntry[];
}

const present = (s: string | undefined): s is string => typeof s === "string" && s.length > 0;

const videoOutputs = (items: readonly OutputItem[], watermark: boolean): RemoteOutput[] =>
  items.flatMap((item, index): RemoteOutput[] => {
    switch (item.type) {
      case "video":
        return [
          { type: "video", index, variant: "main", url: item.url, remote_id: item.id },
          ...(watermark && present(item.watermark_url)
            ? [{ type: "video", index, variant: "watermark", url: item.watermark_url, remote_id: item.id } as const]
            : []),
        ];
      case "image":
        return [
          { type: "image", index, variant: "main", url: item.url, ...(item.group_id ? { group_id: item.group_id } : {}) },
          ...(watermark && present(item.watermark_url)
            ? [
                {
                  type: "image",
                  index,
                  variant: "watermark",
                  url: item.watermark_url,
                  ...(item.group_id ? { group_id: item.group_id } : {}),
                } as const,
              ]
            : []),
        ];
      case "audio":
        return [
          ...(present(item.mp3_url) ? [{ type: "audio", index, variant: "mp3", url: item.mp3_url, remote_id: item.id } as const] : []),
          ...(present(item.wav_url) ? [{ type: "audio", index, variant: "wav", url: item.wav_url, remote_id: item.id } as const] : []),
        ];
      case "voice":
      case "element": {
        // Library entries the task made: recorded, not downloaded (they live at the service).
        const { type, id, ...meta } = item;
        return [{ type, index, variant: "meta", remote_id: id, meta: meta as Record<string, unknown> }];
      }
      default:
        return [];
    }
  });

/**
 * A charge with only the fields the spec names: the service may add fields (an answer
 * with one still passes its schema), and the lockfile keeps exactly these, so a field it
 * does not know would make the lockfile unreadable on its next load.
 */
const knownCharge = (b: BillingEntry): BillingEntry => ({
  charge_type: b.charge_type,
  amount: b.amount,
  ...(b.cash_type !== undefined ? { cash_type: b.cash_type } : {}),
  ...(b.currency !== undefined ? { currency: b.currency } : {}),
  ...(b.package_type !== undefined ? { package_type: b.package_type } : {}),
  ...(b.list_price !== undefined ? { list_price: b.list_price } : {}),
});

export const fromVideo = (task: VideoTask, watermark: boolean): TaskView => ({
  taskId: task.id,
  externalId: task.external_id,
  status: task.status,
  createdAt: task.create_time,
  updatedAt: task.update_time,
  message: task.message ?? "",
  outputs: task.status === "succeeded" ? videoOutputs(task.outputs ?? [], watermark) : [],
  billing: (task.billing ?? []).map(knownCharge),
});

/** Image tasks report charges as two fields; the lockfile keeps them as billing entries. */
const imageBilling = (task: ImageTask, currency: string | undefined): BillingEntry[] => {
  const entries: BillingEntry[] = [];
  const unit = task.final_unit_deduction;
  if (present(unit) && Number(unit) !== 0) {
    entries.push({ charge_type: "unit", amount: unit, package_type: "image" });
  }
  const cash = task.final_balance_deduction;
  if (cash && present(cash.quota) && Number(cash.quota) !== 0) {
    entries.push({
      charge_type: "cash",
      amount: cash.quota,
      list_price: cash.list_price,
      ...(currency === "USD" || currency === "CNY" ? { currency } : {}),
    });
  }
  return entries;
};

export const fromImage = (task: ImageTask, watermark: boolean, currency?: string): TaskView => {
  const status: RemoteStatus = task.task_status === "succeed" ? "succeeded" : task.task_status;
  const result = task.task_result;
  const series = result?.result_type === "series";
  // The list of its result type, else the other: the service's example of a series answer
  // lists its images in both (read once), an older shape only in `series_images`, and an
  // answer may carry only `images`. An empty list counts as absent.
  const [first, other] = series ? [result?.series_images, result?.images] : [result?.images, result?.series_images];
  const items = first?.length ? first : other?.length ? other : [];
  const outputs: RemoteOutput[] =
    status !== "succeeded"
      ? []
      : items.flatMap((item, position): RemoteOutput[] => {
          // Position, not the service's `index`: file names and lockfile keys stay dense.
          const index = position;
          const group = series ? { group_id: task.task_id } : {};
          return [
            { type: "image", index, variant: "main", url: item.url, ...group },
            ...(watermark && present(item.watermark_url)
              ? [{ type: "image", index, variant: "watermark", url: item.watermark_url, ...group } as const]
              : []),
          ];
        });
  return {
    taskId: task.task_id,
    externalId: task.task_info?.external_task_id,
    status,
    createdAt: task.created_at,
    updatedAt: task.updated_at,
    message: task.task_status_msg ?? "",
    outputs,
    billing: status === "succeeded" || status === "failed" ? imageBilling(task, currency) : [],
  };
};

/** Key of one output file, stable across queries (URLs change, this does not). */
export const outputKey = (o: { type: string; index: number; variant: string }): string =>
  `${o.type}:${o.index}:${o.variant}`;

/**
 * Content-risk failures (moderation) are not retried unless the job asks: sending the
 * same content again pays again for the same refusal.
 */
export const isContentRisk = (code: number | undefined, message: string): boolean =>
  code === 1300 || code === 1301 || /risk|policy|safety|moderat|sensitive/i.test(message);
