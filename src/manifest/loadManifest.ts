// The shell around the manifest core: reads the manifest, its data files and local
// images (each file once), runs parse -> schema -> compile -> expand -> preflight, and
// either returns a LoadedManifest or rejects with ManifestInvalid listing every problem.

import { createHash } from "node:crypto";
import { dirname, isAbsolute, relative, resolve, sep } from "node:path";
import { probeImage } from "../rules/index.js";
import { checkSchema } from "./checkSchema.js";
import { compileManifest, templatesOf, type LoadRows } from "./compileManifest.js";
import { ManifestInvalid, type Diagnostic } from "./Diagnostic.js";
import { expandJob, type ExpandState, type ItemSource, type LocalImage, type ReadImage } from "./expandJob.js";
import { expandMatrix } from "./expandMatrix.js";
import { imageOutputs } from "../rules/outputCount.js";
import { formatDiagnostics } from "./formatDiagnostics.js";
import type { JobInfo, LoadedManifest } from "./LoadedManifest.js";
import { DiagnosticSink, Locator, type Place } from "./Locator.js";
import type { JobSpec, ManifestSpec } from "./ManifestSpec.js";
import { comboFolder } from "./outputFolder.js";
import type { PlannedTask, UpstreamItem } from "./PlannedTask.js";
import { readDataFile } from "./readDataFile.js";
import { readRegularFileSync } from "./readRegularFile.js";
import { SourceFile } from "./SourceFile.js";
import { render, type Scope } from "./Template.js";
import { requestHash, taskId } from "./TaskIdentity.js";
import { checkUrls } from "./checkUrls.js";
import { checkInvalidJobTemplates } from "./invalidJobTemplates.js";
import { contentStart, parseYaml } from "./YamlDocument.js";

export interface LoadOptions {
  /** Check remote inputs with HEAD / ranged GET requests (bounded in time). */
  readonly checkUrls?: boolean;
  /** Overrides the manifest's max_tasks. */
  readonly maxTasks?: number;
  /** Base for relative display names (default: the working directory). */
  readonly cwd?: string;
  /** The service's name, which model names are made from (`kling-image-o1`). Default "kling". */
  readonly service?: string;
}

/** Largest local image read (the spec allows 50 MB on the video side). */
const MAX_IMAGE_BYTES = 64 * 1024 * 1024;

export const displayPath = (absolute: string, cwd: string): string => {
  const rel = relative(cwd, absolute);
  return rel !== "" && !rel.startsWith("..") && !isAbsolute(rel) ? rel.split(sep).join("/") : absolute;
};

/** Largest manifest read (a guard far above any real manifest). */
const MAX_MANIFEST_BYTES = 64 * 1024 * 1024;

import { lockfilePathFor } from "./lockfilePath.js";

export { lockfilePathFor };

const invalid = (diagnostics: readonly Diagnostic[]): ManifestInvalid =>
  new ManifestInvalid({ diagnostics, message: `the manifest is invalid:\n\n${formatDiagnostics(diagnostics)}` });

/** Reads local images once each, however many tasks use them. */
const imageReader = (baseDir: string): ReadImage => {
  const cache = new Map<string, LocalImage | { error: string }>();
  return (src, expectSha256) => {
    const file = resolve(baseDir, src);
    const cached = cache.get(file);
    // An upstream result read before it was restored (or edited since) is read again.
    if (cached && (expectSha256 === undefined || ("sha256" in cached && cached.sha256 === expectSha256))) return cached;
    let result: LocalImage | { error: string };
    // Only a regular file, bounded while reading (a FIFO or /dev/zero named as an image).
    const read = readRegularFileSync(file, MAX_IMAGE_BYTES);
    if (read.ok) {
      const bytes = read.bytes;
      const sha256 = createHash("sha256").update(bytes).digest("hex");
      result = {
        sha256,
        base64: bytes.toString("base64"),
        probe: probeImage(bytes),
      };
    } else {
      result = {
        error:
          read.reason === "does not exist"
            ? `does not exist (looked for ${file}); give a path relative to the manifest, or an http(s) URL`
            : read.reason === "is a folder, not a file"
              ? "is a folder, not an image file"
              : read.reason.startsWith("is larger than")
                ? `${read.reason}, far over the service's limit`
                : read.reason,
      };
    }
    cache.set(file, result);
    return result;
  };
};

