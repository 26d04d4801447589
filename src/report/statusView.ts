// The lockfile's view for `omnibatch status`: counts per job and state, what is in flight
// and for how long, what failed and why, what is about to be deleted at the service, what
// was spent, and whether a run holds the lock. Pure data in, data and text out.

import type { LockFile, TaskState } from "../state/LockFile.js";
import type { RunLockStatus } from "../state/RunLock.js";
import { chargesLabel } from "./billingMarkdown.js";
import type { Failures } from "../engine/Failures.js";
import { formatFailures, groupFailures, type ManifestShape } from "./failureGroups.js";
import { deletionTime, nearingDeletion } from "./nearingDeletion.js";
import { type Charges, summarizeBilling, TASK_STATES } from "./summarizeBilling.js";
import { neutralise } from "../api/neutralise.js";
import { recordedStanding, standingOf, type Standings } from "./standing.js";
import { countResults, lostResults, resultName, type LostResult, type ResultCounts, type ScannedResult } from "../outputs/scanResults.js";
import { isoTime } from "../protocol/UnixMs.js";

export interface StatusView {
  readonly name: string;
  readonly lockfile: string;
  readonly outputs: string;
  readonly tasks: number;
  readonly states: Readonly<Record<TaskState, number>>;
  /** Per job; `reused`: of its counted tasks, those reused (below). */
  readonly jobs: readonly { job: string; tasks: number; states: Readonly<Record<TaskState, number>>; reused: number }[];
  /**
   * Of the counted tasks: those not created for this manifest, their results copied from a
   * paid task with the same request (`reused_from`, issue 31): no charge of their own.
   */
  readonly reused: number;
  /** Oldest first. age_ms counts from the create (or the last change when not sent yet). */
  readonly in_flight: readonly { id: string; job: string; state: TaskState; task_id?: string; age_ms: number }[];
  readonly failed: readonly { id: string; job: string; state: TaskState; code?: number; reason: string }[];
  /** The slots whose latest attempt failed or was rejected, grouped by reason, and what will not be made. */
  readonly failures: Failures;
  readonly nearing_deletion: readonly { id: string; job: string; deletes_at: string }[];
  /** Spend to date: every task the lockfile has ever recorded, pruned ones included. */
  readonly spent: Charges;
  /** Whether the counts include superseded tasks (`--all`); by default current and orphaned ones. */
  readonly all: boolean;
  /**
   * Tasks replaced by a changed task (`~`) that was created, or abandoned at another
   * service (`run --switch-service`; `superseded_by` empty until the new attempt is
   * created): not counted above unless `all`; their spend always is.
   */
  readonly superseded: readonly { id: string; job: string; state: TaskState; superseded_by: string; abandoned?: { service: string; at: string } }[];
  /** Tasks whose matrix position the manifest no longer has (`-` in plan); known only with a valid manifest. */
  readonly orphaned: readonly { id: string; job: string; state: TaskState }[];
  /** Tasks whose files `omnibatch prune` removed: only their spend counts. */
  readonly pruned: number;
  readonly run: { pid?: number; host?: string; started?: string; heartbeat: string; stale: boolean } | null;
  /** Each recorded result's state (present, restorable, lost) and the lost ones by name, when the outputs folder was looked at. */
  readonly results?: ResultCounts & { readonly lost_results: readonly LostResult[] };
}

/** The `results` part of a status or plan: counts, and the lost ones named. */
export const resultsPart = (results: readonly ScannedResult[]): NonNullable<StatusView["results"]> => ({
  ...countResults(results),
  lost_results: lostResults(results),
});

/** Text lines for the results' states: counts, and each lost result by job and matrix values. */
export const formatResults = (r: NonNullable<StatusView["results"]>, limit = 20): string[] => {
  if (r.present + r.restorable + r.lost === 0) return [];
  const out = [
    `Results: ${r.present} present, ${r.restorable} restorable (missing here, still at the service: a run fetches them again), ${r.lost} lost`,
  ];
  if (r.lost > 0) {
    out.push(`LOST (${r.lost}): not here and deleted at the service; their records stay in the lockfile ('run --recreate-lost' makes them again, at a cost):`);
    for (const l of r.lost_results.slice(0, limit)) {
      out.push(`  ${resultName({ ...l, index: 0 })}${l.at !== undefined ? `, ${l.why} ${new Date(l.at).toISOString().slice(0, 10)}` : ""}`);
    }
    if (r.lost_results.length > limit) out.push(`  ... and ${r.lost_results.length - limit} more (--json lists all)`);
  }
  return out;
};

const IN_FLIGHT = new Set<TaskState>(["submitting", "submitted", "processing", "succeeded"]);

