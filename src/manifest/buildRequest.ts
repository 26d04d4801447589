// The request of one task of a job (expandJob.ts makes the tasks): its templates rendered
// for the task's matrix values (and upstream item), local images read and checked, the
// video or image body the service is sent, where each field came from in the manifest,
// the inputs for provenance and the estimate. Pure apart from the injected image reader.

import type { ImageCreateRequest, VideoContent, VideoCreateRequest } from "../protocol/wire.js";
import {
  checkImageMedia,
  defaultVideoModel,
  describeProbeFailure,
  foreignVideoModel,
  VIDEO_MODEL_NAME,
  type ImageInfo,
  type ProbeFailure,
  type Violation,
} from "../rules/index.js";
import type { Combination } from "./expandMatrix.js";
import { declarationPlace, type DiagnosticSink, type Place } from "./Locator.js";
import type { JobSpec, ManifestSpec, Value } from "./ManifestSpec.js";
import { type Amount, fromPrice, times } from "../money/Money.js";
import { imageOutputs } from "../rules/outputCount.js";
import { describeVars } from "./outputFolder.js";
import type { PlannedInput, SourcePos } from "./PlannedTask.js";
import { render, type Scope } from "./Template.js";
import { exactInteger } from "../api/exactJson.js";

/** A local image as read once per file: content hash, base64 and what probing found. */
export interface LocalImage {
  readonly sha256: string;
  readonly base64: string;
  readonly probe: ImageInfo | ProbeFailure;
}

/**
 * Reads a local image (path relative to the manifest); a reason when it cannot. With
 * `expectSha256` (an upstream result's recorded hash) a copy read earlier is used only
 * when it holds those bytes; otherwise the file is read again (it may have been restored).
 */
export type ReadImage = (src: string, expectSha256?: string) => LocalImage | { readonly error: string };

/** One upstream thing a downstream task is made from, as templates see it. */
export interface ItemSource {
  /** What `{{ item... }}` resolves to. */
  readonly item: Record<string, unknown>;
  /** What the task's vars record about the item (no URLs: they expire). */
  readonly vars: Record<string, unknown>;
  /** URL -> `sha256:<hex>`: identity uses content, never the signed, expiring URL. */
  readonly urlToContent: ReadonlyMap<string, string>;
  /**
   * An upstream result's file in the outputs folder (`item.file`) -> its link at the
   * service. The file is sent only while it holds the recorded bytes (its sha256 in
   * `urlToContent`); edited or missing, the link is sent instead: the same content, so the
   * same task, never one made from what happens to be on disk.
   */
  readonly fileLinks?: ReadonlyMap<string, string>;
  readonly folder: string;
  readonly upstream: { readonly job: string; readonly task: string; readonly output: number };
}

/**
 * A video job's model as the create path's segment: undefined for the service's default
 * (`<service>-o1`, named or not), the name for another; a message when the name cannot
 * be sent or names another service's model. A model this release does not know is sent
 * as named: the service may add models, and its input rules are the spec's.
 */
export const videoModelOf = (model: unknown, service: string): { readonly model?: string } | { readonly error: string } => {
  if (model === undefined) return {};
  if (typeof model !== "string" || !VIDEO_MODEL_NAME.test(model)) {
    return { error: `must be a model name of letters, digits, '-', '_' or '.' (got ${JSON.stringify(model)?.slice(0, 80)}), e.g. ${defaultVideoModel(service)}` };
  }
  const own = foreignVideoModel(model, service);
  if (own !== undefined) {
    return { error: `the service '${service}' has no model '${model}': did you mean ${own}? (a gateway with another name: --service or OMNIBATCH_SERVICE)` };
  }
  return model === defaultVideoModel(service) ? {} : { model };
};

