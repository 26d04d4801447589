// The six operations of the service over the task store: request in (parsed body or
// query), Answer out. Input rules come from src/rules (the first violation is the
// answer); media inputs are probed through MediaInput. No HTTP plumbing here.

import { referenceThumbnail } from "./ReferenceImage.js";
import type { Violation } from "../rules/index.js";
import { checkCursorQuery, checkImageCreate, checkImageList, checkTaskQuery, checkVideoCreate, type RuleContext } from "../rules/index.js";
import { fail, httpStatusOf, ok, type Answer } from "./Answer.js";
import { decodeCursor, encodeCursor } from "./Cursor.js";
import type { EmulatorConfig } from "./EmulatorConfig.js";
import { checkMediaInputs, type MediaInputRef } from "./MediaInput.js";
import { phaseAt, type ImageRequest, type Task, type VideoRequest } from "./Task.js";
import { TaskStore, type NewTask } from "./TaskStore.js";
import { imageCreatedView, imageTaskView, videoCreatedView, videoTaskView, type ViewContext } from "./TaskViews.js";

const dayMs = 86_400_000;

export interface ApiDeps {
  readonly config: () => EmulatorConfig;
  readonly store: TaskStore;
  readonly now: () => number;
  readonly view: () => ViewContext;
  readonly rules: () => RuleContext;
}

type Body = Record<string, unknown>;

const isRecord = (v: unknown): v is Body => typeof v === "object" && v !== null && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === "string" && v !== "" ? v : undefined);

const violationAnswer = (v: Violation): Answer => fail(httpStatusOf(v.code), v.code, v.message);

const pick = <T extends string>(v: unknown, allowed: readonly T[], fallback: T): T =>
  typeof v === "string" && (allowed as readonly string[]).includes(v) ? (v as T) : fallback;

export class EmulatorApi {
  constructor(private readonly deps: ApiDeps) {}

  /** False while a new task is still inside the configured visibility lag. */
  private visible(t: Task, now: number): boolean {
    return now >= t.createdAt + this.deps.config().faults.visibilityLagMs;
  }

  /** The account's standing, judged before the request is read. */
  private accountRefusal(): Answer | undefined {
    const code = this.deps.config().faults.refuseCreates;
    if (code === 0) return undefined;
    const why = { 1100: "account abnormal", 1101: "account in arrears", 1103: "no access to this API or model", 1304: "IP allow-list policy" }[code];
    return fail(httpStatusOf(code), code, `${why} (emulated)`);
  }

  /** Immediate moderation, when the marker is set to refuse at create. */
  private screen(prompt: string): Answer | undefined {
    const cfg = this.deps.config();
    if (cfg.failure.markerMode === "reject-1301" && cfg.failure.marker !== "" && prompt.includes(cfg.failure.marker)) {
      return fail(400, 1301, "input rejected by the content-safety policy (emulated)");
    }
    return undefined;
  }

  private refusal(outcome: { http: number; code: number; message: string }): Answer {
    return fail(outcome.http, outcome.code, outcome.message);
  }