export const statusView = (
  all_: LockFile,
  where: { lockfile: string; outputs: string },
  runLock: RunLockStatus | undefined,
  now: number,
  shape?: ManifestShape,
  standing?: Standings,
  all = false,
  results?: readonly ScannedResult[],
): StatusView => {
  const standingOfId = (id: string) =>
    standing ? standingOf(standing, id) : recordedStanding(all_.tasks[id]!);
  // Counted: current and orphaned tasks (with --all, superseded ones too); never pruned ones.
  const countedIds = Object.keys(all_.tasks).filter((id) => {
    const s = standingOfId(id);
    return s === "current" || s === "orphaned" || (all && s === "superseded");
  });
  const lock: LockFile =
    countedIds.length === Object.keys(all_.tasks).length ? all_ : { ...all_, tasks: Object.fromEntries(countedIds.map((id) => [id, all_.tasks[id]!])) };
  const billing = summarizeBilling(lock);
  const spentAll = lock === all_ ? billing : summarizeBilling(all_);
  const ofStanding = (want: string) => Object.keys(all_.tasks).filter((id) => standingOfId(id) === want).sort();
  const ids = Object.keys(lock.tasks).sort();
  // The billing summary's list of reused tasks (summarizeBilling.ts), counted per job.
  const reusedOf = new Map<string, number>();
  for (const r of billing.reused?.list ?? []) reusedOf.set(r.job, (reusedOf.get(r.job) ?? 0) + 1);
  const in_flight = ids
    .filter((id) => IN_FLIGHT.has(lock.tasks[id]!.state))
    .map((id) => {
      const t = lock.tasks[id]!;
      return {
        id,
        job: t.job,
        state: t.state,
        ...(t.task_id !== undefined ? { task_id: t.task_id } : {}),
        age_ms: Math.max(0, now - (t.created_at ?? t.submitted_at ?? t.updated_at)),
      };
    })
    .sort((a, b) => b.age_ms - a.age_ms || (a.id < b.id ? -1 : 1));
  return {
    name: lock.name,
    lockfile: where.lockfile,
    outputs: where.outputs,
    tasks: billing.tasks,
    states: billing.states,
    jobs: billing.jobs.map((j) => ({ job: j.job, tasks: j.tasks, states: j.states, reused: reusedOf.get(j.job) ?? 0 })),
    reused: billing.reused?.tasks ?? 0,
    in_flight,
    failed: billing.failed.map((f) => ({ id: f.id, job: f.job, state: f.state, ...(f.code !== undefined ? { code: f.code } : {}), reason: f.reason })),
    failures: groupFailures(lock, shape),
    nearing_deletion: ids
      .filter((id) => nearingDeletion(lock.tasks[id]!, now))
      .map((id) => ({ id, job: lock.tasks[id]!.job, deletes_at: isoTime(deletionTime(lock.tasks[id]!)) ?? "unknown" })),
    spent: { cash: spentAll.cash, units: spentAll.units },
    all,
    superseded: ofStanding("superseded").map((id) => {
      const t = all_.tasks[id]!;
      return {
        id,
        job: t.job,
        state: t.state,
        superseded_by: standing?.supersededBy.get(id) || t.superseded_by || "",
        ...(t.abandoned ? { abandoned: { service: t.abandoned.service, at: isoTime(t.abandoned.at) ?? "unknown" } } : {}),
      };
    }),
    orphaned: ofStanding("orphaned").map((id) => ({ id, job: all_.tasks[id]!.job, state: all_.tasks[id]!.state })),
    pruned: ofStanding("pruned").length,
    run: runLock
      ? {
          ...(runLock.holder
            ? { pid: runLock.holder.pid, host: runLock.holder.host, started: new Date(runLock.holder.started).toISOString() }
            : {}),
          heartbeat: new Date(runLock.heartbeat).toISOString(),
          stale: runLock.stale,
        }
      : null,
    ...(results ? { results: resultsPart(results) } : {}),
  };
};

