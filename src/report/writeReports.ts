// Writes the reports of a lockfile into the outputs folder (results.jsonl, billing.csv,
// billing.json, billing.md, report.html), each atomically, a task.json beside each
// task's files and a metadata.jsonl in each job's folder, and appends the Markdown
// summary (with where the report is, after the caller's head: a run's outcome) to $GITHUB_STEP_SUMMARY when set. The content
// comes from the pure formatters beside it; the request behind each task comes from the
// compiled manifest when the caller passes it. The large reports are written from their
// lines made one at a time as they are written (writeFileAtomicChunks), one file after the
// other, so a report of 200,000 tasks never holds a report's whole text or all its rows.

import { createHash, randomBytes } from "node:crypto";
import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { appendFile, mkdir, readFile, rm } from "node:fs/promises";
import { basename, dirname, join, relative, sep } from "node:path";
import { outsideProblem } from "../fs/insidePath.js";
import type { DiffOptions } from "../plan/diffPlan.js";
import type { LoadedManifest } from "../manifest/LoadedManifest.js";
import type { PlannedTask } from "../manifest/PlannedTask.js";
import type { LockFile } from "../state/LockFile.js";
import { stableJson } from "../state/stableJson.js";
import { writeFileAtomic, writeFileAtomicChunks } from "../state/writeFileAtomic.js";
import { billingCsvRows } from "./billingCsv.js";
import { type DeletionWarning, formatBillingMarkdown } from "./billingMarkdown.js";
import { deletionTime, nearingDeletion } from "./nearingDeletion.js";
import { datasetMetadata } from "./datasetMetadata.js";
import { downstreamPlanned } from "./downstreamPlanned.js";
import { plannedById } from "./provenance.js";
import { reportData, reportFrame } from "./reportData.js";
import { formatReportHtml, reportHtmlParts } from "./reportHtml.js";
import { earlierRecords, provenanceOf, resultLine, resultsJsonlLines } from "./resultsJsonl.js";
import { retryAttempts } from "./retryAttempts.js";
import { type Standings, standingsFor } from "./standing.js";
import { lostMarkdown, refusedChargesMarkdown, type RefusedChargeLine } from "./lostMarkdown.js";
import { markdownCode, markdownText } from "./markdownText.js";
import { lostResults, resultKey, scanResults, statesOf, type ResultsAt, type SeenFile } from "../outputs/scanResults.js";
import { type BillingSummary, summarizeBilling } from "./summarizeBilling.js";
import { isoTime } from "../protocol/UnixMs.js";

import { REPORT_FILES, REPORT_SOURCE_FILE } from "./reportFiles.js";

export { REPORT_FILES, REPORT_SOURCE_FILE };
/** Beside each task's files. */
export const TASK_SIDECAR = "task.json";
/** In each job's folder (Hugging Face imagefolder / videofolder metadata). */
export const JOB_METADATA = "metadata.jsonl";

/** What the reports use of the compiled manifest (a LoadedManifest is one). */
export interface ReportManifest {
  /** The tasks the manifest makes now: their requests and places go into the reports. */
  readonly tasks: readonly PlannedTask[];
  readonly budget?: { readonly max: string; readonly currency: string };
  /** With these, downstream jobs are expanded again from the recorded upstream files (downstreamPlanned.ts). */
  readonly jobs?: readonly Pick<LoadedManifest["jobs"][number], "id" | "upstream">[];
  readonly expandDownstream?: LoadedManifest["expandDownstream"];
  /** With this, a retry attempt's record carries the request it was sent with (retryAttempts.ts). */
  readonly withAttempt?: LoadedManifest["withAttempt"];
}