  /** A1: POST /omni-video/{service}-o1 */
  async createVideo(body: unknown): Promise<Answer> {
    const cfg = this.deps.config();
    const standing = this.accountRefusal();
    if (standing) return standing;
    const first = checkVideoCreate(body, this.deps.rules())[0];
    if (first) return violationAnswer(first);
    if (!isRecord(body) || !Array.isArray(body["contents"])) return fail(400, 1201, "contents: is required and must be an array");
    const contents = body["contents"] as unknown[];
    const media: MediaInputRef[] = [];
    const prompts: string[] = [];
    contents.forEach((item, i) => {
      if (!isRecord(item)) return;
      const type = item["type"];
      if (type === "prompt" && typeof item["text"] === "string") prompts.push(item["text"]);
      if ((type === "first_frame" || type === "last_frame" || type === "refer_image") && typeof item["url"] === "string") {
        media.push({ value: item["url"], expected: "image", side: "video", field: `contents[${i}].url` });
      }
      if ((type === "feature_video" || type === "base_video") && typeof item["url"] === "string") {
        media.push({ value: item["url"], expected: "video", side: "video", field: `contents[${i}].url` });
      }
    });
    const bad = await checkMediaInputs(media, cfg.mediaFetch);
    if (bad && cfg.failure.badMedia === "reject-1201") return violationAnswer(bad);
    const refused = this.screen(prompts.join("\n"));
    if (refused) return refused;
    const settings = isRecord(body["settings"]) ? body["settings"] : {};
    const options = isRecord(body["options"]) ? body["options"] : {};
    const duration = settings["duration"];
    const video: VideoRequest = {
      resolution: pick(settings["resolution"], ["720p", "1080p"] as const, "720p"),
      aspectRatio: pick(settings["aspect_ratio"], ["16:9", "9:16", "1:1"] as const, "16:9"),
      durationSec: typeof duration === "number" && Number.isInteger(duration) && duration >= 1 && duration <= 60 ? duration : 5,
      audio: pick(settings["audio"], ["original", "off"] as const, "off"),
    };
    const externalId = str(options["external_task_id"]);
    const callbackUrl = str(options["callback_url"]);
    const watermark = isRecord(options["watermark_info"]) && options["watermark_info"]["enabled"] === true;
    const req: NewTask = {
      kind: "video",
      prompt: prompts.join("\n"),
      watermark,
      video,
      ...(externalId !== undefined ? { externalId } : {}),
      ...(callbackUrl !== undefined ? { callbackUrl } : {}),
      ...(bad ? { failWith: bad.message } : {}),
    };
    const now = this.deps.now();
    const outcome = this.deps.store.create(req, now);
    if (outcome.kind === "refused") return this.refusal(outcome);
    return ok(videoCreatedView(outcome.task, now));
  }

  /** B1: POST /v1/images/omni-image */
  async createImage(body: unknown): Promise<Answer> {
    const cfg = this.deps.config();
    const standing = this.accountRefusal();
    if (standing) return standing;
    const first = checkImageCreate(body, this.deps.rules())[0];
    if (first) return violationAnswer(first);
    if (!isRecord(body)) return fail(400, 1200, "body: must be a JSON object");
    const media: MediaInputRef[] = [];
    if (Array.isArray(body["image_list"])) {
      (body["image_list"] as unknown[]).forEach((item, i) => {
        if (isRecord(item) && typeof item["image"] === "string") {
          media.push({ value: item["image"], expected: "image", side: "image", field: `image_list[${i}].image` });
        }
      });
    }
    const bad = await checkMediaInputs(media, cfg.mediaFetch);
    if (bad && cfg.failure.badMedia === "reject-1201") return violationAnswer(bad);
    const refused = this.screen(typeof body["prompt"] === "string" ? body["prompt"] : "");
    if (refused) return refused;
    const resultType = pick(body["result_type"], ["single", "series"] as const, "single");
    const n = body["n"];
    const amount = body["series_amount"];
    const autoCount = resultType === "series" && amount === "auto";
    const seriesCount = amount === undefined ? 4 : Number(amount);
    const count =
      resultType === "single"
        ? typeof n === "number" && Number.isInteger(n) && n >= 1 && n <= 9 ? n : 1
        : autoCount ? 0 : Number.isInteger(seriesCount) && seriesCount >= 2 && seriesCount <= 9 ? seriesCount : 4;
    const image: ImageRequest = {
      modelName: str(body["model_name"]) ?? `${cfg.service}-image-o1`,
      resolution: pick(body["resolution"], ["1k", "2k", "4k"] as const, "1k"),
      resultType,
      count,
      autoCount,
      aspectRatio: str(body["aspect_ratio"]) ?? "auto",
    };
    const externalId = str(body["external_task_id"]);
    const callbackUrl = str(body["callback_url"]);
    const watermark = isRecord(body["watermark_info"]) && body["watermark_info"]["enabled"] === true;
    // Its pictures are drawn over its first reference image, when that is a readable PNG.
    const reference = media[0] && !bad ? referenceThumbnail(media[0].value) : undefined;
    const req: NewTask = {
      kind: "image",
      prompt: typeof body["prompt"] === "string" ? body["prompt"] : "",
      watermark,
      image,
      ...(reference ? { reference } : {}),
      ...(externalId !== undefined ? { externalId } : {}),
      ...(callbackUrl !== undefined ? { callbackUrl } : {}),
      ...(bad ? { failWith: bad.message } : {}),
    };
    const now = this.deps.now();
    const outcome = this.deps.store.create(req, now);
    if (outcome.kind === "refused") return this.refusal(outcome);
    return ok(imageCreatedView(outcome.task, now));
  }

