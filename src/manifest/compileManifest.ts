// From schema-valid manifest data to a ManifestSpec: defaults applied, templates parsed
// and their names checked, named inputs and elements resolved, matrix axes loaded from
// data files, and the jobs put in DAG order. Problems go to the sink with their place.

import type { ElementInfo } from "../rules/index.js";
import { declarationPlace, type DiagnosticSink, type Place } from "./Locator.js";
import type { AxisSpec, InputSpec, JobSpec, ManifestSpec, PricesSpec, Value } from "./ManifestSpec.js";
import { hasTemplate, isTemplateError, parseTemplate, type Template } from "./Template.js";
import type { YamlPath } from "./YamlDocument.js";

type Raw = Record<string, unknown>;

/** Rows of a data file, or undefined once its problems were reported. */
export type LoadRows = (file: string, place: Place) => { rows: unknown[]; places: Place[] } | undefined;

export const DEFAULT_MAX_TASKS = 200_000;
export const DEFAULT_CONCURRENCY = 5;
const RESERVED_NAMES = new Set(["item", "vars"]);

const isRecord = (v: unknown): v is Raw => typeof v === "object" && v !== null && !Array.isArray(v);

const VIDEO_SETTINGS = ["audio", "resolution", "aspect_ratio", "duration"] as const;
/** Manifest name -> wire name of the image fields. */
const IMAGE_FIELDS: Record<string, string> = {
  model: "model_name",
  resolution: "resolution",
  result_type: "result_type",
  n: "n",
  series_amount: "series_amount",
  aspect_ratio: "aspect_ratio",
};

/** Every template of a job, with where it is, for the name check. */
export const templatesOf = (job: JobSpec): Value[] => {
  const out: Value[] = [job.prompt];
  for (const i of job.inputs) if (i.src) out.push(i.src);
  for (const v of job.fields.values()) out.push(v);
  if (job.output) out.push(job.output);
  if (job.name) out.push(job.name);
  return out.filter((v) => v.template !== undefined);
};

/** Makes a manifest value: a template parsed (a mistake reported at its place, the text kept as a literal), or the literal. */
type MakeValue = (path: YamlPath, v: unknown) => Value;

const valueMaker = (sink: DiagnosticSink): MakeValue => (path, v) => {
  if (typeof v !== "string" || !hasTemplate(v)) return { path, literal: v };
  const t = parseTemplate(v);
  if (isTemplateError(t)) {
    sink.add({ path, textOffset: t.offset }, t.message);
    return { path, literal: v };
  }
  return { path, template: t };
};

/**
 * The top-level `elements` table and the element references of the jobs: each reference
 * resolved to its library id (an unknown name reported), and the ids used remembered for
 * the rules' name and type checks (`forRules`).
 */
const elementResolver = (raw: Raw, sink: DiagnosticSink) => {
  const elementTable = new Map<string, { id: string; name?: string; type?: ElementInfo["element_type"]; path: YamlPath }>();
  if (isRecord(raw.elements)) {
    for (const [key, e] of Object.entries(raw.elements)) {
      const el = e as Raw;
      elementTable.set(key, {
        id: String(el.id),
        ...(typeof el.name === "string" ? { name: el.name } : {}),
        ...(typeof el.type === "string" ? { type: el.type as ElementInfo["element_type"] } : {}),
        path: ["elements", key],
      });
    }
  }
  const usedElementIds = new Map<string, YamlPath>();
  const resolve = (ref: unknown, path: YamlPath): string | undefined => {
    if (isRecord(ref)) {
      const id = String(ref.id);
      if (!usedElementIds.has(id)) usedElementIds.set(id, path);
      return id;
    }
    if (typeof ref === "number") {
      const id = String(ref);
      if (!usedElementIds.has(id)) usedElementIds.set(id, path);
      return id;
    }
    const entry = elementTable.get(String(ref));
    // A library id too long for a number (above 2^53) arrives as its digits.
    if (!entry && typeof ref === "string" && /^[0-9]{16,}$/.test(ref)) {
      if (!usedElementIds.has(ref)) usedElementIds.set(ref, path);
      return ref;
    }
    if (!entry) {
      const known = [...elementTable.keys()];
      sink.add(
        { path },
        `unknown element '${String(ref)}': declare it under the top-level 'elements' (with its library id)${known.length ? `; declared: ${known.join(", ")}` : ""}, or write { id: <library id> }`,
      );
      return undefined;
    }
    if (!usedElementIds.has(entry.id)) usedElementIds.set(entry.id, path);
    return entry.id;
  };
  /** The elements the rules check names and types against: undefined when none is used or one used has no known name and type (warned). */
  const forRules = (): ManifestSpec["elements"] => {
    if (usedElementIds.size === 0) return undefined;
    const byLibraryId = new Map<string, ElementInfo>();
    for (const e of elementTable.values()) {
      if (e.name !== undefined && e.type !== undefined) byLibraryId.set(e.id, { id: e.id, name: e.name, element_type: e.type });
    }
    const unknown = [...usedElementIds].find(([id]) => !byLibraryId.has(id));
    if (unknown) {
      sink.add(
        { path: unknown[1] },
        `element ${unknown[0]} has no known name and type (give both under the top-level 'elements'): the element name and type checks are skipped`,
        "warning",
      );
      return undefined;
    }
    return (id) => byLibraryId.get(id);
  };
  return { resolve, forRules };
};