export const loadManifest = async (file: string, options: LoadOptions = {}): Promise<LoadedManifest> => {
  const cwd = options.cwd ?? process.cwd();
  const absolute = resolve(cwd, file);
  const display = displayPath(absolute, cwd);
  const dir = dirname(absolute);
  const read = readRegularFileSync(absolute, MAX_MANIFEST_BYTES);
  if (!read.ok) {
    const why = read.reason === "is a folder, not a file" ? "is a folder" : read.reason;
    throw invalid([{ severity: "error", file: display, line: 1, col: 1, message: `the manifest ${why}` }]);
  }
  const text = read.bytes.toString("utf8");
  const source = new SourceFile(display, text);
  const parsed = parseYaml(source);
  if (parsed.diagnostics.some((d) => d.severity === "error")) throw invalid(parsed.diagnostics);
  if (parsed.value === null || typeof parsed.value !== "object" || Array.isArray(parsed.value)) {
    throw invalid([source.at(contentStart(parsed.doc), "a manifest is a mapping with version, name and jobs at the top level")]);
  }
  const schemaProblems = checkSchema(parsed.value, parsed.doc, source);
  if (schemaProblems.length) throw invalid([...parsed.diagnostics, ...schemaProblems]);

  const locator = new Locator(source, parsed.doc);
  const sink = new DiagnosticSink(locator);
  for (const d of parsed.diagnostics) sink.push(d);
  const loadRows: LoadRows = (rel, place) => {
    const abs = resolve(dir, rel);
    const result = readDataFile(abs, displayPath(abs, cwd));
    if (result.ok) {
      const data = result.data;
      return { rows: data.rows, places: data.lines.map((line): Place => ({ data: data.source, line })) };
    }
    if (result.reason) sink.add(place, `the data file '${rel}' ${result.reason}`);
    for (const d of result.diagnostics) sink.push(d);
    return undefined;
  };
  const spec = compileManifest(parsed.value as Record<string, unknown>, sink, loadRows, {
    ...(options.maxTasks !== undefined ? { maxTasks: options.maxTasks } : {}),
  });
  const state: ExpandState = {
    ...(options.service !== undefined ? { service: options.service } : {}),
    spec,
    sink,
    readImage: imageReader(dir),
    pos: (place) => locator.pos(place),
    ids: new Map(),
    intents: new Map(),
    dirs: new Map(),
    fieldPlaces: new Map(),
    count: 0,
  };
  const tasks: PlannedTask[] = [];
  for (const job of spec.jobs) {
    if (job.forEach) continue;
    // A job with mistakes found when compiling is not expanded; its other template mistakes are still reported.
    if (spec.invalidJobs.has(job.id)) checkInvalidJobTemplates(spec, job, sink);
    else for (const t of expandJob(state, job, undefined)) tasks.push(t);
  }
  const downstream = checkDownstreamTemplates(spec, tasks, sink, state);
  if (spec.budget) warnUnpriced(spec, tasks, downstream, sink);
  if (options.checkUrls && !sink.hasErrors) {
    for (const d of await checkUrls(tasks, state.fieldPlaces, locator)) sink.push(d);
  }
  if (sink.hasErrors) throw invalid(sink.list());

  return makeLoaded({
    spec,
    absolute,
    dir,
    tasks,
    warnings: sink.list(),
    // The loaded manifest's closures (expandDownstream, withAttempt) keep what they use of
    // the state for the whole run; the duplicate check's ids and the folder indexes of the
    // jobs made here are used by neither (each downstream expansion checks its own), so
    // they are not kept (100,000 tasks: 18 MB of live heap less, 81 to 62.5 MB).
    state: { ...state, ids: new Map(), dirs: new Map() },
    locator,
    downstreamEstimates: downstream.estimates,
  });
};