/** "2h 05m", "3m 07s", "12s". */
export const formatAge = (ms: number): string => {
  const s = Math.floor(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${String(s % 60).padStart(2, "0")}s`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h}h ${String(m % 60).padStart(2, "0")}m`;
  return `${Math.floor(h / 24)}d ${String(h % 24).padStart(2, "0")}h`;
};

const table = (rows: readonly (readonly string[])[]): string[] => {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  return rows.map((r) => r.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join("  ").trimEnd());
};

const LIST_LIMIT = 20;

/** The status as text for a terminal or a CI log. `manifest` is how the user named it. */
export const formatStatus = (view: StatusView, manifest: string, now: number): string => {
  const out: string[] = [
    `${view.name}: ${view.tasks}${!view.all && view.superseded.length > 0 ? " current" : ""} task${view.tasks === 1 ? "" : "s"} in ${view.lockfile}`,
  ];
  if (view.run === null) out.push("No run in progress.");
  else {
    const who = view.run.pid !== undefined ? `pid ${view.run.pid} on ${view.run.host}, since ${view.run.started}` : "a run that is starting";
    const beat = formatAge(Math.max(0, now - Date.parse(view.run.heartbeat)));
    out.push(
      view.run.stale
        ? `A stale run lock is left by a stopped run (${who}; last heartbeat ${beat} ago): the next run takes it over.`
        : `A run is in progress (${who}; last heartbeat ${beat} ago).`,
    );
  }
  out.push("");
  const inFlight = (s: Readonly<Record<TaskState, number>>) => s.submitting + s.submitted + s.processing + s.succeeded;
  const rows: string[][] = [["job", "tasks", "downloaded", "in flight", "queued", "failed"]];
  for (const j of view.jobs) {
    rows.push([j.job, String(j.tasks), String(j.states.downloaded), String(inFlight(j.states)), String(j.states.planned), String(j.states.failed + j.states.rejected)]);
  }
  const s = view.states;
  rows.push(["total", String(view.tasks), String(s.downloaded), String(inFlight(s)), String(s.planned), String(s.failed + s.rejected)]);
  out.push(...table(rows));
  const detail = TASK_STATES.filter((st) => s[st] > 0).map((st) => `${s[st]} ${st}`);
  if (detail.length > 0) out.push(`(${detail.join(", ")})`);
  if (view.reused > 0) {
    const byJob = view.jobs.filter((j) => j.reused > 0).map((j) => `${j.job} ${j.reused}`);
    out.push(`reused ${view.reused} (${byJob.join(", ")}): results of paid tasks with the same request, copied, no charge of their own (billing.md lists where each came from)`);
  }

  if (view.in_flight.length > 0) {
    out.push("", `In flight (${view.in_flight.length}), oldest first:`);
    for (const t of view.in_flight.slice(0, LIST_LIMIT)) {
      out.push(`  ${t.id}  ${t.state}${t.task_id ? `  ${t.task_id}` : ""}  ${formatAge(t.age_ms)}`);
    }
    if (view.in_flight.length > LIST_LIMIT) out.push(`  ... and ${view.in_flight.length - LIST_LIMIT} more (--json lists all)`);
  }
  const failing = view.failures.groups.reduce((n, g) => n + g.tasks.length, 0);
  if (failing > 0) {
    out.push("", `Failed (${failing}), by reason:`, ...formatFailures(view.failures));
  }
  const history = view.failed.length - failing;
  if (history > 0) out.push(`  (${history} earlier failed attempt(s) were followed by another attempt: --json lists them)`);
  if (view.nearing_deletion.length > 0) {
    out.push(
      "",
      `WARNING: ${view.nearing_deletion.length} result(s) not downloaded yet are deleted at the service within days. Run 'omnibatch run ${manifest}' now:`,
    );
    for (const d of view.nearing_deletion.slice(0, LIST_LIMIT)) out.push(`  ${d.id}  deleted at ${d.deletes_at}`);
    if (view.nearing_deletion.length > LIST_LIMIT) out.push(`  ... and ${view.nearing_deletion.length - LIST_LIMIT} more`);
  }
  const abandoned = view.superseded.filter((t) => t.abandoned !== undefined).length;
  const apart = [
    [
      "Superseded",
      view.superseded,
      `replaced by a changed task (~)${abandoned > 0 ? `, or abandoned at another service and made again here (${abandoned}, run --switch-service)` : ""}`,
      view.all ? "counted above" : "not counted above ('status --all' counts and lists them)",
    ],
    ["Orphaned", view.orphaned, "no longer in the manifest (-)", "counted above"],
  ] as const;
  for (const [title, list, why, counted] of apart) {
    if (list.length === 0) continue;
    out.push("", `${title} (${list.length}): ${why}; ${counted}; 'omnibatch prune ${manifest}' removes their files.`);
    if (view.all || title === "Orphaned") {
      for (const t of list.slice(0, LIST_LIMIT)) {
        const gone = (t as { abandoned?: { service: string; at: string } }).abandoned;
        const abandonedAt = gone ? `  abandoned at ${gone.service} ${gone.at.slice(0, 10)}` : "";
        const by = "superseded_by" in t ? (t.superseded_by ? `  superseded by ${t.superseded_by}` : "  its new attempt not created yet") : "";
        out.push(`  ${t.id}  ${t.state}${abandonedAt}${by}`);
      }
      if (list.length > LIST_LIMIT) out.push(`  ... and ${list.length - LIST_LIMIT} more (--json lists all)`);
    }
  }
  if (view.pruned > 0) out.push("", `Pruned: ${view.pruned} task(s) whose files 'omnibatch prune' removed (their spend still counts).`);
  out.push("", `Spent: ${chargesLabel(view.spent)}${view.pruned > 0 || view.superseded.length + view.orphaned.length > 0 ? " (to date: every task ever run, superseded, orphaned and pruned ones included)" : ""}`, `Outputs: ${view.outputs}`);
  if (view.results) {
    const lines = formatResults(view.results, LIST_LIMIT);
    if (lines.length > 0) out.push("", ...lines);
  }
  // Names, reasons and ids come from manifests, data files and the service: inert on a terminal.
  return `${out.map(neutralise).join("\n")}\n`;
};