type ResolveElement = (ref: unknown, path: YamlPath) => string | undefined;

/** A job's request fields (video settings and model, or the image fields), each from the job or the manifest's defaults for its kind. */
const jobFields = (job: Raw, path: YamlPath, kind: "video" | "image", kindDefaults: Raw, value: MakeValue, pick: Pick): Map<string, Value> => {
  const fields = new Map<string, Value>();
  if (kind === "video") {
    const settings = (isRecord(job.settings) ? job.settings : {}) as Raw;
    for (const k of VIDEO_SETTINGS) {
      if (settings[k] !== undefined) fields.set(`settings.${k}`, value([...path, "settings", k], settings[k]));
      else if (kindDefaults[k] !== undefined) fields.set(`settings.${k}`, value(["defaults", kind, k], kindDefaults[k]));
    }
    // The video model: the create path's last segment, not a body field.
    const model = pick("model");
    if (model) fields.set("model", value(model.path, model.v));
  } else {
    for (const [k, wire] of Object.entries(IMAGE_FIELDS)) {
      const p = pick(k);
      if (p) fields.set(wire, value(p.path, p.v));
    }
  }
  return fields;
};

/** A job's named inputs, in a fixed order: frames, images, videos, the raw contents list, elements; a name used twice is reported. */
const jobInputs = (job: Raw, id: string, path: YamlPath, kind: "video" | "image", value: MakeValue, resolveElement: ResolveElement, sink: DiagnosticSink): InputSpec[] => {
  const inputs: InputSpec[] = [];
  if (kind === "video") {
    for (const role of ["first_frame", "last_frame"] as const) {
      if (typeof job[role] === "string") {
        inputs.push({ name: role, role, src: value([...path, role], job[role]), path: [...path, role] });
      }
    }
    if (isRecord(job.images)) {
      for (const [n, img] of Object.entries(job.images)) {
        const p: YamlPath = [...path, "images", n];
        if (typeof img === "string") inputs.push({ name: n, role: "refer_image", src: value(p, img), path: p });
        else {
          const o = img as Raw;
          inputs.push({ name: n, role: (o.role as InputSpec["role"]) ?? "refer_image", src: value([...p, "src"], o.src), path: p });
        }
      }
    }
    if (isRecord(job.videos)) {
      for (const [n, vid] of Object.entries(job.videos)) {
        const p: YamlPath = [...path, "videos", n];
        if (typeof vid === "string") inputs.push({ name: n, role: "feature_video", src: value(p, vid), path: p });
        else {
          const o = vid as Raw;
          inputs.push({ name: n, role: (o.role as InputSpec["role"]) ?? "feature_video", src: value([...p, "src"], o.src), path: p });
        }
      }
    }
    if (Array.isArray(job.contents)) {
      job.contents.forEach((item, i) => {
        const o = item as Raw;
        const p: YamlPath = [...path, "contents", i];
        const roles = ["first_frame", "last_frame", "refer_image", "feature_video", "base_video", "element"].filter((r) => o[r] !== undefined);
        if (roles.length !== 1) {
          sink.add({ path: p }, `each contents item needs exactly one of first_frame, last_frame, refer_image, feature_video, base_video, element (found ${roles.length ? roles.join(", ") : "none"})`);
          return;
        }
        const role = roles[0] as InputSpec["role"];
        const idName = typeof o.id === "string" ? o.id : undefined;
        if (role === "element") {
          if (idName === undefined) {
            sink.add({ path: p }, "an element item needs an 'id': the name the prompt uses for it (@id)");
            return;
          }
          const elementId = resolveElement(o.element, [...p, "element"]);
          if (elementId !== undefined) inputs.push({ name: idName, role, elementId, path: p });
        } else {
          inputs.push({ ...(idName !== undefined ? { name: idName } : {}), role, src: value([...p, role], o[role]), path: p });
        }
      });
    }
  } else if (isRecord(job.images)) {
    for (const [n, img] of Object.entries(job.images)) {
      const p: YamlPath = [...path, "images", n];
      inputs.push({ name: n, role: "image", src: value(p, img), path: p });
    }
  }
  if (isRecord(job.elements)) {
    for (const [n, ref] of Object.entries(job.elements)) {
      const p: YamlPath = [...path, "elements", n];
      const elementId = resolveElement(ref, p);
      if (elementId !== undefined) inputs.push({ name: n, role: "element", elementId, path: p });
    }
  }
  const names = new Map<string, YamlPath>();
  for (const input of inputs) {
    if (input.name === undefined) continue;
    const first = names.get(input.name);
    if (first) {
      sink.add(declarationPlace(input.path), `the input name '${input.name}' is used twice in job '${id}' (also at ${first.join(".")}); names must be unique within a task`);
    } else names.set(input.name, input.path);
  }
  return inputs;
};