/** Outputs one task of a job is expected to make (videos 1; images by the one rule in src/rules/outputCount.ts). */
const outputsPerTask = (job: JobSpec): number =>
  job.kind === "video"
    ? 1
    : imageOutputs({
        result_type: job.fields.get("result_type")?.literal,
        n: job.fields.get("n")?.literal,
        series_amount: job.fields.get("series_amount")?.literal,
      }).expected;

/**
 * With a budget, a task whose kind and resolution have no price cannot be counted
 * against it: one warning per job, at the job, saying which prices are missing. A
 * downstream job is judged only when its dry expansion ran (`downstream.judged`): one with
 * a mistake of its own or of its upstream job has no estimate because of that mistake,
 * and no warning follows from an error.
 */
const warnUnpriced = (
  spec: ManifestSpec,
  tasks: readonly PlannedTask[],
  downstream: DownstreamCheck,
  sink: DiagnosticSink,
): void => {
  const missing = new Map<string, { count: number; keys: Set<string> }>();
  for (const t of tasks) {
    if (t.estimate) continue;
    const resolution = String((t.kind === "video" ? t.request.settings?.resolution : t.request.resolution) ?? "?");
    const entry = missing.get(t.job) ?? { count: 0, keys: new Set<string>() };
    entry.count++;
    entry.keys.add(`${t.kind} ${resolution}`);
    missing.set(t.job, entry);
  }
  for (const job of spec.jobs) {
    const entry = missing.get(job.id);
    if (entry) {
      sink.add(
        { path: ["jobs"], key: job.id },
        `a budget is set, but ${entry.count} task(s) of job '${job.id}' have no price (${[...entry.keys].sort().join(", ")}): their cost cannot be counted against the budget; add it under 'prices'`,
        "warning",
      );
    } else if (job.forEach && downstream.judged.has(job.id) && !downstream.estimates.has(job.id)) {
      sink.add(
        { path: ["jobs"], key: job.id },
        `a budget is set, but job '${job.id}' has no price for its kind and resolution: its cost cannot be counted against the budget; add it under 'prices'`,
        "warning",
      );
    }
  }
};

/** What checking the downstream jobs found: one task's estimate per job, and the jobs whose dry expansion ran. */
interface DownstreamCheck {
  readonly estimates: Map<string, { currency: string; amount: string }>;
  readonly judged: Set<string>;
}

/**
 * Downstream tasks are made only once upstream results exist, mid-run. Their templates
 * are filled here with an example upstream item, so a misspelt `item.urll` is found
 * before anything is paid for, not after the upstream job ran. Also when either job has
 * mistakes of its own (every mistake is reported at once); then the job is not expanded.
 */
