// Writes the reports of a lockfile into the outputs folder (results.jsonl, billing.csv,
// billing.json, billing.md), each atomically, and appends the Markdown summary to
// $GITHUB_STEP_SUMMARY when set. The content comes from the pure formatters beside it.

import { appendFile, mkdir } from "node:fs/promises";
import { join } from "node:path";
import type { LockFile } from "../state/LockFile.js";
import { stableJson } from "../state/stableJson.js";
import { writeFileAtomic } from "../state/writeFileAtomic.js";
import { formatBillingCsv } from "./billingCsv.js";
import { type DeletionWarning, formatBillingMarkdown } from "./billingMarkdown.js";
import { deletionTime, nearingDeletion } from "./nearingDeletion.js";
import { formatResultsJsonl } from "./resultsJsonl.js";
import { type BillingSummary, summarizeBilling } from "./summarizeBilling.js";

export const REPORT_FILES = ["results.jsonl", "billing.csv", "billing.json", "billing.md"] as const;

export interface ReportInput {
  readonly lock: LockFile;
  readonly outputsDir: string;
  readonly manifestName: string;
  readonly env?: NodeJS.ProcessEnv;
  /** Unix ms, for the deletion warnings. Default: now. */
  readonly now?: number;
  /** Days before deletion a result not yet downloaded is flagged. Default 5. */
  readonly warnDays?: number;
}

export interface ReportOutput {
  /** Absolute paths of the files written, in REPORT_FILES order. */
  readonly files: string[];
  readonly summary: BillingSummary;
  readonly deletions: readonly DeletionWarning[];
  /** The step summary file appended to, when $GITHUB_STEP_SUMMARY was set. */
  readonly stepSummary?: string;
}

/** Results not downloaded yet whose deletion at the service is near (or past), by id. */
export const deletionWarnings = (lock: LockFile, now: number, warnDays = 5): DeletionWarning[] =>
  Object.keys(lock.tasks)
    .sort()
    .flatMap((id) => {
      const task = lock.tasks[id]!;
      return nearingDeletion(task, now, warnDays) ? [{ id, job: task.job, deletesAt: deletionTime(task)! }] : [];
    });

export const writeReports = async (input: ReportInput): Promise<ReportOutput> => {
  const now = input.now ?? Date.now();
  const lock = input.lock.name === input.manifestName ? input.lock : { ...input.lock, name: input.manifestName };
  const summary = summarizeBilling(lock);
  const deletions = deletionWarnings(lock, now, input.warnDays);
  const markdown = formatBillingMarkdown(summary, deletions);
  const contents: Record<(typeof REPORT_FILES)[number], string> = {
    "results.jsonl": formatResultsJsonl(lock, now),
    "billing.csv": formatBillingCsv(lock),
    "billing.json": stableJson({
      ...summary,
      nearing_deletion: deletions.map((d) => ({ id: d.id, job: d.job, deletes_at: new Date(d.deletesAt).toISOString() })),
    }),
    "billing.md": markdown,
  };
  await mkdir(input.outputsDir, { recursive: true });
  const files: string[] = [];
  for (const name of REPORT_FILES) {
    const path = join(input.outputsDir, name);
    await writeFileAtomic(path, contents[name]);
    files.push(path);
  }
  const stepSummary = input.env?.GITHUB_STEP_SUMMARY;
  if (stepSummary) await appendFile(stepSummary, `${markdown}\n`);
  return { files, summary, deletions, ...(stepSummary ? { stepSummary } : {}) };
};