export interface ReportInput {
  readonly lock: LockFile;
  readonly outputsDir: string;
  readonly manifestName: string;
  readonly env?: NodeJS.ProcessEnv;
  /** Unix ms, for the deletion warnings. Default: now. */
  readonly now?: number;
  /** Days before deletion a result not yet downloaded is flagged. Default 5. */
  readonly warnDays?: number;
  /**
   * Write the files even when they were last written from this very lockfile content
   * (the `report` command does). Otherwise a rerun that changed nothing keeps them.
   */
  readonly force?: boolean;
  /** The lockfile is an emulated run's: billing.md and the step summary say so first. */
  readonly emulated?: boolean;
  /**
   * The compiled manifest: current tasks get their request (`request`) and manifest
   * place (`source`) in results.jsonl, task.json, metadata.jsonl and report.html, and
   * the report shows spend against the budget. Without it those fields are left out.
   */
  readonly manifest?: ReportManifest;
  /**
   * Tasks expanded during the run that the manifest's `tasks` lack (downstream jobs, retry
   * attempts). Default: the downstream jobs expanded again from the lockfile's upstream files.
   */
  readonly plannedTasks?: readonly PlannedTask[];
  /** false: do not look for the results at all. */
  readonly scanResults?: boolean;
  /** Where the results are looked for, when not in outputsDir: a store's listing (outputsDir is then its staging folder). */
  readonly resultsAt?: ResultsAt;
  /**
   * Files the caller already saw in outputsDir with their recorded size (a run: its start
   * check and its downloads), so they are not stat'ed a second time; the others are.
   */
  readonly seen?: SeenFile;
  /** A line the step summary adds (outputs awaiting review: `stills: 12 awaiting review; ...`). */
  readonly stepSummaryNote?: string;
  /** Charges the run refused (cannot be true): listed apart in billing.md, in no sum. */
  readonly refusedCharges?: readonly RefusedChargeLine[];
  /** Markdown put first in $GITHUB_STEP_SUMMARY, before the billing tables (a run's outcome). */
  readonly stepHead?: string;
  /**
   * The tasks' standings (standing.ts) against `manifest`, when the caller has them for
   * this very lockfile content (a run that changed nothing keeps those of its start):
   * spares planning 100,000 tasks a second time. Default: worked out here.
   */
  readonly standings?: Standings;
  /**
   * The manifest's review decisions (src/review/manifestDecisions.ts), for the standings
   * worked out here: a task made of an approved output is current, not orphaned.
   */
  readonly reviews?: DiffOptions["reviews"];
}

export interface ReportOutput {
  /** Absolute paths of the files written, in REPORT_FILES order. */
  readonly files: string[];
  readonly summary: BillingSummary;
  readonly deletions: readonly DeletionWarning[];
  /** The step summary file appended to, when $GITHUB_STEP_SUMMARY was set. */
  readonly stepSummary?: string;
  /** False when the files were already current and left as they were. */
  readonly written: boolean;
}

/** Heads the Markdown summary of an emulated run, so a CI job summary cannot pass it off as real spend. */
export const EMULATED_BANNER = "> **Emulated run** (`--emulate`): nothing was sent to the service and nothing was charged.\n\n";


/** `ids` sorted (in place): a lockfile's tasks come in the file's order, by id, so most often it only needs looking at. */
const inIdOrder = (ids: string[]): string[] => {
  for (let i = 1; i < ids.length; i++) if (ids[i - 1]! > ids[i]!) return ids.sort();
  return ids;
};

/**
 * What the reports are made from: every task's id, state, ids and counts and its last
 * update (every change to a task moves `updated_at`) and whether its request is known
 * (`known`: the compiled manifest makes it); what moves with the date (the deletion warnings,
 * a missing result's state) is in `extra`, not the date itself, so a rerun on the next day
 * with nothing new writes nothing. Much cheaper than formatting the reports themselves.
 */
export const reportSource = (lock: LockFile, extra = "", known?: ReadonlyMap<string, unknown>): string => {
  const hash = createHash("sha256");
  hash.update(`${lock.name}\n${extra}\n${known ? "known" : "-"}\n`);
  // Hashed in chunks (one update per task cost more than the lines themselves), each chunk
  // joined once from its lines (a string grown line by line is flattened again to hash).
  const ids = inIdOrder(Object.keys(lock.tasks));
  const lines: string[] = [];
  let length = 0;
  for (let i = 0; i < ids.length; i++) {
    const id = ids[i]!;
    const t = lock.tasks[id]!;
    const line = `${id}\0${t.state}\0${t.updated_at}\0${t.task_id ?? ""}\0${t.outputs.length}\0${t.billing.length}\0${t.dir}${known ? (known.has(id) ? "\0k" : "\0-") : ""}\n`;
    lines.push(line);
    length += line.length;
    if (length >= 65_536) {
      hash.update(lines.join(""));
      lines.length = 0;
      length = 0;
    }
  }
  hash.update(lines.join(""));
  return hash.digest("hex");
};

/** Results not downloaded yet whose deletion at the service is near (or past), by id. */
export const deletionWarnings = (lock: LockFile, now: number, warnDays = 5): DeletionWarning[] => {
  const out: DeletionWarning[] = [];
  for (const id in lock.tasks) {
    const task = lock.tasks[id]!;
    if (nearingDeletion(task, now, warnDays)) out.push({ id, job: task.job, deletesAt: deletionTime(task)! });
  }
  return out.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
};

/** Temp names of this process's small writes: a counter after a random prefix (no random draw per file). */
const tempTag = `${process.pid}.${randomBytes(4).toString("hex")}`;
let tempCount = 0;

