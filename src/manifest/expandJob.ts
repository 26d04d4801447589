// Expansion of one job into PlannedTasks: each matrix combination (times each take, and
// for a downstream job each upstream item) becomes the exact request to send, its
// identity, its folder and its estimate; then every spec rule runs on it (preflight)
// and each violation is pointed back at the manifest value that produced the field.
// The request itself is built in buildRequest.ts. Pure apart from the injected image
// reader (which caches file reads).

import type { ImageCreateRequest, VideoCreateRequest } from "../protocol/wire.js";
import { checkImageCreate, checkVideoCreate, DEFAULT_SERVICE, type RuleContext, type Violation } from "../rules/index.js";
import { axisIndices, expandMatrix, productSize, type Combination } from "./expandMatrix.js";
import type { DiagnosticSink, Place } from "./Locator.js";
import type { JobSpec, ManifestSpec } from "./ManifestSpec.js";
import { type Amount, formatAmount } from "../money/Money.js";
import { comboFolder, describeVars, folderPath, folderSegment } from "./outputFolder.js";
import type { PlannedTask, SourcePos } from "./PlannedTask.js";
import { intentDigest, requestHash, taskId } from "./TaskIdentity.js";
import { buildImageRequest, buildVideoRequest, FieldPlaces, TaskDraft, type BuiltRequest, type ItemSource, type ReadImage } from "./buildRequest.js";

export { FieldPlaces, videoModelOf, type ItemSource, type LocalImage, type ReadImage } from "./buildRequest.js";

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

/**
 * Why `dir` (lower-cased: `lower`) clashes with a folder already in `index` (and whose), or
 * undefined. `same`: the caller's lookup of `lower` in `index.exact` (one lookup per task).
 */