/** A job's matrix: its axes (inline lists, or rows of a data file), include and exclude, each checked against the axes' names. */
const jobMatrix = (job: Raw, id: string, path: YamlPath, loadRows: LoadRows, sink: DiagnosticSink) => {
  const axes: AxisSpec[] = [];
  const unreadAxes: string[] = [];
  let include: Raw[] = [];
  let exclude: Raw[] = [];
  if (isRecord(job.matrix)) {
    for (const [axis, spec] of Object.entries(job.matrix)) {
      const p: YamlPath = [...path, "matrix", axis];
      if (axis === "include" || axis === "exclude") continue;
      if (RESERVED_NAMES.has(axis)) {
        sink.add({ path: [...path, "matrix"], key: axis }, `'${axis}' is a reserved name and cannot be a matrix axis`);
        continue;
      }
      if (Array.isArray(spec)) {
        axes.push({ name: axis, values: spec, places: spec.map((_, i) => ({ path: [...p, i] })) });
      } else if (isRecord(spec) && typeof spec.rows === "string") {
        const loaded = loadRows(spec.rows, { path: [...p, "rows"] });
        if (!loaded) {
          // Reported in the data file; the name stays known so templates do not cascade.
          unreadAxes.push(axis);
          continue;
        }
        if (loaded.rows.length === 0) sink.add({ path: [...p, "rows"] }, `the data file '${spec.rows}' has no rows: job '${id}' makes no tasks`, "warning");
        axes.push({ name: axis, values: loaded.rows, places: loaded.places });
      }
    }
    const axisNames = new Set([...axes.map((a) => a.name), ...unreadAxes]);
    include = Array.isArray(job.matrix.include) ? (job.matrix.include as Raw[]) : [];
    exclude = Array.isArray(job.matrix.exclude) ? (job.matrix.exclude as Raw[]) : [];
    exclude.forEach((e, i) => {
      for (const k of Object.keys(e)) {
        if (!axisNames.has(k)) {
          sink.add({ path: [...path, "matrix", "exclude", i], key: k }, `exclude names '${k}', which is not an axis of this matrix${axisNames.size ? ` (axes: ${[...axisNames].join(", ")})` : ""}`);
        }
      }
    });
    include.forEach((e, i) => {
      for (const k of Object.keys(e)) {
        if (RESERVED_NAMES.has(k)) sink.add({ path: [...path, "matrix", "include", i], key: k }, `'${k}' is a reserved name and cannot be a matrix value`);
      }
    });
  }
  return { axes, unreadAxes, include, exclude };
};