  /** A2: GET /tasks?task_ids=.. | external_task_ids=..  (image tasks too with answers.unifiedImages, in the A2 shape; unknown ids omitted). */
  queryVideos(params: URLSearchParams): Answer {
    const cfg = this.deps.config();
    const record: Record<string, string | undefined> = {};
    for (const [k, v] of params) record[k] = v;
    const first = checkTaskQuery(record)[0];
    if (first) return violationAnswer(first);
    const byTask = str(record["task_ids"]);
    const byExternal = str(record["external_task_ids"]);
    if (byTask !== undefined && byExternal !== undefined) {
      return fail(400, 1201, "task_ids: task_ids and external_task_ids must not be used together");
    }
    if (byTask === undefined && byExternal === undefined) {
      return fail(400, 1201, "task_ids: give task_ids or external_task_ids (comma-separated)");
    }
    const field = byTask !== undefined ? "task_ids" : "external_task_ids";
    const ids = [...new Set((byTask ?? byExternal)!.split(",").map((s) => s.trim()).filter((s) => s !== ""))];
    if (ids.length > cfg.maxQueryIds) {
      // The live service's words (it counts both lists together; this emulator refuses them together).
      return fail(400, 1201, `task_ids and external_task_ids cannot exceed ${cfg.maxQueryIds} in total`);
    }
    const images = cfg.answers.unifiedImages;
    const now = this.deps.now();
    this.deps.store.settle(now);
    const view = this.deps.view();
    const found: Task[] = [];
    const unknown: string[] = [];
    for (const id of ids) {
      // Under duplicateExternalId "create-second" one external id may name several tasks: all are listed.
      const matches = byTask !== undefined ? [this.deps.store.get(id)] : this.deps.store.allByExternal(id);
      const shown = matches.filter((t): t is Task => t !== undefined && (t.kind === "video" || images) && this.visible(t, now));
      if (shown.length > 0) found.push(...shown);
      else unknown.push(id);
    }
    if (unknown.length > 0 && cfg.faults.unknownIdsAnswer === "error-1203") {
      return fail(404, 1203, `${field}: no such task: ${unknown.slice(0, 10).join(", ")}`);
    }
    for (const t of found) this.deps.store.noteAnswered(t, now);
    return ok(found.map((t) => videoTaskView(view, t, now)));
  }