/**
 * Writes only when the bytes differ, so a rerun does not touch 10,000 unchanged sidecars;
 * by rename (never a half-written file) but without fsync: a sidecar lost to a power cut
 * is written again by the next run or `omnibatch report`. Synchronous: a small file's
 * read, write and rename go to the page cache, and each awaited call cost a round trip
 * through the thread pool and a FileHandle (20,000 sidecars: about 0.3 ms of CPU each).
 */
const writeIfChanged = (path: string, text: string): void => {
  let old: string | undefined;
  try {
    old = readFileSync(path, "utf8");
  } catch {
    if (!existsSync(dirname(path))) return; // the folder was moved away: nothing to describe
  }
  if (old === text) return;
  const temp = join(dirname(path), `.${basename(path)}.${tempTag}.${++tempCount}.tmp`);
  writeFileSync(temp, text);
  try {
    renameSync(temp, path);
  } catch (error) {
    rmSync(temp, { force: true });
    throw error;
  }
};

/** Sidecars written between two turns of the event loop (the run lock's heartbeat beats between them). */
const SIDECARS_PER_TURN = 256;

/** The step summary's line about the report: a CI summary cannot link a file, so it says where it is. */
export const reportLink = (reportPath: string, cwd = process.cwd()): string => {
  const shown = relative(cwd, reportPath).split(sep).join("/");
  return `**Report:** ${markdownCode(shown.startsWith("..") ? reportPath : shown)}: the contact sheets of every job; open it from the outputs folder (or the uploaded artifact) in a browser.\n`;
};

