// Failures a person can act on: the lockfile's failed and rejected tasks grouped by
// reason (the service's code and message), each named by what made it (job and matrix
// values), with the downstream work that will therefore not be made. A slot whose
// latest attempt succeeded is not a failure any more; its earlier failed attempts are
// history and are not counted here. Pure. The shape it returns is engine/Failures.ts.

import type { FailureGroup, Failures } from "../engine/Failures.js";
import type { LockFile, LockTask } from "../state/LockFile.js";
import { describeVars } from "../manifest/outputFolder.js";
import { mayRetry } from "../plan/retryRule.js";

/** A for_each job and how many of its tasks one upstream task gives (about). */
export interface DownstreamShape {
  readonly job: string;
  readonly upstream: string;
  readonly perUpstreamTask: number;
}

/** One line of a reason: service text can hold newlines. */
const oneLine = (s: string): string => s.replace(/\s*\n\s*/g, " ").trim();

const slotOf = (t: LockTask): string => `${t.job}\u0000${t.dir}`;

export interface ManifestShape {
  readonly downstream: readonly DownstreamShape[];
  /** Per job, `retry_failed`: a failed slot whose attempt is below 1 + this is tried again. */
  readonly retryFailed: Readonly<Record<string, number>>;
  /** Jobs with `retry_content_risk: true` (retryRule.ts); absent: none. */
  readonly retryContentRisk?: Readonly<Record<string, boolean>>;
}

export const groupFailures = (lock: LockFile, shape: ManifestShape = { downstream: [], retryFailed: {} }): Failures => {
  // A failed attempt followed by a later attempt of the same slot (job and folder) is
  // history. Only a later attempt (2 or more) can make another one history: the slots of
  // those are all that is looked up (a lockfile of 100,000 first attempts builds no key per task).
  const latestAttempt = new Map<string, number>();
  // Attempts abandoned at another service (--switch-service) per slot: they use up no retry.
  const abandoned = new Map<string, number>();
  const failing: [string, LockTask][] = [];
  for (const id in lock.tasks) {
    const t = lock.tasks[id]!;
    if (t.attempt > 1) latestAttempt.set(slotOf(t), Math.max(latestAttempt.get(slotOf(t)) ?? -Infinity, t.attempt));
    if (t.abandoned !== undefined) abandoned.set(slotOf(t), (abandoned.get(slotOf(t)) ?? 0) + 1);
    if (t.state === "failed" || t.state === "rejected") failing.push([id, t]);
  }
  const current = (latestAttempt.size === 0 ? failing : failing.filter(([, t]) => t.attempt >= (latestAttempt.get(slotOf(t)) ?? -Infinity))).sort(([a], [b]) =>
    a < b ? -1 : a > b ? 1 : 0,
  );
  const groups = new Map<string, { reason: string; code?: number; tasks: FailureGroup["tasks"][number][] }>();
  const failedPerJob = new Map<string, number>();
  for (const [id, t] of current) {
    if (t.state !== "failed" && t.state !== "rejected") continue;
    const reason = oneLine(t.error?.message ?? "(no reason recorded)");
    const code = t.error?.code;
    const key = `${code ?? ""}\u0000${reason}`;
    const group = groups.get(key) ?? { reason, ...(code !== undefined ? { code } : {}), tasks: [] };
    // The engine's rule (retryRule.ts): a content-risk failure is tried again only when the job asks.
    const settings = { retryFailed: shape.retryFailed[t.job] ?? 0, retryContentRisk: shape.retryContentRisk?.[t.job] === true };
    const again = t.state === "rejected" || mayRetry(settings, t.attempt - 1 - (abandoned.get(slotOf(t)) ?? 0), t.error);
    group.tasks.push({ id, job: t.job, what: `${t.job} ${describeVars(t.vars)}`, state: t.state, again });
    groups.set(key, group);
    if (!again) failedPerJob.set(t.job, (failedPerJob.get(t.job) ?? 0) + 1);
  }
  // Downstream of downstream: a failure upstream also removes what the removed tasks would make.
  const notMade: Record<string, number> = {};
  const lost = (job: string): number => (failedPerJob.get(job) ?? 0) + (notMade[job] ?? 0);
  for (const d of shape.downstream) {
    const n = Math.round(lost(d.upstream) * d.perUpstreamTask);
    if (n > 0) notMade[d.job] = (notMade[d.job] ?? 0) + n;
  }
  return { groups: [...groups.values()].sort((a, b) => b.tasks.length - a.tasks.length), notMade };
};

/** Text lines: `content risk (code 1301): 6 task(s)`, the tasks, then what will not be made. */
export const formatFailures = (f: Failures, limit = 10): string[] => {
  const out: string[] = [];
  for (const g of f.groups) {
    out.push(`  ${g.reason}${g.code !== undefined ? ` (code ${g.code})` : ""}: ${g.tasks.length} task(s)`);
    for (const t of g.tasks.slice(0, limit)) {
      const note = t.state === "rejected" ? "rejected, nothing was created; the next run sends it again" : t.again ? "the next run retries it" : "";
      out.push(`    ${t.what}  ${t.id}${note ? `  (${note})` : ""}`);
    }
    if (g.tasks.length > limit) out.push(`    ... and ${g.tasks.length - limit} more (--json lists all)`);
  }
  const cut = Object.entries(f.notMade);
  for (const [job, n] of cut) out.push(`  ${n} ${job} task(s) will not be made (their upstream task failed)`);
  return out;
};