  /** A3: POST /tasks  (video tasks; product_type image adds image tasks in the same item shape). */
  queryCursor(body: unknown): Answer {
    const now = this.deps.now();
    const first = checkCursorQuery(body, now)[0];
    if (first) return violationAnswer(first);
    const b: Body = isRecord(body) ? body : {};
    let statuses: string[] | undefined;
    let kinds: string[] | undefined;
    if (Array.isArray(b["filters"])) {
      for (const f of b["filters"] as unknown[]) {
        if (!isRecord(f) || !Array.isArray(f["values"])) continue;
        const values = (f["values"] as unknown[]).filter((v): v is string => typeof v === "string");
        if (f["key"] === "status") statuses = values.map((v) => (v === "succeed" ? "succeeded" : v));
        if (f["key"] === "product_type") kinds = values;
      }
    }
    const limitRaw = b["limit"];
    const limit = typeof limitRaw === "number" && Number.isInteger(limitRaw) ? limitRaw : 100;
    if (limit < 1 || limit > 500) return fail(400, 1201, `limit: must be from 1 to 500 (got ${limit})`);
    const cursorText = str(b["cursor"]);
    let start: number;
    let end: number;
    let after = 0;
    if (cursorText !== undefined) {
      const c = decodeCursor(cursorText);
      if (!c) return fail(400, 1201, "cursor: is not a next_cursor this service returned");
      start = c.start;
      end = c.end;
      after = c.after;
      statuses ??= [...c.statuses];
      kinds ??= [...c.kinds];
    } else {
      const endRaw = b["end_time"];
      const startRaw = b["start_time"];
      end = endRaw === undefined || endRaw === "" ? now : Number(endRaw);
      start = startRaw === undefined || startRaw === "" ? end - 30 * dayMs : Number(startRaw);
      if (!Number.isFinite(start) || !Number.isFinite(end)) return fail(400, 1201, "start_time: start_time and end_time must be Unix milliseconds");
      if (!(start < end)) return fail(400, 1201, `start_time: must be earlier than end_time (got ${start} and ${end})`);
    }
    statuses ??= [];
    // No product_type filter: every product's tasks at the live service, videos only before.
    kinds ??= this.deps.config().answers.unifiedImages ? ["video", "image"] : ["video"];
    const wantVideo = kinds.length === 0 || kinds.includes("video");
    const wantImage = kinds.includes("image");
    const store = this.deps.store;
    store.settle(now);
    // One kind asked for: its own list, so the other kind's tasks are never walked through.
    const list = wantVideo && wantImage ? store.all : wantImage ? store.images : store.videos;
    let i = cursorText !== undefined ? TaskStore.indexAfterSeq(list, after) : TaskStore.indexAtTime(list, start);
    const result: Task[] = [];
    let hasMore = false;
    for (; i < list.length; i++) {
      const t = list[i]!;
      if (t.createdAt > end) break;
      if (t.createdAt < start) continue;
      if (t.kind === "video" ? !wantVideo : !wantImage) continue;
      if (!this.visible(t, now)) continue;
      if (statuses.length > 0 && !statuses.includes(phaseAt(t, now))) continue;
      if (result.length === limit) {
        hasMore = true;
        break;
      }
      result.push(t);
    }
    for (const t of result) store.noteAnswered(t, now);
    const view = this.deps.view();
    const last = result[result.length - 1];
    return ok({
      result: result.map((t) => videoTaskView(view, t, now)),
      count: result.length,
      next_cursor: hasMore && last ? encodeCursor({ start, end, after: last.seq, statuses, kinds }) : "",
      has_more: hasMore,
    });
  }

  /** B2: GET /v1/images/omni-image/{id}  (a task id, or an external_task_id when enabled). */
  getImage(id: string): Answer {
    const cfg = this.deps.config();
    const store = this.deps.store;
    let t = store.get(id);
    if ((!t || t.kind !== "image") && cfg.faults.imageQueryByExternalId) t = store.getByExternal(id);
    const now = this.deps.now();
    if (!t || t.kind !== "image" || !this.visible(t, now)) {
      return cfg.answers.imageNotFound === "400-1201"
        ? fail(400, 1201, `Task not found by id/external id: ${id.slice(0, 200)}`)
        : fail(404, 1203, `id: no image task '${id.slice(0, 200)}'`);
    }
    store.settle(now);
    store.noteAnswered(t, now);
    return ok(imageTaskView(this.deps.view(), t, now));
  }

  /** B3: GET /v1/images/omni-image?pageNum=&pageSize=  (newest first, bare array). */
  listImages(params: URLSearchParams): Answer {
    const record: Record<string, string | undefined> = {};
    for (const [k, v] of params) record[k] = v;
    const first = checkImageList(record)[0];
    if (first) return violationAnswer(first);
    const num = record["pageNum"] === undefined || record["pageNum"] === "" ? 1 : Number(record["pageNum"]);
    const size = record["pageSize"] === undefined || record["pageSize"] === "" ? 30 : Number(record["pageSize"]);
    if (!Number.isInteger(num) || num < 1 || num > 1000) return fail(400, 1201, `pageNum: must be an integer from 1 to 1000 (got ${record["pageNum"]})`);
    if (!Number.isInteger(size) || size < 1 || size > 500) return fail(400, 1201, `pageSize: must be an integer from 1 to 500 (got ${record["pageSize"]})`);
    const now = this.deps.now();
    const store = this.deps.store;
    store.settle(now);
    const list = store.images;
    const view = this.deps.view();
    const out = [];
    // Tasks inside the visibility lag are the newest: they are left out before paging.
    let newest = list.length - 1;
    while (newest >= 0 && !this.visible(list[newest]!, now)) newest--;
    for (let k = newest - (num - 1) * size, taken = 0; k >= 0 && taken < size; k--, taken++) {
      store.noteAnswered(list[k]!, now);
      out.push(imageTaskView(view, list[k]!, now));
    }
    return ok(out);
  }
}