/** The names a job's templates use must be known (vars, axes, include keys, `item` with for_each): each unknown one reported once, at its place. */
const checkTemplateNames = (spec: JobSpec, vars: Raw, sink: DiagnosticSink): void => {
  const known = new Set<string>(["vars", ...Object.keys(vars), ...spec.axes.map((a) => a.name), ...(spec.unreadAxes ?? [])]);
  for (const e of spec.include) for (const k of Object.keys(e)) known.add(k);
  if (spec.forEach) known.add("item");
  for (const v of templatesOf(spec)) {
    for (const part of (v.template as Template).parts) {
      if (typeof part === "string") continue;
      const first = part.path[0]!;
      if (!known.has(first)) {
        const hint = first === "item" ? " ('item' exists only in a job with for_each)" : "";
        sink.add(
          { path: v.path, textOffset: part.offset },
          `unknown name '${first}' in template${hint}; known names: ${[...known].sort().join(", ")}`,
        );
      }
    }
  }
  for (const a of spec.axes) {
    if (Object.hasOwn(vars, a.name)) sink.add({ path: [...spec.path, "matrix"], key: a.name }, `the matrix axis '${a.name}' hides the var of the same name in this job's templates`, "warning");
  }
};

/**
 * `review: true`, or `review: { retake_rejected: N }` (a rejected output's task gets up to N
 * new takes, src/review/retake.ts): only a job without for_each, whose tasks are all known
 * before the run, can have new takes planned.
 */
const reviewOf = (job: Raw, forEach: JobSpec["forEach"], path: YamlPath, sink: DiagnosticSink): { review?: true; retakeRejected?: number } => {
  if (job.review === true) return { review: true };
  if (!isRecord(job.review)) return {};
  const n = job.review.retake_rejected as number;
  if (n > 0 && forEach) {
    sink.add(
      { path: [...path, "review"], key: "retake_rejected" },
      `retake_rejected: new takes are planned only for a job without for_each (this one makes its tasks from ${forEach.job}'s results during the run); use review: true here, or put retake_rejected on '${forEach.job}'`,
    );
  }
  return n > 0 ? { review: true, retakeRejected: n } : { review: true };
};

/** A value of the job, else of the manifest's defaults for the job's kind, with its place. */
type Pick = (key: string) => { v: unknown; path: YamlPath } | undefined;

/** One job's spec, its mistakes reported. */
const compileJob = (id: string, job: Raw, raw: Raw, sink: DiagnosticSink, loadRows: LoadRows, value: MakeValue, resolveElement: ResolveElement): JobSpec => {
  const vars = (isRecord(raw.vars) ? raw.vars : {}) as Raw;
  const defaults = (isRecord(raw.defaults) ? raw.defaults : {}) as Raw;
  const path: YamlPath = ["jobs", id];
  const kind = job.kind as "video" | "image";
  const kindDefaults = (isRecord(defaults[kind]) ? defaults[kind] : {}) as Raw;
  const pick: Pick = (key) =>
    job[key] !== undefined
      ? { v: job[key], path: [...path, key] }
      : kindDefaults[key] !== undefined
        ? { v: kindDefaults[key], path: ["defaults", kind, key] }
        : undefined;

  const fields = jobFields(job, path, kind, kindDefaults, value, pick);
  const inputs = jobInputs(job, id, path, kind, value, resolveElement, sink);
  const { axes, unreadAxes, include, exclude } = jobMatrix(job, id, path, loadRows, sink);

  let forEach: JobSpec["forEach"];
  if (typeof job.for_each === "string") {
    const [up, mode] = job.for_each.split(".") as [string, "outputs" | "tasks"];
    forEach = { job: up, mode, path: [...path, "for_each"] };
  }

  const watermark = pick("watermark");
  const retryFailed = pick("retry_failed");
  const retryContentRisk = pick("retry_content_risk");
  const spec: JobSpec = {
    id,
    kind,
    path,
    prompt: value([...path, "prompt"], job.prompt),
    inputs,
    fields,
    ...(watermark ? { watermark: value(watermark.path, watermark.v) } : {}),
    take: typeof job.take === "number" ? job.take : 1,
    retryFailed: retryFailed ? (retryFailed.v as number) : 0,
    retryContentRisk: retryContentRisk ? (retryContentRisk.v as boolean) : false,
    ...reviewOf(job, forEach, path, sink),
    ...(typeof job.output === "string" ? { output: value([...path, "output"], job.output) } : {}),
    ...(typeof job.name === "string" ? { name: value([...path, "name"], job.name) } : {}),
    ...(forEach ? { forEach } : {}),
    axes,
    ...(unreadAxes.length ? { unreadAxes } : {}),
    include,
    exclude,
  };
  checkTemplateNames(spec, vars, sink);
  return spec;
};

