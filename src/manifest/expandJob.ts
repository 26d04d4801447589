// Expansion of one job into PlannedTasks: each matrix combination (times each take, and
// for a downstream job each upstream item) becomes the exact request to send, its
// identity, its folder and its estimate; then every spec rule runs on it (preflight)
// and each violation is pointed back at the manifest value that produced the field.
// Pure apart from the injected image reader (which caches file reads).

import type { ImageCreateRequest, VideoContent, VideoCreateRequest } from "../api/wire.js";
import {
  checkImageCreate,
  checkImageMedia,
  checkVideoCreate,
  DEFAULT_SERVICE,
  defaultVideoModel,
  describeProbeFailure,
  foreignVideoModel,
  VIDEO_MODEL_NAME,
  type ImageInfo,
  type ProbeFailure,
  type RuleContext,
  type Violation,
} from "../rules/index.js";
import { axisIndices, expandMatrix, productSize, type Combination } from "./expandMatrix.js";
import { declarationPlace, type DiagnosticSink, type Place } from "./Locator.js";
import type { JobSpec, ManifestSpec, Value } from "./ManifestSpec.js";
import { type Amount, formatAmount, fromPrice, times } from "../money/Money.js";
import { imageOutputs } from "../rules/outputCount.js";
import { comboFolder, describeVars, folderPath, folderSegment } from "./outputFolder.js";
import type { PlannedInput, PlannedTask, SourcePos } from "./PlannedTask.js";
import { intentDigest, requestHash, taskId } from "./TaskIdentity.js";
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