const checkDownstreamTemplates = (spec: ManifestSpec, tasks: readonly PlannedTask[], sink: DiagnosticSink, state: ExpandState): DownstreamCheck => {
  const estimates = new Map<string, { currency: string; amount: string }>();
  const judged = new Set<string>();
  const byId = new Map(spec.jobs.map((j) => [j.id, j]));
  for (const job of spec.jobs) {
    if (!job.forEach) continue;
    // A job with its own mistakes (found when compiling), or whose upstream job has some,
    // still has its `item` references checked; it is not expanded.
    const up = byId.get(job.forEach.job);
    if (!up) continue;
    const upInvalid = spec.invalidJobs.has(up.id);
    const jobInvalid = spec.invalidJobs.has(job.id) || upInvalid;
    const chained = up.forEach !== undefined;
    const example = tasks.find((t) => t.job === up.id);
    // When no upstream task expanded (an upstream mistake, reported on its own), the
    // upstream matrix still says which values its tasks will carry: a downstream
    // template is checked against those, so one mistake is not reported twice.
    const vars: Record<string, unknown> =
      example?.vars ?? (chained ? {} : (expandMatrix(up.axes, up.include, up.exclude)[0]?.values ?? {}));
    const output = { url: "https://upstream.invalid/example", file: "/upstream/example", sha256: "0".repeat(64), type: up.kind };
    const task = example?.id ?? `${spec.name}-${up.id}-example`;
    const outputs = outputsPerTask(up);
    const item =
      job.forEach.mode === "outputs"
        ? { ...output, index: 1, task, job: up.id, vars }
        : { task, job: up.id, vars, outputs: Array.from({ length: outputs }, (_, index) => ({ ...output, index: index + 1 })) };
    const combo = expandMatrix(job.axes, job.include, job.exclude)[0]?.values ?? {};
    const scope: Scope = (n) => (n in combo ? combo[n] : n === "item" ? item : n === "vars" ? spec.vars : spec.vars[n]);
    const names = () => ["item", "vars", ...Object.keys(spec.vars), ...Object.keys(combo)];
    let clean = true;
    for (const v of templatesOf(job)) {
      const r = render(v.template!, scope, names);
      if (r.ok) continue;
      for (const problem of r.problems) {
        const path = problem.path;
        // Vars of a downstream upstream task are only known at run time; an axis whose data
        // file could not be read is reported there.
        if (chained && path[0] === "item" && path[1] === "vars") continue;
        if (path[0] === "item" && path[1] === "vars" && path[2] !== undefined && up.unreadAxes?.includes(path[2])) continue;
        // Unknown names were reported when the job was compiled.
        if (jobInvalid && scope(path[0]!) === undefined) continue;
        const outOfRange = /has \d+ item\(s\); no index/.test(problem.message);
        clean = false;
        sink.add(
          { path: v.path, textOffset: problem.offset },
          `${problem.message} (checked with an example item of '${up.id}')`,
          outOfRange ? "warning" : "error",
        );
      }
    }
    if (jobInvalid) continue;
    if (!clean) continue;
    // A dry expansion with the example item runs the spec's rules on the job's shape
    // (a rule broken for every item is found now) and gives one task's cost for plan.
    const dry: ExpandState = {
      ...state,
      sink: new DiagnosticSink(state.sink.locator),
      ids: new Map(),
      intents: new Map(),
      dirs: new Map(),
      fieldPlaces: new Map(),
      count: 0,
    };
    const source: ItemSource = {
      item,
      vars: { job: up.id, task, vars },
      urlToContent: new Map(),
      folder: "example",
      upstream: { job: up.id, task, output: 0 },
    };
    const made = expandJob(dry, { ...job, axes: [], include: [combo], exclude: [] }, [source]);
    let found = 0;
    for (const d of dry.sink.list()) {
      // The example has no real file behind it: only problems of the job's own values count.
      if (d.severity !== "error" || d.message.includes(output.file)) continue;
      sink.push({ ...d, message: `${d.message.replace(/ \[task: .*\]$/, "")} (found with an example item of '${up.id}')` });
      found++;
    }
    if (found === 0) judged.add(job.id);
    const estimate = made[0]?.estimate;
    if (estimate) estimates.set(job.id, estimate);
  }
  return { estimates, judged };
};

