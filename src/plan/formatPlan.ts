// The plan as people read it, like a change set: per job, one line per task that
// changes (a bounded number of them) and the unchanged summed up (`--all` lists them
// too), then a table of counts per job and in total, the estimated cost per currency,
// and, when the manifest has a budget, what the work left would do to it.

import { entryFiles, type PlanCounts, type PlanEntry, type PlanResult } from "./diffPlan.js";
import { describeVars } from "../manifest/outputFolder.js";
import { describeOutlook, type BudgetOutlook } from "./budgetOutlook.js";

/** Lines listed per job and mark before "... and N more". */
const LIST_LIMIT = 25;

const MARKS = ["+", "~", "=", "-", "…"] as const;

/** `stills/A-1_studio/A-1-studio-1.png`, or `dir/{a.png, b.png, … 4 files}` for several. */
const describeFiles = (files: readonly string[]): string => {
  const cut = files[0]!.lastIndexOf("/");
  const dir = files[0]!.slice(0, cut);
  if (files.length === 1) return files[0]!;
  const names = files.map((f) => f.slice(cut + 1));
  const shown = names.length > 3 ? [...names.slice(0, 2), `… ${names.at(-1)!}`] : names;
  return `${dir}/{${shown.join(", ")}}`;
};

const line = (e: PlanEntry): string => {
  if (e.mark === "…") {
    return `  … ${e.count} task(s) of ${e.job}, ${e.note ?? "waiting on upstream"}${e.estimate ? `  (~${e.estimate.amount} ${e.estimate.currency})` : ""}`;
  }
  const extra: string[] = [];
  if (e.inFlight) extra.push(`in flight (${e.state})`);
  else if (e.mark === "=" && e.state && !e.reused) extra.push(e.state);
  if (e.mark === "-" && e.state) {
    extra.push(e.supersededBy ? `${e.state}, superseded by ${e.supersededBy}` : `${e.state}, orphaned: no longer in the manifest`);
  }
  if (e.replaces) extra.push(`replaces ${e.replaces.join(", ")}`);
  if (e.note) extra.push(e.note);
  if (e.estimate) extra.push(`~${e.estimate.amount} ${e.estimate.currency}`);
  const files = entryFiles(e);
  const where = files?.length ? describeFiles(files) : e.dir ?? describeVars(e.vars);
  return `  ${e.mark} ${e.id}  ${where}${extra.length ? `  (${extra.join("; ")})` : ""}`;
};

/** Under a `~` task: why it is a new task (changeReason.ts), and that its results go to a folder of their own. */
const changeLines = (e: PlanEntry, changes: ReadonlyMap<string, readonly string[]>): string[] => {
  const out = (changes.get(e.id) ?? []).map((w) => `      ${w}`);
  if (e.dir) out.push(`      results go to ${e.dir}`);
  return out;
};

const countRow = (name: string, c: PlanCounts, width: number): string =>
  `  ${name.padEnd(width)}  ${MARKS.map((m) => String(c[m]).padStart(6)).join("")}${c.inFlight ? `   (${c.inFlight} in flight)` : ""}`;

export interface PlanDisplay {
  readonly manifest: string;
  readonly lockfile: string;
  /** List unchanged (`=`) tasks one per line too. */
  readonly all?: boolean;
  readonly outlook?: BudgetOutlook;
  /** `~` tasks: why each is a new task, in words (report/requestChanges.ts `planChanges`, changeReason.ts). */
  readonly changes?: ReadonlyMap<string, readonly string[]>;
}

/** `stills: 12 awaiting review (3 approved, 1 rejected); reels: 12 waiting on review`. */
export const reviewPlanText = (review: NonNullable<PlanResult["review"]>): string =>
  Object.entries(review)
    .map(([job, r]) =>
      "waitingOnReview" in r
        ? `${job}: ${r.waitingOnReview} waiting on review`
        : `${job}: ${r.awaiting} awaiting review (${r.approved} approved, ${r.rejected} rejected)`,
    )
    .join("; ");

/** One entry as the plan lists it (`+ job  vars  folder`), without its indent: `doctor` names the first task a run would create. */
export const planEntryLine = (e: PlanEntry): string => line(e).trim();