/** The jobs with each upstream job before its downstream ones; a for_each naming no job, itself or a cycle is reported and its jobs made invalid. */
const orderJobs = (jobs: readonly JobSpec[], invalidJobs: Set<string>, sink: DiagnosticSink): JobSpec[] => {
  const byId = new Map(jobs.map((j) => [j.id, j]));
  for (const j of jobs) {
    if (!j.forEach) continue;
    if (j.forEach.job === j.id) {
      sink.add({ path: j.forEach.path }, `job '${j.id}' cannot run for_each over itself`);
      invalidJobs.add(j.id);
    } else if (!byId.has(j.forEach.job)) {
      invalidJobs.add(j.id);
      sink.add({ path: j.forEach.path }, `for_each names the job '${j.forEach.job}', which does not exist; jobs: ${[...byId.keys()].join(", ")}`);
    }
  }
  const ordered: JobSpec[] = [];
  const state = new Map<string, "visiting" | "done">();
  const reportedCycle = new Set<string>();
  const visit = (j: JobSpec, stack: string[]): void => {
    const s = state.get(j.id);
    if (s === "done") return;
    if (s === "visiting") {
      const cycle = [...stack.slice(stack.indexOf(j.id)), j.id];
      const key = [...cycle].sort().join(",");
      if (!reportedCycle.has(key)) {
        reportedCycle.add(key);
        sink.add({ path: j.forEach!.path }, `jobs form a cycle through for_each: ${cycle.join(" -> ")}`);
      }
      for (const c of cycle) invalidJobs.add(c);
      return;
    }
    state.set(j.id, "visiting");
    const up = j.forEach && j.forEach.job !== j.id ? byId.get(j.forEach.job) : undefined;
    if (up) visit(up, [...stack, j.id]);
    state.set(j.id, "done");
    ordered.push(j);
  };
  for (const j of jobs) visit(j, []);
  return ordered;
};

/** The budget and the prices of the estimates (a prices currency other than the budget's is warned about). */
const budgetAndPrices = (raw: Raw, sink: DiagnosticSink): { budget?: ManifestSpec["budget"]; prices?: PricesSpec } => {
  const budget = isRecord(raw.budget)
    ? { max: String(raw.budget.max), currency: String(raw.budget.currency) }
    : undefined;
  let prices: PricesSpec | undefined;
  if (isRecord(raw.prices)) {
    const p = raw.prices;
    prices = {
      currency: typeof p.currency === "string" ? p.currency : (budget?.currency ?? "USD"),
      ...(isRecord(p.video) ? { video: p.video as Record<string, number> } : {}),
      ...(isRecord(p.image) ? { image: p.image as Record<string, number> } : {}),
    };
    if (budget && p.currency !== undefined && p.currency !== budget.currency) {
      sink.add({ path: ["prices", "currency"] }, `prices are in ${String(p.currency)} but the budget is in ${budget.currency}: the budget cannot use these estimates`, "warning");
    }
  }
  return { ...(budget ? { budget } : {}), ...(prices ? { prices } : {}) };
};

export const compileManifest = (
  raw: Raw,
  sink: DiagnosticSink,
  loadRows: LoadRows,
  options: { maxTasks?: number } = {},
): ManifestSpec => {
  const name = raw.name as string;
  const vars = (isRecord(raw.vars) ? raw.vars : {}) as Raw;
  const value = valueMaker(sink);
  const elements = elementResolver(raw, sink);

  const jobs: JobSpec[] = [];
  const invalidJobs = new Set<string>();
  for (const [id, job] of Object.entries(raw.jobs as Record<string, Raw>)) {
    const errorsBefore = sink.errorCount;
    jobs.push(compileJob(id, job, raw, sink, loadRows, value, elements.resolve));
    if (sink.errorCount > errorsBefore) invalidJobs.add(id);
  }
  const ordered = orderJobs(jobs, invalidJobs, sink);
  const forRules = elements.forRules();
  const { budget, prices } = budgetAndPrices(raw, sink);

  return {
    name,
    outputs: typeof raw.outputs === "string" ? raw.outputs : `outputs/${name}`,
    concurrency: typeof raw.concurrency === "number" ? raw.concurrency : DEFAULT_CONCURRENCY,
    maxTasks: options.maxTasks ?? (typeof raw.max_tasks === "number" ? raw.max_tasks : DEFAULT_MAX_TASKS),
    ...(budget ? { budget } : {}),
    ...(prices ? { prices } : {}),
    vars,
    jobs: ordered,
    invalidJobs,
    ...(forRules ? { elements: forRules } : {}),
  };
};