export const writeReports = async (input: ReportInput): Promise<ReportOutput> => {
  const now = input.now ?? Date.now();
  const lock = input.lock.name === input.manifestName ? input.lock : { ...input.lock, name: input.manifestName };
  // Made only when asked for: a rerun whose reports are current (100,000 tasks) needs none of them.
  let summaryMade: BillingSummary | undefined;
  let deletionsMade: DeletionWarning[] | undefined;
  const summaryOf = (): BillingSummary => (summaryMade ??= summarizeBilling(lock));
  const deletionsOf = (): DeletionWarning[] => (deletionsMade ??= deletionWarnings(lock, now, input.warnDays));
  // Each recorded result's state (issue 16): lost ones are counted apart and named.
  // For a store, in its listing (the staging folder the reports are written to holds no results).
  const scanned = input.scanResults === false ? [] : scanResults(lock.tasks, input.resultsAt ?? input.outputsDir, now, undefined, input.resultsAt ? undefined : input.seen);
  const lost = lostResults(scanned);
  const markdownOf = (): string => `${input.emulated ? EMULATED_BANNER : ""}${formatBillingMarkdown(summaryOf(), deletionsOf())}${lostMarkdown(lost)}${refusedChargesMarkdown(input.refusedCharges ?? [])}`;
  await mkdir(input.outputsDir, { recursive: true });
  const files = REPORT_FILES.map((name) => join(input.outputsDir, name));
  const sourcePath = join(input.outputsDir, REPORT_SOURCE_FILE);
  const m = input.manifest;
  const later =
    input.plannedTasks ??
    (m?.jobs && m.expandDownstream ? downstreamPlanned({ jobs: m.jobs, expandDownstream: m.expandDownstream }, lock, input.outputsDir) : undefined);
  const base = m || later ? plannedById(m?.tasks, later) : undefined;
  // Retry attempts have ids of their own: each is the manifest's task sent again.
  const retries = base && m?.withAttempt ? retryAttempts(lock, base, m.withAttempt) : [];
  const planned = base && retries.length > 0 ? plannedById([...base.values()], retries) : base;
  const standing = input.standings ?? standingsFor(lock, input.manifest, input.reviews);
  const standingDigest = createHash("sha256")
    .update([...standing.of].map(([id, s]) => `${id}=${s}`).sort().join("\n"))
    .digest("hex");
  // Which tasks have a known request, the budget and the mark: they change the reports too.
  // Results missing from the folder change the reports too (their states).
  const absent = createHash("sha256")
    .update(scanned.filter((r) => r.verdict.state !== "present").map((r) => `${resultKey(r.id, r.index, r.variant)}\u0000${r.verdict.state}`).join("\n"))
    .digest("hex");
  // The deletion warnings move with the date: the ids warned about, not the day, are hashed.
  const warned = deletionsOf().map((d) => d.id).join(",");
  const source = reportSource(lock, `${warned}\n${standingDigest}\n${input.manifest?.budget ? `${input.manifest.budget.max} ${input.manifest.budget.currency}` : "-"}\n${input.emulated === true}\n6\n${absent}${input.refusedCharges?.length ? `\nrefused ${JSON.stringify(input.refusedCharges)}` : ""}`, planned);
  const current =
    input.force !== true &&
    files.every((file) => existsSync(file)) &&
    (await readFile(sourcePath, "utf8").then((text) => text.trim() === source, () => false));
  if (!current) {
    // Tasks the manifest no longer makes keep the request the last results.jsonl gave them.
    const missing = new Set(Object.keys(lock.tasks).filter((id) => !planned?.has(id) && lock.tasks[id]!.pruned_at === undefined));
    const earlier = missing.size ? earlierRecords(await readFile(files[0]!, "utf8").catch(() => ""), missing) : new Map();
    // Each result's state by key: only reports being written need it.
    const states = statesOf(scanned);
    const prov = provenanceOf(lock, planned, { standing, earlier });
    const summary = summaryOf();
    const deletions = deletionsOf();
    // Each file's parts, made only as it is written.
    const contents: Record<(typeof REPORT_FILES)[number], () => Iterable<string>> = {
      "results.jsonl": () => resultsJsonlLines(lock, now, prov, states),
      "billing.csv": () => billingCsvRows(lock),
      "billing.json": () => [
        stableJson({
          ...summary,
          nearing_deletion: deletions.map((d) => ({ id: d.id, job: d.job, deletes_at: isoTime(d.deletesAt) })),
        }),
      ],
      "billing.md": () => [markdownOf()],
      "report.html": () =>
        reportHtmlParts(
          reportFrame({ lock, prov, summary, now, emulated: input.emulated === true, ...(input.manifest?.budget ? { budget: input.manifest.budget } : {}), lost }),
        ),
    };
    await rm(sourcePath, { force: true });
    for (const [i, name] of REPORT_FILES.entries()) await writeFileAtomicChunks(files[i]!, contents[name]());
    // Sidecars only where files were downloaded: a folder copied elsewhere still says what made it.
    const withFiles = Object.keys(lock.tasks).filter(
      (id) => lock.tasks[id]!.pruned_at === undefined && lock.tasks[id]!.outputs.some((o) => o.path !== undefined),
    );
    for (const [k, id] of withFiles.entries()) {
      if (k > 0 && k % SIDECARS_PER_TURN === 0) await new Promise<void>((resolve) => setImmediate(resolve));
      const task = lock.tasks[id]!;
      // Never outside the outputs folder, whatever a record says (its lockfile was checked when read: fs/insidePath.ts).
      if (outsideProblem(task.dir) !== undefined) continue;
      writeIfChanged(join(input.outputsDir, ...task.dir.split("/"), TASK_SIDECAR), `${JSON.stringify(resultLine(id, task, now, prov, states), null, 2)}\n`);
    }
    for (const [folder, text] of datasetMetadata(lock, prov)) writeIfChanged(join(input.outputsDir, folder, JOB_METADATA), text);
    // Written last: a kill before this line leaves the reports to be written again.
    await writeFileAtomic(sourcePath, `${source}\n`);
  }
  const stepSummary = input.env?.GITHUB_STEP_SUMMARY;
  if (stepSummary) {
    const markdown = markdownOf();
    // A head (the run's outcome) already says whether the run was emulated.
    const billingPart = input.stepHead !== undefined && input.emulated && markdown.startsWith(EMULATED_BANNER) ? markdown.slice(EMULATED_BANNER.length) : markdown;
    const note = input.stepSummaryNote ? `\n**${markdownText(input.stepSummaryNote)}**\n` : "";
    await appendFile(stepSummary, `${input.stepHead ?? ""}${billingPart}\n${reportLink(files[REPORT_FILES.indexOf("report.html")]!)}\n${note}`);
  }
  return {
    files,
    get summary() {
      return summaryOf();
    },
    get deletions() {
      return deletionsOf();
    },
    written: !current,
    ...(stepSummary ? { stepSummary } : {}),
  };
};

/**
 * report.html's page for a lockfile, as writeReports would write it now (the review page
 * serves this, with its own controls added).
 */
export const reportPage = (lock: LockFile, manifest: ReportManifest, outputsDir: string, emulated: boolean, now = Date.now()): string => {
  const later = manifest.jobs && manifest.expandDownstream ? downstreamPlanned({ jobs: manifest.jobs, expandDownstream: manifest.expandDownstream }, lock, outputsDir) : undefined;
  const prov = provenanceOf(lock, plannedById(manifest.tasks, later));
  return formatReportHtml(reportData({ lock, prov, summary: summarizeBilling(lock), now, emulated, ...(manifest.budget ? { budget: manifest.budget } : {}) }));
};
