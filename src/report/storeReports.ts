// The reports of a run whose outputs are in a store: written by the same writer into a
// local staging folder, then each file uploaded beside the media unless the store holds
// the same bytes already (its ETag is the MD5 of a small object), so the prefix is a
// complete, browsable result set and an unchanged rerun uploads nothing.

import { mkdir, mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { appendFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, relative, sep } from "node:path";
import { downstreamPlanned } from "./downstreamPlanned.js";
import { REPORT_FILES, writeReports, type ReportInput, type ReportOutput } from "./writeReports.js";
import type { StoreSink } from "../outputs/StoreSink.js";

const contentTypes: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".json": "application/json",
  ".jsonl": "application/x-ndjson",
  ".csv": "text/csv; charset=utf-8",
  ".md": "text/markdown; charset=utf-8",
};

const filesUnder = async (dir: string): Promise<string[]> => {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries.filter((e) => e.isFile()).map((e) => join(e.parentPath ?? (e as unknown as { path: string }).path, e.name));
};

export const writeReportsToStore = async (input: Omit<ReportInput, "outputsDir">, sink: StoreSink): Promise<ReportOutput & { readonly uploaded: number }> => {
  const stage = await mkdtemp(join(tmpdir(), "omnibatch-reports-"));
  try {
    const { GITHUB_STEP_SUMMARY: stepSummary, ...env } = input.env ?? {};
    // The writer describes only folders that exist (a folder moved away has nothing to
    // describe): here every result's folder exists, in the store.
    const folders = new Set<string>();
    // for...in: records decoded as read (a run's end) are held one at a time.
    for (const id in input.lock.tasks) for (const o of input.lock.tasks[id]!.outputs) if (o.path) folders.add(dirname(join(stage, ...o.path.split("/"))));
    for (const folder of folders) if (folder.startsWith(stage + sep)) await mkdir(folder, { recursive: true });
    // The results' states from the store's listing (listed once per run, kept up to date by its writes).
    // Downstream requests are expanded again from the store's results (`item.file` is then the
    // result's link, itemFile.ts), not from the staging folder, which holds none.
    const m = input.manifest;
    const plannedTasks = input.plannedTasks ?? (m?.jobs && m.expandDownstream ? downstreamPlanned({ jobs: m.jobs, expandDownstream: m.expandDownstream }, input.lock, sink.where) : undefined);
    const out = await writeReports({ ...input, env, outputsDir: stage, force: true, resultsAt: await sink.listing(), ...(plannedTasks ? { plannedTasks } : {}) });
    let uploaded = 0;
    const files = await filesUnder(stage);
    // The media first, the pages that link them after: report.html last of all.
    files.sort((a, b) => Number(a.endsWith("report.html")) - Number(b.endsWith("report.html")));
    let next = 0;
    const worker = async () => {
      while (next < files.length) {
        const file = files[next++]!;
        const rel = relative(stage, file).split(sep).join("/");
        if (rel.startsWith(".")) continue; // the writer's own bookkeeping
        const ext = /\.[a-z]+$/.exec(rel)?.[0] ?? "";
        if (await sink.putFile(rel, file, contentTypes[ext])) uploaded++;
      }
    };
    await Promise.all(Array.from({ length: Math.min(8, files.length) }, worker));
    const url = (name: string) => `${sink.where}/${name}`;
    if (stepSummary) {
      const markdown = await readFile(join(stage, "billing.md"), "utf8");
      await appendFile(stepSummary, `${markdown}\n**Report:** \`${url("report.html")}\`: the contact sheets of every job, in the outputs store (\`omnibatch pull\` copies the results to a folder).\n\n`);
    }
    return { ...out, files: REPORT_FILES.map(url), uploaded, ...(stepSummary ? { stepSummary } : {}) };
  } finally {
    await rm(stage, { recursive: true, force: true });
  }
};