export interface ExpandState {
  readonly spec: ManifestSpec;
  readonly sink: DiagnosticSink;
  readonly readImage: ReadImage;
  readonly pos: (place: Place) => SourcePos;
  /** Every id made so far, for the duplicate check. */
  /** Ids include the job, so a duplicate always comes from the same job's combinations. */
  readonly ids: Map<string, { readonly vars: Record<string, unknown>; readonly combo: Combination }>;
  /** id -> intent digest, so a later attempt can be derived from any task. */
  readonly intents: Map<string, string>;
  /** Per job: the key of its folder index (the folders in use, `folderIndexes`). */
  readonly dirs: Map<string, Set<string>>;
  /** Per job: request field -> manifest place (for checks made after expansion). */
  readonly fieldPlaces: Map<string, FieldPlaces>;
  /** Tasks made so far across jobs, for max_tasks. */
  count: number;
  /** The service's name (model names are made from it). Default "kling". */
  readonly service?: string;
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

/** Who holds a task folder, for the nesting check: the folder and the combination that made it. */
interface FolderOwner {
  readonly dir: string;
  readonly combo: Combination;
  readonly vars: Record<string, unknown>;
}

/**
 * Per job: the folders in use by lower-cased path, and every proper ancestor of each.
 * Folders must be unique as paths, not only as strings: one inside another (`x` and
 * `x/image-1.png` after sanitising) or two differing only in case (one folder on macOS
 * and Windows) would mix or overwrite two paid tasks' results.
 */
interface FolderIndex {
  readonly exact: Map<string, FolderOwner>;
  readonly ancestors: Map<string, FolderOwner>;
}
const folderIndexes = new WeakMap<Set<string>, FolderIndex>();

/** Why `dir` (lower-cased: `lower`) clashes with a folder already in `index` (and whose), or undefined. */
const folderClash = (index: FolderIndex, dir: string, lower: string): { owner: FolderOwner; why: string } | undefined => {
  const same = index.exact.get(lower);
  if (same) return { owner: same, why: `its folder '${dir}' differs only in letter case from '${same.dir}'` };
  // Each proper prefix ending before a `/` (indexOf, not split and join: 100,000 tasks).
  for (let cut = lower.indexOf("/"); cut >= 0; cut = lower.indexOf("/", cut + 1)) {
    const outer = index.exact.get(lower.slice(0, cut));
    if (outer) return { owner: outer, why: `its folder '${dir}' lies inside the folder '${outer.dir}'` };
  }
  const inner = index.ancestors.get(lower);
  if (inner) return { owner: inner, why: `its folder '${dir}' holds the folder '${inner.dir}'` };
  return undefined;
};

const addFolder = (index: FolderIndex, owner: FolderOwner, lower: string): void => {
  index.exact.set(lower, owner);
  for (let cut = lower.indexOf("/"); cut >= 0; cut = lower.indexOf("/", cut + 1)) {
    const key = lower.slice(0, cut);
    if (!index.ancestors.has(key)) index.ancestors.set(key, owner);
  }
};

const URL_RE = /^https?:\/\//i;
/** `@name` at the start of a word (after a space or an opening bracket or quote): not inside an address. */
const VIDEO_REF = /(^|[\s([{"'])@([A-Za-z][A-Za-z0-9_-]*)/g;
const IMAGE_LABEL = /<<<([^<>]*)>>>/g;
const VIDEO_ROLES = new Set(["feature_video", "base_video"]);

/** `model: `, `duration: `: the manifest key a message is about, to start it with. */
const subjectOf = (place: Place): string => {
  if ("data" in place) return "";
  if (place.key !== undefined) return `${place.key}: `;
  const last = [...place.path].reverse().find((p) => typeof p === "string");
  return last === undefined ? "" : `${last}: `;
};

const asInteger = (v: unknown): unknown => (typeof v === "string" && /^\d+$/.test(v.trim()) ? Number(v) : v);

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

const replaceUrls = (text: string, urlToContent: ReadonlyMap<string, string>): string => {
  let out = text;
  // Longest first, so a URL that is the start of another never cuts that one apart.
  const urls = [...urlToContent.keys()].sort((a, b) => b.length - a.length);
  for (const url of urls) if (out.includes(url)) out = out.split(url).join(urlToContent.get(url)!);
  return out;
};

/** The request as identity sees it: base64 files and upstream URLs replaced by content hashes. */
const identityView = (value: unknown, exact: ReadonlyMap<string, string>, urls: ReadonlyMap<string, string>): unknown => {
  if (typeof value === "string") return exact.get(value) ?? (urls.size ? replaceUrls(value, urls) : value);
  if (Array.isArray(value)) return value.map((v) => identityView(v, exact, urls));
  if (value && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = identityView(v, exact, urls);
    return out;
  }
  return value;
};

export const expandJob = (
  state: ExpandState,
  job: JobSpec,
  items: readonly ItemSource[] | undefined,
  options: { readonly dropDuplicates?: boolean } = {},
): PlannedTask[] => {
  const { spec, sink } = state;
  const jobPlace: Place = { path: ["jobs"], key: job.id };
  const source = state.pos(jobPlace);
  const product = productSize(job.axes);
  const perItem = job.axes.length ? product : 1;
  const planned = perItem * (items ? items.length : 1) * job.take + state.count;
  if (planned > spec.maxTasks) {
    sink.add(
      jobPlace,
      `job '${job.id}' would expand to about ${perItem * (items ? items.length : 1) * job.take} tasks, which brings the manifest to ${planned}, over max_tasks (${spec.maxTasks}); raise max_tasks if you mean it`,
    );
    return [];
  }
  const combos = expandMatrix(job.axes, job.include, job.exclude);
  const service = state.service ?? DEFAULT_SERVICE;
  const ruleContext: RuleContext = { ...(spec.elements ? { elements: spec.elements } : {}), service };
  const dirs = state.dirs.get(job.id) ?? new Set<string>();
  state.dirs.set(job.id, dirs);
  let folderIndex = folderIndexes.get(dirs);
  if (!folderIndex) folderIndexes.set(dirs, (folderIndex = { exact: new Map(), ancestors: new Map() }));
  const tasks: PlannedTask[] = [];
  // Many tasks cost the same: one estimate object per amount keeps 100k tasks light.
  const estimates = new Map<string, { currency: string; amount: string }>();
  const estimateOf = (cost: Amount) => {
    const amount = formatAmount(cost);
    let e = estimates.get(amount);
    if (!e) {
      e = { currency: spec.prices!.currency, amount };
      estimates.set(amount, e);
    }
    return e;
  };
  const usedNames = new Set<string>();
  const declaredNames = new Map(job.inputs.filter((i) => i.name !== undefined).map((i) => [i.name!, i]));
  const imageChecks = new Map<string, Violation[]>();
  // Image side: `<<<name>>>` -> the label of its position, the same for every task.
  const labels = new Map<string, string>();
  if (job.kind === "image") {
    let images = 0;
    let elements = 0;
    for (const input of job.inputs) {
      if (input.role === "element") labels.set(input.name!, `<<<element_${++elements}>>>`);
      else labels.set(input.name!, `<<<image_${++images}>>>`);
    }
  }
  let fields: FieldPlaces | undefined;
  // Where each input is declared: looked up once per job, shared by its tasks' provenance.
  const inputPlaces = new Map<JobSpec["inputs"][number], SourcePos>();
  const inputPos = (input: JobSpec["inputs"][number]): SourcePos => {
    let p = inputPlaces.get(input);
    if (!p) {
      p = state.pos(declarationPlace(input.path));
      inputPlaces.set(input, p);
    }
    return p;
  };

  const comboPlace = (c: Combination, other?: Combination): Place => {
    if ("include" in c.origin) return { path: [...job.path, "matrix", "include", c.origin.include] };
    if (job.axes.length === 0) return jobPlace;
    const idx = axisIndices(job.axes, c.origin.product);
    let a = idx.length - 1;
    if (other && "product" in other.origin) {
      const o = axisIndices(job.axes, other.origin.product);
      const differing = idx.findIndex((v, i) => v !== o[i]);
      if (differing >= 0) a = differing;
    }
    return job.axes[a]!.places[idx[a]!] ?? jobPlace;
  };

  // The task being made, set for each item and combination below; the helpers that read it
  // are made once per job, not once per task (a closure per helper per task cost about a
  // second per 100,000 tasks under tsx, whose names helper wraps each one).
  let item: ItemSource | undefined;
  let values: Combination["values"] = {};
  let taskVars: Record<string, unknown> = {};
  let failed = false;
  let exact: Map<string, string> | undefined; // base64 -> sha256:<hex>, for identity
  let inputs: PlannedInput[] = [];
  let places: FieldPlaces | undefined;
  const scope: Scope = (n) =>
    n in values ? values[n] : n === "item" ? item?.item : n === "vars" ? spec.vars : spec.vars[n];
  const names = () => [...new Set(["vars", ...Object.keys(spec.vars), ...Object.keys(values), ...(item ? ["item"] : [])])];
  // Shown with a problem found in one task; a job without a matrix has nothing to show.
  const label = (): string | undefined => (Object.keys(taskVars).length ? describeVars(taskVars) : undefined);
  const get = (v: Value | undefined): unknown => {
    if (!v) return undefined;
    if (!v.template) return v.literal;
    const r = render(v.template, scope, names);
    if (r.ok) return r.value;
    for (const problem of r.problems) sink.add({ path: v.path, textOffset: problem.offset }, problem.message, "error", label);
    failed = true;
    return undefined;
  };
  const noteInput = (input: JobSpec["inputs"][number], field: string, src: string | undefined, sha256?: string): void => {
    const content = sha256 ?? (src !== undefined ? item?.urlToContent.get(src)?.replace(/^sha256:/, "") : undefined);
    inputs.push({
      field,
      role: input.role,
      ...(input.name !== undefined ? { name: input.name } : {}),
      ...(src !== undefined ? { src } : {}),
      ...(content !== undefined ? { sha256: content } : {}),
      ...(input.elementId !== undefined ? { element_id: String(input.elementId) } : {}),
      source: inputPos(input),
    });
  };
  // Sources: URL as is; a local image read once, checked, sent as raw base64.
  const image = (v: Value, field: string, side: "video" | "image", input: JobSpec["inputs"][number]): string | undefined => {
    const src = get(v);
    if (typeof src !== "string") return undefined;
    if (URL_RE.test(src)) {
      noteInput(input, field, src);
      return src;
    }
    // An upstream result's file: only the bytes its record names are sent.
    const recorded = item?.urlToContent.get(src)?.replace(/^sha256:/, "");
    const read = state.readImage(src, recorded);
    if (recorded !== undefined && ("error" in read || read.sha256 !== recorded)) {
      const link = item?.fileLinks?.get(src);
      if (link !== undefined) {
        noteInput(input, field, link);
        return link;
      }
    }
    if ("error" in read) {
      sink.add({ path: v.path }, `image '${src}' ${read.error}`, "error", label);
      failed = true;
      return undefined;
    }
    const key = `${side}\u0000${src}`;
    let problems = imageChecks.get(key);
    if (!problems) {
      problems = "kind" in read.probe && read.probe.kind === "unreadable"
        ? [describeProbeFailure(read.probe as ProbeFailure, field)]
        : checkImageMedia(read.probe as ImageInfo, side, field);
      imageChecks.set(key, problems);
    }
    for (const p of problems) {
      sink.add({ path: v.path }, `image '${src}': ${p.message.replace(`${field}: `, "")}`, "error", label);
      failed = true;
    }
    (exact ??= new Map()).set(read.base64, `sha256:${read.sha256}`);
    noteInput(input, field, src, read.sha256);
    return read.base64;
  };
  // An image request field by its wire name, noting where it came from.
  const f = (wire: string): unknown => {
    const v = job.fields.get(wire);
    if (v) places?.set(wire, { path: v.path });
    return get(v);
  };

  for (const next of items ?? [undefined]) {
    item = next;
    for (const combo of combos) {
      values = combo.values;
      taskVars = item ? { ...values, item: item.vars } : values;
      failed = false;
      exact = undefined;
      inputs = [];
      places = fields ? undefined : new FieldPlaces(jobPlace);

      let body: VideoCreateRequest | ImageCreateRequest;
      let videoModel: string | undefined;
      let slots = 1;
      let estimateCost: Amount | undefined;
      const promptRaw = get(job.prompt);
      const prompt = typeof promptRaw === "string" ? promptRaw : "";

      if (job.kind === "video") {
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
            noteInput(input, `contents[${i}].element_id`, undefined);
            continue;
          }
          places?.set(`contents[${i}].url`, { path: input.src!.path });
          if (VIDEO_ROLES.has(input.role)) {
            const url = get(input.src);
            if (typeof url !== "string") continue;
            if (!URL_RE.test(url)) {
              sink.add(
                { path: input.src!.path },
                `video '${url}' is not a URL: the service takes no uploaded video; put the file where the service can fetch it and give its http(s) URL`,
                "error",
                label,
              );
              failed = true;
              continue;
            }
            hasFrameOrVideo = true;
            noteInput(input, `contents[${i}].url`, url);
            contents.push({ type: input.role as "feature_video" | "base_video", url, ...(input.name !== undefined ? { id: input.name } : {}) });
            continue;
          }
          const url = image(input.src!, `contents[${i}].url`, "video", input);
          if (url === undefined) continue;
          if (input.role === "first_frame") hasFrameOrVideo = true;
          contents.push({ type: input.role as "first_frame" | "last_frame" | "refer_image", url, ...(input.name !== undefined ? { id: input.name } : {}) });
        }
        // Prompt references: `@name` must be a declared input.
        for (const m of prompt.matchAll(VIDEO_REF)) {
          const name = m[2]!;
          if (declaredNames.has(name)) usedNames.add(name);
          else {
            sink.add(
              { path: job.prompt.path, textOffset: job.prompt.template ? undefined : m.index! + m[1]!.length },
              `the prompt refers to '@${name}', but no image, video or element of job '${job.id}' has that name${declaredNames.size ? `; names: ${[...declaredNames.keys()].join(", ")}` : ""}`,
              "error",
              label,
            );
            failed = true;
          }
        }
        const settings: Record<string, unknown> = {};
        for (const k of ["audio", "resolution", "aspect_ratio", "duration"]) {
          const v = job.fields.get(`settings.${k}`);
          if (v) places?.set(`settings.${k}`, { path: v.path });
          const got = get(v);
          if (got !== undefined) settings[k] = k === "duration" ? asInteger(got) : got;
        }
        settings.audio ??= "off";
        settings.resolution ??= "720p";
        settings.duration ??= 5;
        // The service needs a ratio when nothing else gives one; 16:9 is its default.
        if (settings.aspect_ratio === undefined && !hasFrameOrVideo) settings.aspect_ratio = "16:9";
        places?.set("settings", { path: job.path, key: "settings" });
        const watermark = get(job.watermark) === true;
        if (job.watermark) places?.set("options.watermark_info", { path: job.watermark.path });
        const model = videoModelOf(f("model"), service);
        if ("error" in model) {
          sink.add({ path: job.fields.get("model")!.path }, `model: ${model.error}`, "error", label);
          failed = true;
        } else videoModel = model.model;
        body = {
          contents,
          settings: settings as VideoCreateRequest["settings"],
          ...(watermark ? { options: { watermark_info: { enabled: true } } } : {}),
        };
        const perSecond = spec.prices?.video?.[String(settings.resolution)];
        if (perSecond !== undefined && typeof settings.duration === "number") {
          const price = fromPrice(perSecond);
          if (price !== undefined) estimateCost = times(price, settings.duration);
        }
      } else {
        places?.set("prompt", { path: job.prompt.path });
        const imageList: { image: string }[] = [];
        const elementList: { element_id: number | bigint }[] = [];
        for (const input of job.inputs) {
          if (input.role === "element") {
            places?.set(`element_list[${elementList.length}]`, declarationPlace(input.path));
            places?.set(`element_list[${elementList.length}].element_id`, { path: input.path });
            noteInput(input, `element_list[${elementList.length}].element_id`, undefined);
            // Exact: a 64-bit id above 2^53 stays a bigint, written as a JSON integer when sent.
            elementList.push({ element_id: exactInteger(input.elementId!) });
            continue;
          }
          const n = imageList.length;
          places?.set(`image_list[${n}]`, declarationPlace(input.path));
          places?.set(`image_list[${n}].image`, { path: input.src!.path });
          const img = image(input.src!, `image_list[${n}].image`, "image", input);
          imageList.push({ image: img ?? "" });
        }
        places?.set("image_list", { path: job.path, key: "images" });
        places?.set("element_list", { path: job.path, key: "elements" });
        // `<<<name>>>` -> the positional label the service expects.
        const text = !prompt.includes("<<<") ? prompt : prompt.replace(IMAGE_LABEL, (whole, name: string, offset: number) => {
          const trimmed = name.trim();
          const found = labels.get(trimmed);
          if (found) {
            usedNames.add(trimmed);
            return found;
          }
          if (/^(image|element)_\d+$/.test(trimmed)) return whole;
          sink.add(
            { path: job.prompt.path, textOffset: job.prompt.template ? undefined : offset },
            `the prompt refers to '<<<${trimmed}>>>', but job '${job.id}' has no image or element of that name${labels.size ? `; names: ${[...labels.keys()].join(", ")}` : ""}`,
            "error",
            label,
          );
          failed = true;
          return whole;
        });
        const model = f("model_name");
        const resolution = f("resolution") ?? "1k";
        const resultType = f("result_type") ?? "single";
        const n = asInteger(f("n") ?? 1);
        const seriesAmount = asInteger(f("series_amount") ?? 4);
        const aspect = f("aspect_ratio") ?? "auto";
        const watermark = get(job.watermark) === true;
        if (job.watermark) places?.set("watermark_info", { path: job.watermark.path });
        const imageBody: ImageCreateRequest = { prompt: text };
        if (model !== undefined) imageBody.model_name = model as string;
        if (imageList.length) imageBody.image_list = imageList;
        if (elementList.length) imageBody.element_list = elementList;
        imageBody.resolution = resolution as ImageCreateRequest["resolution"];
        imageBody.result_type = resultType as ImageCreateRequest["result_type"];
        if (resultType === "series") imageBody.series_amount = seriesAmount as number | "auto";
        else imageBody.n = n as number;
        imageBody.aspect_ratio = aspect as string;
        if (watermark) imageBody.watermark_info = { enabled: true };
        body = imageBody;
        // `auto` series: the service picks the count (up to 9 slots); estimated at the default.
        const outputs = imageOutputs({ result_type: resultType, n, series_amount: seriesAmount });
        slots = outputs.atMost;
        const perImage = spec.prices?.image?.[String(resolution)];
        const price = perImage === undefined ? undefined : fromPrice(perImage);
        if (price !== undefined) estimateCost = times(price, outputs.expected);
      }
      if (places && !failed) {
        fields = places;
        state.fieldPlaces.set(job.id, places);
      }
      if (failed) continue;

      // Preflight: every rule of the spec, on the exact body.
      const violations = job.kind === "video" ? checkVideoCreate(body, ruleContext) : checkImageCreate(body, ruleContext);
      if (violations.length) {
        // The position names the manifest value; the request's field name would only confuse.
        for (const v of violations) {
          const place = fields!.get(v.field);
          const text = v.message.startsWith(`${v.field}: `) ? v.message.slice(v.field.length + 2) : v.message;
          // A model of another service's name: say which service this is and how to name another.
          const hint = v.rule === "image.model_name.enum" ? ` (models of the service '${service}'; a gateway with another name: --service or OMNIBATCH_SERVICE)` : "";
          sink.add(place, `${subjectOf(place)}${text}${hint}`, "error", label);
        }
        continue;
      }

      const urls = item?.urlToContent;
      // Most tasks have nothing to substitute: hash the body itself, no copy.
      // A video model other than the default is part of what is asked for (the default adds
      // nothing, so tasks planned before models could be named keep their ids).
      const asked = videoModel === undefined ? body : { ...body, model: videoModel };
      const intent = intentDigest(!exact && !urls?.size ? asked : identityView(asked, exact ?? new Map(), urls ?? new Map()));
      const base = item ? `${item.folder}${Object.keys(values).length ? `_${comboFolder(values)}` : ""}` : comboFolder(values);
      let folder: string;
      if (job.output) {
        const out = get(job.output);
        if (failed || typeof out !== "string") continue;
        folder = folderPath(out);
      } else folder = folderSegment(base);
      let fileName: string | undefined;
      if (job.name) {
        const out = get(job.name);
        if (failed || typeof out !== "string") continue;
        fileName = folderSegment(out);
      }

      for (let take = 1; take <= job.take; take++) {
        const hash = requestHash(intent, take, 1);
        const id = taskId(spec.name, job.id, hash);
        const seen = state.ids.get(id);
        if (seen) {
          if (options.dropDuplicates) continue;
          const here = comboPlace(combo, seen.combo);
          const there = state.pos(comboPlace(seen.combo, combo));
          sink.add(
            here,
            `this task (${label() ?? "no matrix"}) sends exactly the same request as the task (${describeVars(seen.vars)}) at ${there.file}:${there.line}:${there.col}: both would be the same paid work (id ${id}); use the differing value in the request, or 'take' for deliberate variations`,
          );
          continue;
        }
        let dir = `${job.id}/${folder}${job.take > 1 ? `/take-${take}` : ""}`;
        let lower = dir.toLowerCase();
        // Taken already (by this very name: a folder differing only in case is a clash below).
        if (folderIndex.exact.get(lower)?.dir === dir) {
          dir = `${dir}-${id.slice(-6)}`;
          lower = dir.toLowerCase();
        }
        const clash = folderClash(folderIndex, dir, lower);
        if (clash) {
          const here = comboPlace(combo, clash.owner.combo);
          const there = state.pos(comboPlace(clash.owner.combo, combo));
          sink.add(
            here,
            `this task (${label() ?? "no matrix"}) cannot have its own results folder: ${clash.why}, made for the task (${describeVars(clash.owner.vars)}) at ${there.file}:${there.line}:${there.col}; both would be paid for and their results mixed or lost. Change the values or the 'output' template so no folder name is a prefix of another (letter case ignored)`,
          );
          continue;
        }
        // One record per task serves the duplicate check and the folder index.
        const owner: FolderOwner = { dir, combo, vars: taskVars };
        state.ids.set(id, owner);
        state.intents.set(id, intent);
        addFolder(folderIndex, owner, lower);
        // The body is this task's own object: with one take it is completed in place.
        const own = job.take === 1 ? body : { ...body };
        if (job.kind === "video") (own as VideoCreateRequest).options = { ...(own as VideoCreateRequest).options, external_task_id: id };
        else (own as ImageCreateRequest).external_task_id = id;
        const request = own;
        const task = {
          id,
          job: job.id,
          kind: job.kind,
          vars: taskVars,
          dir,
          requestHash: hash,
          take,
          attempt: 1,
          retryFailed: job.retryFailed,
          retryContentRisk: job.retryContentRisk,
          slots,
          source,
          request,
        } as PlannedTask & { estimate?: unknown; upstream?: unknown };
        if (estimateCost !== undefined) task.estimate = estimateOf(estimateCost);
        if (item) task.upstream = item.upstream;
        if (fileName !== undefined) (task as { name?: string }).name = fileName;
        if (inputs.length) (task as { inputs?: unknown }).inputs = inputs;
        if (videoModel !== undefined) (task as { model?: string }).model = videoModel;
        tasks.push(task);
      }
    }
  }
  state.count += tasks.length;

  // An input the prompt never names is probably a mistake (only first/last frames need no name).
  if (tasks.length > 0) {
    for (const input of job.inputs) {
      if (input.name === undefined || input.role === "first_frame" || input.role === "last_frame") continue;
      if (!usedNames.has(input.name)) {
        const ref = job.kind === "video" ? `@${input.name}` : `<<<${input.name}>>>`;
        sink.add({ path: input.path }, `the prompt never refers to '${input.name}' (write ${ref} where it should be used)`, "warning");
      }
    }
  }
  return tasks;
};
