// The plan as people read it: per job, one line per task (a bounded number of them),
// then a table of counts per job and in total, and the estimated cost per currency.

import type { PlanCounts, PlanEntry, PlanResult } from "./diffPlan.js";
import { describeVars } from "./outputFolder.js";

/** Lines listed per job and mark before "... and N more". */
const LIST_LIMIT = 25;

const MARKS = ["+", "~", "=", "-", "…"] as const;

const line = (e: PlanEntry): string => {
  if (e.mark === "…") {
    return `  … ${e.count} task(s) of ${e.job}, ${e.note ?? "waiting on upstream"}${e.estimate ? `  (~${e.estimate.amount} ${e.estimate.currency})` : ""}`;
  }
  const extra: string[] = [];
  if (e.inFlight) extra.push(`in flight (${e.state})`);
  else if (e.mark === "=" && e.state) extra.push(e.state);
  if (e.mark === "-" && e.state) extra.push(`${e.state}, no longer in the manifest`);
  if (e.replaces) extra.push(`replaces ${e.replaces.join(", ")}`);
  if (e.note) extra.push(e.note);
  if (e.estimate) extra.push(`~${e.estimate.amount} ${e.estimate.currency}`);
  const where = e.dir ?? describeVars(e.vars);
  return `  ${e.mark} ${e.id}  ${where}${extra.length ? `  (${extra.join("; ")})` : ""}`;
};

const countRow = (name: string, c: PlanCounts, width: number): string =>
  `  ${name.padEnd(width)}  ${MARKS.map((m) => String(c[m]).padStart(6)).join("")}${c.inFlight ? `   (${c.inFlight} in flight)` : ""}`;

export const formatPlan = (plan: PlanResult, display: { manifest: string; lockfile: string }): string => {
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
  for (const [job, list] of byJob) {
    out.push(`${job}:`);
    for (const mark of MARKS) {
      const ofMark = list.filter((e) => e.mark === mark);
      for (const e of ofMark.slice(0, LIST_LIMIT)) out.push(line(e));
      if (ofMark.length > LIST_LIMIT) out.push(`  ${mark} ... and ${ofMark.length - LIST_LIMIT} more (see --json)`);
    }
    out.push("");
  }
  const names = [...Object.keys(plan.jobs), "total"];
  const width = Math.max(...names.map((n) => n.length), 3);
  out.push(`  ${"job".padEnd(width)}  ${MARKS.map((m) => m.padStart(6)).join("")}`);
  for (const [job, c] of Object.entries(plan.jobs)) out.push(countRow(job, c, width));
  out.push(countRow("total", plan.total, width));
  out.push("");
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
  return `${out.join("\n")}\n`;
};

/** The plan as data for --json: entries without their full requests (which may hold base64 images). */
export const planJson = (plan: PlanResult): unknown => ({
  ...plan,
  entries: plan.entries.map(({ task: _task, ...rest }) => rest),
});