export const formatPlan = (plan: PlanResult, display: PlanDisplay): string => {
  const out: string[] = [];
  out.push(
    `plan for ${display.manifest} (lockfile ${display.lockfile}${plan.lockfileFound ? "" : ": none yet, nothing has run"})`,
    "",
  );
  const byJob = new Map<string, PlanEntry[]>();
  for (const e of plan.entries) {
    const list = byJob.get(e.job);
    if (list) list.push(e);
    else byJob.set(e.job, [e]);
  }
  const changes = plan.total["+"] + plan.total["~"] + plan.total["-"] + plan.total["…"];
  if (changes === 0) {
    out.push(
      plan.total["="] === 0
        ? "No changes: the manifest has no tasks."
        : plan.reused
          ? `No tasks to create: ${plan.reused} of ${plan.total["="]} task(s) reuse paid results (listed), the rest are done or in flight; a run would create nothing.`
          : `No changes: all ${plan.total["="]} task(s) are done or in flight${plan.total.inFlight ? ` (${plan.total.inFlight} in flight)` : ""}; a run would create nothing.`,
      "",
    );
  }
  for (const [job, list] of byJob) {
    const shown: string[] = [];
    for (const mark of MARKS) {
      const ofMark = list.filter((e) => e.mark === mark);
      if (mark === "=" && !display.all) {
        // Reused results (issue 31) are listed with where they come from; the rest counted.
        const reused = plan.reused ? ofMark.filter((e) => e.reused) : [];
        for (const e of reused.slice(0, LIST_LIMIT)) shown.push(line(e));
        if (reused.length > LIST_LIMIT) shown.push(`  = ... and ${reused.length - LIST_LIMIT} more reused (see --json)`);
        // A take rejected in review that brings no new take (retake_rejected used up) is listed with why.
        const told = ofMark.filter((e) => e.noNewTake);
        for (const e of told.slice(0, LIST_LIMIT)) shown.push(line(e));
        if (told.length > LIST_LIMIT) shown.push(`  = ... and ${told.length - LIST_LIMIT} more rejected with no new take (see --json)`);
        const unchanged = ofMark.length - reused.length - told.length;
        if (unchanged) {
          const inFlight = ofMark.filter((e) => e.inFlight).length;
          shown.push(`  = ${unchanged} unchanged${inFlight ? ` (${inFlight} in flight)` : ""}`);
        }
        continue;
      }
      for (const e of ofMark.slice(0, LIST_LIMIT)) {
        shown.push(line(e));
        if (e.mark === "~" && display.changes) shown.push(...changeLines(e, display.changes));
      }
      if (ofMark.length > LIST_LIMIT) shown.push(`  ${mark} ... and ${ofMark.length - LIST_LIMIT} more (see --json)`);
    }
    if (changes === 0 && !display.all && !plan.reused && !list.some((e) => e.noNewTake)) continue;
    out.push(`${job}:`, ...shown, "");
  }
  const names = [...Object.keys(plan.jobs), "total"];
  const width = Math.max(...names.map((n) => n.length), 3);
  out.push(`  ${"job".padEnd(width)}  ${MARKS.map((m) => m.padStart(6)).join("")}`);
  for (const [job, c] of Object.entries(plan.jobs)) out.push(countRow(job, c, width));
  out.push(countRow("total", plan.total, width));
  out.push("");
  if (plan.review) out.push(`review: ${reviewPlanText(plan.review)}`, "");
  if (plan.reused) out.push(`reused ${plan.reused}: results of paid tasks with the same request, copied, no charge ('reuse: false' or --no-reuse creates them instead)`, "");
  const money = (m: Readonly<Record<string, string>>) => Object.entries(m).map(([c, a]) => `${a} ${c}`).join(", ");
  const toCreate = plan.total["+"] + plan.total["~"];
  if (Object.keys(plan.estimate).length) {
    out.push(`estimated cost of the ${toCreate} task(s) to create: ${money(plan.estimate)}`);
  } else if (toCreate > 0) {
    out.push("no estimate: the manifest has no prices for these tasks");
  }
  if (Object.keys(plan.waitingEstimate).length) {
    out.push(`estimated cost of the ${plan.total["…"]} waiting downstream task(s): ${money(plan.waitingEstimate)}`);
  }
  if (Object.keys(plan.estimate).length || Object.keys(plan.waitingEstimate).length) {
    out.push("(estimates from the manifest's prices; the service's charges may differ)");
  }
  const o = display.outlook;
  if (o) {
    out.push(describeOutlook(o));
    const unpriced = Object.entries(o.unpriced);
    if (unpriced.length) {
      out.push(
        `  not counted: ${unpriced.map(([job, n]) => `${n} ${job} task(s)`).join(", ")} have no price in the manifest's prices, so their cost is unknown`,
      );
    }
  }
  return `${out.join("\n")}\n`;
};

/**
 * The plan as data for --json: entries without their full requests (which may hold base64
 * images), with the files each task to create will write (`files`) and, for a changed task
 * (`~`), why it is a new task (`changed`: the lines `changes` has for it, as the text shows them).
 */
export const planJson = (plan: PlanResult, changes?: ReadonlyMap<string, readonly string[]>): unknown => ({
  ...plan,
  // The new takes are in `entries`; their requests (which may hold base64 images) are not shown.
  ...(plan.retakes ? { retakes: plan.retakes.map((t) => t.id) } : {}),
  entries: plan.entries.map((e) => {
    const { task: _task, placed: _placed, walk: _walk, ...rest } = e;
    const files = entryFiles(e);
    const changed = e.mark === "~" ? changes?.get(e.id) : undefined;
    return { ...rest, ...(files ? { files } : {}), ...(changed ? { changed } : {}) };
  }),
});