/** Field path of the rules (`contents[2].url`) -> where in the manifest it came from. */
export class FieldPlaces {
  private readonly map = new Map<string, Place>();
  constructor(private readonly fallback: Place) {}
  set(field: string, place: Place): void {
    this.map.set(field, place);
  }
  get(field: string): Place {
    let f = field;
    for (;;) {
      const p = this.map.get(f);
      if (p) return p;
      const cut = Math.max(f.lastIndexOf("."), f.lastIndexOf("["));
      if (cut <= 0) return this.fallback;
      f = f.slice(0, cut);
    }
  }
}

const URL_RE = /^https?:\/\//i;
/** `@name` at the start of a word (after a space or an opening bracket or quote): not inside an address. */
const VIDEO_REF = /(^|[\s([{"'])@([A-Za-z][A-Za-z0-9_-]*)/g;
const IMAGE_LABEL = /<<<([^<>]*)>>>/g;
const VIDEO_ROLES = new Set(["feature_video", "base_video"]);

export const asInteger = (v: unknown): unknown => (typeof v === "string" && /^\d+$/.test(v.trim()) ? Number(v) : v);

type Input = JobSpec["inputs"][number];

/**
 * One job's task being drafted: what the job's tasks share (made once per job, not once
 * per task: a closure per helper per task cost about a second per 100,000 tasks under tsx,
 * whose names helper wraps each one), and the task being made now (`start` sets it for
 * each item and combination).
 */
export class TaskDraft {
  /** Names the prompts refer to (`@name`, `<<<name>>>`), over all the job's tasks. */
  readonly usedNames = new Set<string>();
  private readonly declaredNames: Map<string, Input>;
  /** Image side: `<<<name>>>` -> the label of its position, the same for every task. */
  private readonly labels = new Map<string, string>();
  private readonly imageChecks = new Map<string, Violation[]>();
  /** Where each input is declared: looked up once per job, shared by its tasks' provenance. */
  private readonly inputPlaces = new Map<Input, SourcePos>();
  private readonly scope: Scope;
  private readonly names: () => string[];

  item: ItemSource | undefined;
  values: Combination["values"] = {};
  taskVars: Record<string, unknown> = {};
  /** A problem was reported for this task: it is not made. */
  failed = false;
  /** base64 -> sha256:<hex>, for identity. */
  exact: Map<string, string> | undefined;
  inputs: PlannedInput[] = [];
  /** Where each request field came from: noted for the job's first task that is made (undefined once they are known). */
  places: FieldPlaces | undefined;

  constructor(
    readonly job: JobSpec,
    private readonly spec: ManifestSpec,
    private readonly sink: DiagnosticSink,
    private readonly readImage: ReadImage,
    private readonly pos: (place: Place) => SourcePos,
  ) {
    this.declaredNames = new Map(job.inputs.filter((i) => i.name !== undefined).map((i) => [i.name!, i]));
    if (job.kind === "image") {
      let images = 0;
      let elements = 0;
      for (const input of job.inputs) {
        if (input.role === "element") this.labels.set(input.name!, `<<<element_${++elements}>>>`);
        else this.labels.set(input.name!, `<<<image_${++images}>>>`);
      }
    }
    this.scope = (n) => (n in this.values ? this.values[n] : n === "item" ? this.item?.item : n === "vars" ? spec.vars : spec.vars[n]);
    this.names = () => [...new Set(["vars", ...Object.keys(spec.vars), ...Object.keys(this.values), ...(this.item ? ["item"] : [])])];
  }

  /** The next task: for `item` (a downstream job's) and `values`; `places` to note where its fields come from. */
  start(item: ItemSource | undefined, values: Combination["values"], places: FieldPlaces | undefined): void {
    this.item = item;
    this.values = values;
    this.taskVars = item ? { ...values, item: item.vars } : values;
    this.failed = false;
    this.exact = undefined;
    this.inputs = [];
    this.places = places;
  }

  /** Shown with a problem found in one task; a job without a matrix has nothing to show. */
  readonly label = (): string | undefined => (Object.keys(this.taskVars).length ? describeVars(this.taskVars) : undefined);

  /** A problem of this task, at `place`: it is not made. */
  fail(place: Place, message: string): void {
    this.sink.add(place, message, "error", this.label);
    this.failed = true;
  }

  /** A manifest value for this task: its template rendered (problems reported), or its literal. */
  get(v: Value | undefined): unknown {
    if (!v) return undefined;
    if (!v.template) return v.literal;
    const r = render(v.template, this.scope, this.names);
    if (r.ok) return r.value;
    for (const problem of r.problems) this.sink.add({ path: v.path, textOffset: problem.offset }, problem.message, "error", this.label);
    this.failed = true;
    return undefined;
  }

  /** An image request field by its wire name, noting where it came from. */
  field(wire: string): unknown {
    const v = this.job.fields.get(wire);
    if (v) this.places?.set(wire, { path: v.path });
    return this.get(v);
  }

  noteInput(input: Input, field: string, src: string | undefined, sha256?: string): void {
    const content = sha256 ?? (src !== undefined ? this.item?.urlToContent.get(src)?.replace(/^sha256:/, "") : undefined);
    let source = this.inputPlaces.get(input);
    if (!source) {
      source = this.pos(declarationPlace(input.path));
      this.inputPlaces.set(input, source);
    }
    this.inputs.push({
      field,
      role: input.role,
      ...(input.name !== undefined ? { name: input.name } : {}),
      ...(src !== undefined ? { src } : {}),
      ...(content !== undefined ? { sha256: content } : {}),
      ...(input.elementId !== undefined ? { element_id: String(input.elementId) } : {}),
      source,
    });
  }

  /** An image source: a URL as is; a local image read once, checked, sent as raw base64. */
  image(v: Value, field: string, side: "video" | "image", input: Input): string | undefined {
    const src = this.get(v);
    if (typeof src !== "string") return undefined;
    if (URL_RE.test(src)) {
      this.noteInput(input, field, src);
      return src;
    }
    // An upstream result's file: only the bytes its record names are sent.
    const recorded = this.item?.urlToContent.get(src)?.replace(/^sha256:/, "");
    const read = this.readImage(src, recorded);
    if (recorded !== undefined && ("error" in read || read.sha256 !== recorded)) {
      const link = this.item?.fileLinks?.get(src);
      if (link !== undefined) {
        this.noteInput(input, field, link);
        return link;
      }
    }
    if ("error" in read) {
      this.fail({ path: v.path }, `image '${src}' ${read.error}`);
      return undefined;
    }
    const key = `${side}\u0000${src}`;
    let problems = this.imageChecks.get(key);
    if (!problems) {
      problems = "kind" in read.probe && read.probe.kind === "unreadable"
        ? [describeProbeFailure(read.probe as ProbeFailure, field)]
        : checkImageMedia(read.probe as ImageInfo, side, field);
      this.imageChecks.set(key, problems);
    }
    for (const p of problems) this.fail({ path: v.path }, `image '${src}': ${p.message.replace(`${field}: `, "")}`);
    (this.exact ??= new Map()).set(read.base64, `sha256:${read.sha256}`);
    this.noteInput(input, field, src, read.sha256);
    return read.base64;
  }

  /** Prompt references `@name` of a video prompt: each must name a declared input. */
  checkVideoRefs(prompt: string): void {
    const job = this.job;
    for (const m of prompt.matchAll(VIDEO_REF)) {
      const name = m[2]!;
      if (this.declaredNames.has(name)) this.usedNames.add(name);
      else {
        this.fail(
          { path: job.prompt.path, textOffset: job.prompt.template ? undefined : m.index! + m[1]!.length },
          `the prompt refers to '@${name}', but no image, video or element of job '${job.id}' has that name${this.declaredNames.size ? `; names: ${[...this.declaredNames.keys()].join(", ")}` : ""}`,
        );
      }
    }
  }

  /** An image prompt with each `<<<name>>>` replaced by the positional label the service expects. */
  labelImagePrompt(prompt: string): string {
    if (!prompt.includes("<<<")) return prompt;
    const job = this.job;
    return prompt.replace(IMAGE_LABEL, (whole, name: string, offset: number) => {
      const trimmed = name.trim();
      const found = this.labels.get(trimmed);
      if (found) {
        this.usedNames.add(trimmed);
        return found;
      }
      if (/^(image|element)_\d+$/.test(trimmed)) return whole;
      this.fail(
        { path: job.prompt.path, textOffset: job.prompt.template ? undefined : offset },
        `the prompt refers to '<<<${trimmed}>>>', but job '${job.id}' has no image or element of that name${this.labels.size ? `; names: ${[...this.labels.keys()].join(", ")}` : ""}`,
      );
      return whole;
    });
  }
}

/** A task's request as built: the body, the video model (other than the default), the slots it takes and its estimate. */
export interface BuiltRequest {
  readonly body: VideoCreateRequest | ImageCreateRequest;
  readonly videoModel?: string;
  readonly slots: number;
  readonly estimateCost?: Amount;
}

/** The video body of the drafted task (problems reported on the draft). */
export const buildVideoRequest = (d: TaskDraft, prices: ManifestSpec["prices"], service: string, prompt: string): BuiltRequest => {
  const job = d.job;
  const places = d.places;
  const jobPlace: Place = { path: ["jobs"], key: job.id };
  places?.set("contents[0].text", { path: job.prompt.path });
  places?.set("contents[0]", { path: job.prompt.path });
  // Count rules name the whole list: point at the first input section the job has.
  const section = ["contents", "images", "videos", "elements"].find((k) => job.inputs.some((i) => i.path[2] === k));
  places?.set("contents", section ? { path: job.path, key: section } : jobPlace);
  const contents: VideoContent[] = [{ type: "prompt", text: prompt }];
  let hasFrameOrVideo = false;
  for (const input of job.inputs) {
    const i = contents.length;
    places?.set(`contents[${i}]`, declarationPlace(input.path));
    if (input.name !== undefined) places?.set(`contents[${i}].id`, declarationPlace(input.path));
    if (input.role === "element") {
      places?.set(`contents[${i}].element_id`, { path: input.path });
      contents.push({ type: "element", element_id: input.elementId!, id: input.name! });
      d.noteInput(input, `contents[${i}].element_id`, undefined);
      continue;
    }
    places?.set(`contents[${i}].url`, { path: input.src!.path });
    if (VIDEO_ROLES.has(input.role)) {
      const url = d.get(input.src);
      if (typeof url !== "string") continue;
      if (!URL_RE.test(url)) {
        d.fail(
          { path: input.src!.path },
          `video '${url}' is not a URL: the service takes no uploaded video; put the file where the service can fetch it and give its http(s) URL`,
        );
        continue;
      }
      hasFrameOrVideo = true;
      d.noteInput(input, `contents[${i}].url`, url);
      contents.push({ type: input.role as "feature_video" | "base_video", url, ...(input.name !== undefined ? { id: input.name } : {}) });
      continue;
    }
    const url = d.image(input.src!, `contents[${i}].url`, "video", input);
    if (url === undefined) continue;
    if (input.role === "first_frame") hasFrameOrVideo = true;
    contents.push({ type: input.role as "first_frame" | "last_frame" | "refer_image", url, ...(input.name !== undefined ? { id: input.name } : {}) });
  }
  d.checkVideoRefs(prompt);
  const settings: Record<string, unknown> = {};
  for (const k of ["audio", "resolution", "aspect_ratio", "duration"]) {
    const v = job.fields.get(`settings.${k}`);
    if (v) places?.set(`settings.${k}`, { path: v.path });
    const got = d.get(v);
    if (got !== undefined) settings[k] = k === "duration" ? asInteger(got) : got;
  }
  settings.audio ??= "off";
  settings.resolution ??= "720p";
  settings.duration ??= 5;
  // The service needs a ratio when nothing else gives one; 16:9 is its default.
  if (settings.aspect_ratio === undefined && !hasFrameOrVideo) settings.aspect_ratio = "16:9";
  places?.set("settings", { path: job.path, key: "settings" });
  const watermark = d.get(job.watermark) === true;
  if (job.watermark) places?.set("options.watermark_info", { path: job.watermark.path });
  const model = videoModelOf(d.field("model"), service);
  let videoModel: string | undefined;
  if ("error" in model) d.fail({ path: job.fields.get("model")!.path }, `model: ${model.error}`);
  else videoModel = model.model;
  const body: VideoCreateRequest = {
    contents,
    settings: settings as VideoCreateRequest["settings"],
    ...(watermark ? { options: { watermark_info: { enabled: true } } } : {}),
  };
  let estimateCost: Amount | undefined;
  const perSecond = prices?.video?.[String(settings.resolution)];
  if (perSecond !== undefined && typeof settings.duration === "number") {
    const price = fromPrice(perSecond);
    if (price !== undefined) estimateCost = times(price, settings.duration);
  }
  return { body, slots: 1, ...(videoModel !== undefined ? { videoModel } : {}), ...(estimateCost !== undefined ? { estimateCost } : {}) };
};

/** The image body of the drafted task (problems reported on the draft). */
export const buildImageRequest = (d: TaskDraft, prices: ManifestSpec["prices"], prompt: string): BuiltRequest => {
  const job = d.job;
  const places = d.places;
  places?.set("prompt", { path: job.prompt.path });
  const imageList: { image: string }[] = [];
  const elementList: { element_id: number | bigint }[] = [];
  for (const input of job.inputs) {
    if (input.role === "element") {
      places?.set(`element_list[${elementList.length}]`, declarationPlace(input.path));
      places?.set(`element_list[${elementList.length}].element_id`, { path: input.path });
      d.noteInput(input, `element_list[${elementList.length}].element_id`, undefined);
      // Exact: a 64-bit id above 2^53 stays a bigint, written as a JSON integer when sent.
      elementList.push({ element_id: exactInteger(input.elementId!) });
      continue;
    }
    const n = imageList.length;
    places?.set(`image_list[${n}]`, declarationPlace(input.path));
    places?.set(`image_list[${n}].image`, { path: input.src!.path });
    const img = d.image(input.src!, `image_list[${n}].image`, "image", input);
    imageList.push({ image: img ?? "" });
  }
  places?.set("image_list", { path: job.path, key: "images" });
  places?.set("element_list", { path: job.path, key: "elements" });
  const text = d.labelImagePrompt(prompt);
  const model = d.field("model_name");
  const resolution = d.field("resolution") ?? "1k";
  const resultType = d.field("result_type") ?? "single";
  const n = asInteger(d.field("n") ?? 1);
  const seriesAmount = asInteger(d.field("series_amount") ?? 4);
  const aspect = d.field("aspect_ratio") ?? "auto";
  const watermark = d.get(job.watermark) === true;
  if (job.watermark) places?.set("watermark_info", { path: job.watermark.path });
  const body: ImageCreateRequest = { prompt: text };
  if (model !== undefined) body.model_name = model as string;
  if (imageList.length) body.image_list = imageList;
  if (elementList.length) body.element_list = elementList;
  body.resolution = resolution as ImageCreateRequest["resolution"];
  body.result_type = resultType as ImageCreateRequest["result_type"];
  if (resultType === "series") body.series_amount = seriesAmount as number | "auto";
  else body.n = n as number;
  body.aspect_ratio = aspect as string;
  if (watermark) body.watermark_info = { enabled: true };
  // `auto` series: the service picks the count (up to 9 slots); estimated at the default.
  const outputs = imageOutputs({ result_type: resultType, n, series_amount: seriesAmount });
  const perImage = prices?.image?.[String(resolution)];
  const price = perImage === undefined ? undefined : fromPrice(perImage);
  return { body, slots: outputs.atMost, ...(price !== undefined ? { estimateCost: times(price, outputs.expected) } : {}) };
};