const makeLoaded = (args: {
  spec: ManifestSpec;
  absolute: string;
  dir: string;
  tasks: PlannedTask[];
  warnings: Diagnostic[];
  state: ExpandState;
  locator: Locator;
  downstreamEstimates: ReadonlyMap<string, { currency: string; amount: string }>;
}): LoadedManifest => {
  const { spec, state, locator } = args;
  const byId = new Map(spec.jobs.map((j) => [j.id, j]));
  const jobs: JobInfo[] = spec.jobs.map((j) => ({
    id: j.id,
    kind: j.kind,
    ...(j.forEach ? { upstream: { job: j.forEach.job, mode: j.forEach.mode } } : {}),
    retryFailed: j.retryFailed,
    ...(j.retryContentRisk ? { retryContentRisk: true } : {}),
    axes: [...new Set([...j.axes.map((a) => a.name), ...j.include.flatMap((i) => Object.keys(i))])],
    ...(j.review ? { review: j.review } : {}),
    ...(j.retakeRejected ? { retakeRejected: j.retakeRejected } : {}),
    source: locator.pos({ path: ["jobs"], key: j.id }),
  }));
  const jobSpec = (id: string): JobSpec => {
    const j = byId.get(id);
    if (!j) throw new Error(`no job '${id}' in the manifest`);
    return j;
  };

  // Folders of every task made so far, so a downstream task's folder can be named after
  // its upstream task's (unique per job), whichever call or order made them.
  let dirOf: Map<string, string> | undefined;
  const dirs = (): Map<string, string> => (dirOf ??= new Map(args.tasks.map((t) => [t.id, t.dir])));
  const upstreamFolder = (task: string, vars: Record<string, unknown>): string => {
    const dir = dirs().get(task);
    if (dir !== undefined) return dir.split("/").slice(1).join("_");
    // Unknown here (made by an earlier process): its values, plus a bit of its id for uniqueness.
    return `${comboFolder(vars)}-${task.slice(-6)}`;
  };

  const expandDownstream = (jobId: string, items: readonly UpstreamItem[]): PlannedTask[] => {
    const job = jobSpec(jobId);
    if (!job.forEach) throw new Error(`job '${jobId}' has no for_each`);
    const sources: ItemSource[] = [];
    const contentOf = (it: UpstreamItem): [string, string][] => [
      [it.url, `sha256:${it.sha256}`],
      [it.file, `sha256:${it.sha256}`],
    ];
    // A file in the outputs folder stands for the recorded result only while it holds its bytes; else its link does (expandJob).
    const linkOf = (it: UpstreamItem): [string, string][] => (it.file !== "" && it.file !== it.url ? [[it.file, it.url]] : []);
    if (job.forEach.mode === "outputs") {
      for (const it of items) {
        sources.push({
          // `item.index` is 1-based, like the numbers in file and folder names (`image-1.png`).
          item: { url: it.url, file: it.file, sha256: it.sha256, index: it.index + 1, type: it.type, task: it.task, job: it.job, vars: it.vars },
          vars: { job: it.job, task: it.task, index: it.index, vars: it.vars },
          urlToContent: new Map(contentOf(it).filter(([k]) => k !== "")),
          fileLinks: new Map(linkOf(it)),
          folder: `${upstreamFolder(it.task, it.vars)}-${it.index + 1}`,
          upstream: { job: it.job, task: it.task, output: it.index },
        });
      }
    } else {
      const groups = new Map<string, UpstreamItem[]>();
      for (const it of items) {
        const list = groups.get(it.task);
        if (list) list.push(it);
        else groups.set(it.task, [it]);
      }
      for (const [task, outs] of groups) {
        const sorted = [...outs].sort((a, b) => a.index - b.index);
        const first = sorted[0]!;
        sources.push({
          item: {
            task,
            job: first.job,
            vars: first.vars,
            outputs: sorted.map((o) => ({ url: o.url, file: o.file, sha256: o.sha256, index: o.index + 1, type: o.type })),
          },
          vars: { job: first.job, task, vars: first.vars },
          urlToContent: new Map(sorted.flatMap(contentOf).filter(([k]) => k !== "")),
          fileLinks: new Map(sorted.flatMap(linkOf)),
          folder: upstreamFolder(task, first.vars),
          upstream: { job: first.job, task, output: -1 },
        });
      }
    }
    const sink = new DiagnosticSink(locator);
    const local: ExpandState = { ...state, sink, ids: new Map(), dirs: new Map(), count: 0 };
    const made = expandJob(local, job, sources, { dropDuplicates: true });
    if (sink.hasErrors) throw invalid(sink.list().filter((d) => d.severity === "error"));
    for (const t of made) dirs().set(t.id, t.dir);
    return made;
  };

  const withAttempt = (task: PlannedTask, attempt: number): PlannedTask => {
    const intent = state.intents.get(task.id);
    if (intent === undefined) throw new Error(`task ${task.id} was not made by this manifest`);
    const hash = requestHash(intent, task.take, attempt);
    const id = taskId(spec.name, task.job, hash);
    state.intents.set(id, intent);
    dirs().set(id, task.dir);
    if (task.kind === "video") {
      return { ...task, id, requestHash: hash, attempt, request: { ...task.request, options: { ...task.request.options, external_task_id: id } } };
    }
    return { ...task, id, requestHash: hash, attempt, request: { ...task.request, external_task_id: id } };
  };

  /** Lower-cased folders of the manifest's tasks, per job: a new take's folder never clashes with one (made at the first new take). */
  let folderSets: Map<string, Set<string>> | undefined;
  const takenFolder = (job: string, dir: string): boolean => {
    if (folderSets === undefined) {
      folderSets = new Map();
      for (const t of args.tasks) {
        const set = folderSets.get(t.job) ?? new Set<string>();
        set.add(t.dir.toLowerCase());
        folderSets.set(t.job, set);
      }
    }
    return folderSets.get(job)?.has(dir.toLowerCase()) === true;
  };
  const withTake = (task: PlannedTask, take: number): PlannedTask => {
    const intent = state.intents.get(task.id);
    if (intent === undefined) throw new Error(`task ${task.id} was not made by this manifest`);
    const hash = requestHash(intent, take, 1);
    const id = taskId(spec.name, task.job, hash);
    state.intents.set(id, intent);
    const several = jobSpec(task.job).take > 1 && task.dir.endsWith(`/take-${task.take}`);
    const beside = several ? `${task.dir.slice(0, -`/take-${task.take}`.length)}/take-${take}` : `${task.dir}-take-${take}`;
    const dir = takenFolder(task.job, beside) ? `${beside}-${id.slice(-6)}` : beside;
    dirs().set(id, dir);
    if (task.kind === "video") {
      return { ...task, id, requestHash: hash, take, attempt: 1, dir, request: { ...task.request, options: { ...task.request.options, external_task_id: id } } };
    }
    return { ...task, id, requestHash: hash, take, attempt: 1, dir, request: { ...task.request, external_task_id: id } };
  };

  const tasksByJob = new Map<string, PlannedTask[]>();
  for (const t of args.tasks) {
    const list = tasksByJob.get(t.job);
    if (list) list.push(t);
    else tasksByJob.set(t.job, [t]);
  }

  const expectedTaskCount = (job: JobSpec, counts?: ReadonlyMap<string, number>): number => {
    const combos = expandMatrix(job.axes, job.include, job.exclude).length * job.take;
    if (!job.forEach) return combos;
    const up = jobSpec(job.forEach.job);
    if (!up.forEach) {
      const upTasks = (tasksByJob.get(up.id) ?? []).filter((t) => t.attempt === 1);
      if (job.forEach.mode === "tasks") return upTasks.length * combos;
      let outputs = 0;
      for (const t of upTasks) outputs += counts?.get(t.id) ?? t.slots;
      return outputs * combos;
    }
    const upCount = expectedTaskCount(up);
    return (job.forEach.mode === "tasks" ? upCount : upCount * outputsPerTask(up)) * combos;
  };
  const perItem = new Map<string, number>();
  const downstreamPerItem = (jobId: string): number => {
    let n = perItem.get(jobId);
    if (n === undefined) {
      const job = jobSpec(jobId);
      n = expandMatrix(job.axes, job.include, job.exclude).length * job.take;
      perItem.set(jobId, n);
    }
    return n;
  };
  const expectedDownstreamCount: LoadedManifest["expectedDownstreamCount"] = (jobId, counts) => {
    const map = counts === undefined ? undefined : counts instanceof Map ? counts : new Map(Object.entries(counts));
    return expectedTaskCount(jobSpec(jobId), map as ReadonlyMap<string, number> | undefined);
  };

  return {
    file: args.absolute,
    dir: args.dir,
    name: spec.name,
    // An object-store URL (s3://bucket/prefix) is kept as written; a folder is made absolute.
    outputsDir: /^s3:\/\//i.test(spec.outputs) ? spec.outputs : resolve(args.dir, spec.outputs),
    lockfilePath: lockfilePathFor(args.absolute),
    concurrency: spec.concurrency,
    ...(spec.budget ? { budget: spec.budget } : {}),
    ...(spec.prices ? { prices: spec.prices } : {}),
    jobs,
    tasks: args.tasks,
    warnings: args.warnings,
    expandDownstream,
    withAttempt,
    withTake,
    expectedDownstreamCount,
    downstreamPerItem,
    downstreamEstimate: (job) => args.downstreamEstimates.get(job),
  };
};