const folderClash = (index: FolderIndex, dir: string, lower: string, same: FolderOwner | undefined): { owner: FolderOwner; why: string } | undefined => {
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

/** `model: `, `duration: `: the manifest key a message is about, to start it with. */
const subjectOf = (place: Place): string => {
  if ("data" in place) return "";
  if (place.key !== undefined) return `${place.key}: `;
  const last = [...place.path].reverse().find((p) => typeof p === "string");
  return last === undefined ? "" : `${last}: `;
};

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

/** The job's tasks so far: the duplicate check, the folder index and the estimates they share. */
interface JobTasks {
  readonly state: ExpandState;
  readonly job: JobSpec;
  readonly folderIndex: FolderIndex;
  readonly dropDuplicates: boolean;
  readonly tasks: PlannedTask[];
  readonly estimateOf: (cost: Amount) => { currency: string; amount: string };
  /** Where a combination's values are written (the axis value differing from `other`'s, when given). */
  readonly comboPlace: (c: Combination, other?: Combination) => Place;
}

/** The place to report a combination at: its include entry, or the axis value that tells it from `other`. */
const comboPlaceOf = (job: JobSpec, jobPlace: Place) => (c: Combination, other?: Combination): Place => {
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

/** Many tasks cost the same: one estimate object per amount keeps 100k tasks light. */
const estimates = (currency: string) => {
  const byAmount = new Map<string, { currency: string; amount: string }>();
  return (cost: Amount) => {
    const amount = formatAmount(cost);
    let e = byAmount.get(amount);
    if (!e) {
      e = { currency, amount };
      byAmount.set(amount, e);
    }
    return e;
  };
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
  const made: JobTasks = {
    state,
    job,
    folderIndex,
    dropDuplicates: options.dropDuplicates === true,
    tasks: [],
    estimateOf: estimates(spec.prices?.currency ?? ""),
    comboPlace: comboPlaceOf(job, jobPlace),
  };
  const draft = new TaskDraft(job, spec, sink, state.readImage, state.pos);
  let fields: FieldPlaces | undefined;

  for (const item of items ?? [undefined]) {
    for (const combo of combos) {
      draft.start(item, combo.values, fields ? undefined : new FieldPlaces(jobPlace));
      const promptRaw = draft.get(job.prompt);
      const prompt = typeof promptRaw === "string" ? promptRaw : "";
      const built = job.kind === "video" ? buildVideoRequest(draft, spec.prices, service, prompt) : buildImageRequest(draft, spec.prices, prompt);
      if (draft.places && !draft.failed) {
        fields = draft.places;
        state.fieldPlaces.set(job.id, draft.places);
      }
      if (draft.failed) continue;

      // Preflight: every rule of the spec, on the exact body.
      const violations = job.kind === "video" ? checkVideoCreate(built.body as VideoCreateRequest, ruleContext) : checkImageCreate(built.body as ImageCreateRequest, ruleContext);
      if (violations.length) {
        reportViolations(violations, fields!, draft, service);
        continue;
      }
      addTakes(made, draft, combo, built, source);
    }
  }
  state.count += made.tasks.length;
  if (made.tasks.length > 0) warnUnnamedInputs(job, draft.usedNames, sink);
  return made.tasks;
};

/** The rules' violations of one task's body, each at the manifest value that produced the field. */
const reportViolations = (violations: readonly Violation[], fields: FieldPlaces, draft: TaskDraft, service: string): void => {
  // The position names the manifest value; the request's field name would only confuse.
  for (const v of violations) {
    const place = fields.get(v.field);
    const text = v.message.startsWith(`${v.field}: `) ? v.message.slice(v.field.length + 2) : v.message;
    // A model of another service's name: say which service this is and how to name another.
    const hint = v.rule === "image.model_name.enum" ? ` (models of the service '${service}'; a gateway with another name: --service or OMNIBATCH_SERVICE)` : "";
    draft.fail(place, `${subjectOf(place)}${text}${hint}`);
  }
};

/**
 * The drafted task's takes as planned tasks: its identity (the request as identity sees it,
 * the take), its folder, and the checks that no two tasks are the same paid work or share a
 * results folder.
 */
const addTakes = (made: JobTasks, draft: TaskDraft, combo: Combination, built: BuiltRequest, source: SourcePos): void => {
  const { state, job, folderIndex } = made;
  const { spec, sink } = state;
  const { body, videoModel } = built;
  const item = draft.item;
  const values = draft.values;
  const urls = item?.urlToContent;
  const exact = draft.exact;
  // Most tasks have nothing to substitute: hash the body itself, no copy.
  // A video model other than the default is part of what is asked for (the default adds
  // nothing, so tasks planned before models could be named keep their ids).
  const asked = videoModel === undefined ? body : { ...body, model: videoModel };
  const intent = intentDigest(!exact && !urls?.size ? asked : identityView(asked, exact ?? new Map(), urls ?? new Map()));
  const base = item ? `${item.folder}${Object.keys(values).length ? `_${comboFolder(values)}` : ""}` : comboFolder(values);
  let folder: string;
  if (job.output) {
    const out = draft.get(job.output);
    if (draft.failed || typeof out !== "string") return;
    folder = folderPath(out);
  } else folder = folderSegment(base);
  let fileName: string | undefined;
  if (job.name) {
    const out = draft.get(job.name);
    if (draft.failed || typeof out !== "string") return;
    fileName = folderSegment(out);
  }

  for (let take = 1; take <= job.take; take++) {
    const hash = requestHash(intent, take, 1);
    const id = taskId(spec.name, job.id, hash);
    const seen = state.ids.get(id);
    if (seen) {
      if (made.dropDuplicates) continue;
      const here = made.comboPlace(combo, seen.combo);
      const there = state.pos(made.comboPlace(seen.combo, combo));
      sink.add(
        here,
        `this task (${draft.label() ?? "no matrix"}) sends exactly the same request as the task (${describeVars(seen.vars)}) at ${there.file}:${there.line}:${there.col}: both would be the same paid work (id ${id}); use the differing value in the request, or 'take' for deliberate variations`,
      );
      continue;
    }
    let dir = `${job.id}/${folder}${job.take > 1 ? `/take-${take}` : ""}`;
    let lower = dir.toLowerCase();
    let same = folderIndex.exact.get(lower);
    // Taken already (by this very name: a folder differing only in case is a clash below).
    if (same?.dir === dir) {
      dir = `${dir}-${id.slice(-6)}`;
      lower = dir.toLowerCase();
      same = folderIndex.exact.get(lower);
    }
    const clash = folderClash(folderIndex, dir, lower, same);
    if (clash) {
      const here = made.comboPlace(combo, clash.owner.combo);
      const there = state.pos(made.comboPlace(clash.owner.combo, combo));
      sink.add(
        here,
        `this task (${draft.label() ?? "no matrix"}) cannot have its own results folder: ${clash.why}, made for the task (${describeVars(clash.owner.vars)}) at ${there.file}:${there.line}:${there.col}; both would be paid for and their results mixed or lost. Change the values or the 'output' template so no folder name is a prefix of another (letter case ignored)`,
      );
      continue;
    }
    // One record per task serves the duplicate check and the folder index.
    const owner: FolderOwner = { dir, combo, vars: draft.taskVars };
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
      vars: draft.taskVars,
      dir,
      requestHash: hash,
      take,
      attempt: 1,
      retryFailed: job.retryFailed,
      retryContentRisk: job.retryContentRisk,
      slots: built.slots,
      source,
      request,
    } as PlannedTask & { estimate?: unknown; upstream?: unknown };
    if (built.estimateCost !== undefined) task.estimate = made.estimateOf(built.estimateCost);
    if (item) task.upstream = item.upstream;
    if (fileName !== undefined) (task as { name?: string }).name = fileName;
    if (draft.inputs.length) (task as { inputs?: unknown }).inputs = draft.inputs;
    if (videoModel !== undefined) (task as { model?: string }).model = videoModel;
    made.tasks.push(task);
  }
};

/** An input the prompt never names is probably a mistake (only first/last frames need no name). */
const warnUnnamedInputs = (job: JobSpec, usedNames: ReadonlySet<string>, sink: DiagnosticSink): void => {
  for (const input of job.inputs) {
    if (input.name === undefined || input.role === "first_frame" || input.role === "last_frame") continue;
    if (!usedNames.has(input.name)) {
      const ref = job.kind === "video" ? `@${input.name}` : `<<<${input.name}>>>`;
      sink.add({ path: input.path }, `the prompt never refers to '${input.name}' (write ${ref} where it should be used)`, "warning");
    }
  }
};
