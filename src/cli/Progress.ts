// What a person sees while a run works, from the engine's events: on a terminal one
// status block redrawn in place; without one (CI) one line per interval with the totals
// per job (the whole plan, expected downstream tasks included), spend and ETA, plus a
// line of its own for each notable event (a failure, a lowered slot limit, a budget
// stop); with --json one NDJSON line per event and nothing else; with --quiet nothing
// until the end. The final summary is printed in every mode (the `summary` event with --json).
// The per-job counts are one list (COUNTS): a new kind of count is one entry there.

import { reviewText } from "../engine/Summary.js";
import { BigDecimal } from "effect";
import { formatAmount, parseAmount, plus, withCurrency, ZERO } from "../money/Money.js";
import { neutralise } from "../api/neutralise.js";
import type { BillingEntry } from "../protocol/wire.js";
import type { TaskState } from "../state/LockFile.js";
import type { DownstreamLink, JobOutlook, RunEvent, RunSummary, StartBucket } from "../engine/RunEvent.js";
import { resultName } from "../outputs/scanResults.js";
import { describeVars } from "../manifest/outputFolder.js";
import { describeResume } from "../plan/runTotals.js";
import { formatFailures } from "../report/failureGroups.js";
import { estimateEta, formatEta, type JobWork } from "./eta.js";

export type ProgressMode = "tty" | "plain" | "json" | "quiet";

export interface ProgressOptions {
  readonly mode: ProgressMode;
  readonly stdout: NodeJS.WritableStream;
  readonly stderr: NodeJS.WritableStream;
  /** Plain mode: a status line this often. Default 30 s. */
  readonly summaryEveryMs?: number;
  /** TTY redraw interval. Default 150 ms. */
  readonly redrawMs?: number;
  /** The clock (tests). Default Date.now. */
  readonly now?: () => number;
}

/** Where a task stands for the view. */
type Bucket = "done" | "inFlight" | "queued" | "failed";

const bucketOf = (state: TaskState): Bucket =>
  state === "downloaded"
    ? "done"
    : state === "failed" || state === "rejected"
      ? "failed"
      : state === "planned"
        ? "queued"
        : "inFlight";

/** One job's counts; `total` is every task the job is expected to have. */
export type JobCountsView = Record<Bucket, number> & { total: number };

/** The counts shown after `done/total`, in this order, when not zero (a new count is a new entry). */
const COUNTS: ReadonlyArray<readonly [Exclude<Bucket, "done">, string]> = [
  ["inFlight", "in flight"],
  ["queued", "queued"],
  ["failed", "failed"],
];

const seconds = (ms: number): string => {
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m${String(s % 60).padStart(2, "0")}s`;
  return `${Math.floor(m / 60)}h${String(m % 60).padStart(2, "0")}m`;
};

const pad = (text: string, width: number) => text.padEnd(width);
const padLeft = (text: string | number, width: number) => String(text).padStart(width);

/** One matrix position of a job, as the view follows it across attempts. */
interface Slot {
  readonly job: string;
  state: TaskState;
  /** This run saw it go out (its create); undefined for a task already in flight at the start. */
  startedAt?: number;
  /**
   * Where the start's figures counted it, as the start event's `startBuckets` says when it
   * first hears of it (a task sent, made or tried again); without, a first event that is
   * not a create is a task in flight at the start. Undefined: counted as to create.
   */
  readonly fromBefore: StartBucket | undefined;
}

const zeroCounts = (): JobCountsView => ({ total: 0, done: 0, inFlight: 0, queued: 0, failed: 0 });

export class Progress {
  private readonly slots = new Map<string, Slot>();
  private readonly jobs: string[] = [];
  /** Cash charged by this run, per currency. */
  private readonly spend = new Map<string, BigDecimal.BigDecimal>();
  private readonly now: () => number;
  private readonly started: number;
  private readonly durations = new Map<string, number[]>();
  private start: Extract<RunEvent, { type: "start" }> | undefined;
  private drawnLines = 0;
  private timers: NodeJS.Timeout[] = [];

  constructor(private readonly options: ProgressOptions) {
    this.now = options.now ?? Date.now;
    this.started = this.now();
    if (options.mode === "tty") {
      this.timers.push(setInterval(() => this.redraw(), options.redrawMs ?? 150));
    } else if (options.mode === "plain") {
      this.timers.push(setInterval(() => this.intervalLine(), options.summaryEveryMs ?? 30_000));
    }
    for (const t of this.timers) t.unref();
  }

  /** Feed one engine event. */
  readonly onEvent = (event: RunEvent): void => {
    const { mode } = this.options;
    if (mode === "json") {
      this.options.stdout.write(`${JSON.stringify(event)}\n`);
      return;
    }
    switch (event.type) {
      case "start": {
        this.start = event;
        for (const j of [...Object.keys(event.totals ?? {}), ...event.jobs]) if (!this.jobs.includes(j)) this.jobs.push(j);
        if (mode === "quiet") return;
        const totals = event.totals;
        const size =
          totals && event.total !== undefined
            ? `${event.total} task${event.total === 1 ? "" : "s"}${this.jobs.length > 1 ? `: ${this.jobs.map((j) => `${totals[j]?.total ?? 0} ${j}`).join(", ")}` : ""}`
            : `${event.tasks} task(s) planned`;
        this.line(`omnibatch: running ${event.name} (${size}; concurrency ${event.concurrency})${event.emulated ? " on the in-process emulator" : ""}`);
        if (event.resume) this.line(`omnibatch: ${describeResume(event.resume)}`);
        if (event.emulated) {
          this.line(`omnibatch: emulated run: nothing is sent to the service or charged; lockfile ${event.lockfile}, results ${event.outputs}`);
        } else if (event.budget) {
          this.line(`omnibatch: budget ${event.budget.max} ${event.budget.currency}; it counts every charge in the lockfile (earlier runs included)`);
        }
        return;
      }
      case "task": {
        if (!this.jobs.includes(event.job)) this.jobs.push(event.job);
        const key = event.dir !== undefined ? `${event.job}\u0000${event.dir}` : event.id;
        const now = this.now();
        let slot = this.slots.get(key);
        if (!slot) {
          const fromBefore =
            (event.dir !== undefined ? this.start?.startBuckets?.(event.job, event.dir) : undefined) ??
            (event.state !== "submitting" && event.state !== "planned" ? "inFlight" : undefined);
          slot = { job: event.job, state: event.state, fromBefore };
          this.slots.set(key, slot);
        }
        slot.state = event.state;
        if (event.state === "submitting") slot.startedAt = now;
        if (event.state === "downloaded" && slot.startedAt !== undefined) {
          const list = this.durations.get(event.job) ?? [];
          list.push(now - slot.startedAt);
          this.durations.set(event.job, list);
        }
        if (event.billing) this.addSpend(event.billing);
        if (mode !== "quiet" && (event.state === "failed" || event.state === "rejected")) {
          const what = `${event.job} ${event.vars ? describeVars(event.vars) : event.id}`;
          const code = event.error?.code !== undefined ? ` (code ${event.error.code})` : "";
          this.line(`[${seconds(now - this.started)}] ! ${event.state}: ${what}: ${event.error?.message ?? "no reason given"}${code}`);
        }
        return;
      }
      case "notice":
        if (mode === "quiet") {
          if (event.level === "warn") this.options.stderr.write(`omnibatch: ${neutralise(event.message)}\n`);
        } else if (mode === "plain") this.line(`[${seconds(this.now() - this.started)}] ${event.level === "warn" ? "! " : ""}${event.message}`);
        else this.line(`${event.level === "warn" ? "! " : ""}${event.message}`);
        return;
      case "summary":
        // CI logs end with the totals as they stand at the end, whatever the interval.
        if (mode === "plain") {
          const last = this.statusLine();
          if (last.replace(/^\[[^\]]*\] /, "") !== this.lastLine) this.line(last);
        }
        this.close();
        this.options.stdout.write(formatSummary(event));
        return;
    }
  };

  /** Stops the timers and clears the live block. */
  close(): void {
    for (const t of this.timers) clearInterval(t);
    this.timers = [];
    this.clearBlock();
  }

  /** The image charges name no currency: they are in the account's (the budget's, or the one spent in before). */
  private defaultCurrency(): string {
    return this.start?.budget?.currency ?? Object.keys(this.start?.spentBefore ?? {})[0] ?? "";
  }

  private addSpend(billing: readonly BillingEntry[]) {
    for (const b of billing) {
      if (b.charge_type !== "cash") continue;
      const cur = b.currency ?? this.defaultCurrency();
      const amount = parseAmount(b.amount);
      if (amount === undefined || BigDecimal.isNegative(amount)) continue;
      this.spend.set(cur, plus(this.spend.get(cur) ?? ZERO, amount));
    }
  }

  /** Per job: the start's figures (the whole plan) brought up to date by the events since. */
  counts(): Map<string, JobCountsView> {
    const outlook: Readonly<Record<string, JobOutlook>> = this.start?.totals ?? {};
    // Per job: the tasks heard of, by where they stand now and by where the start counted them.
    type Seen = JobCountsView & { before: Record<StartBucket, number>; failedAgain: number };
    const fresh = (): Seen => ({ ...zeroCounts(), before: { done: 0, inFlight: 0, failed: 0 }, failedAgain: 0 });
    const seen = new Map<string, Seen>();
    for (const j of this.jobs) seen.set(j, fresh());
    for (const slot of this.slots.values()) {
      const c = seen.get(slot.job) ?? fresh();
      const now = bucketOf(slot.state);
      c[now]++;
      if (slot.fromBefore !== undefined) c.before[slot.fromBefore]++;
      if (now === "failed" && slot.fromBefore === "failed") c.failedAgain++;
      seen.set(slot.job, c);
    }
    const out = new Map<string, JobCountsView>();
    // Downstream work an upstream failure removes (upstream jobs come first in the links).
    const notMade = new Map<string, number>();
    const links: readonly DownstreamLink[] = this.start?.downstream ?? [];
    for (const j of this.jobs) {
      const o = outlook[j];
      const s = seen.get(j)!;
      // A task heard of is counted where it stands now, and no longer where the start
      // counted it: one sent, made or tried again is still one task. Those not heard of
      // yet stand where the start counted them.
      const done = Math.max(0, (o?.done ?? 0) - s.before.done) + s.done;
      const failed = Math.max(0, (o?.failed ?? 0) - s.before.failed) + s.failed;
      const inFlight = s.inFlight + Math.max(0, (o?.inFlight ?? 0) - s.before.inFlight);
      const expected = Math.max(0, (o?.total ?? 0) - (notMade.get(j) ?? 0));
      const total = Math.max(expected, done + failed + inFlight + s.queued);
      out.set(j, { total, done, inFlight, failed, queued: total - done - failed - inFlight });
      for (const link of links) {
        if (link.upstream !== j) continue;
        // The plan already left out what tasks failed before this run would have made
        // (one tried again that failed again removes nothing more).
        const lost = s.failed - s.failedAgain + (notMade.get(j) ?? 0);
        notMade.set(link.job, (notMade.get(link.job) ?? 0) + Math.round(lost * link.perUpstreamTask));
      }
    }
    return out;
  }

  /** The ETA from the work left: not started × typical duration ÷ slots, plus what is in flight. */
  eta(counts = this.counts()): string {
    const now = this.now();
    const work: JobWork[] = [];
    for (const [job, c] of counts) {
      const ages: number[] = [];
      for (const slot of this.slots.values()) {
        if (slot.job === job && bucketOf(slot.state) === "inFlight") ages.push(slot.startedAt === undefined ? 0 : now - slot.startedAt);
      }
      while (ages.length < c.inFlight) ages.push(0);
      work.push({ notStarted: c.queued, inFlightAges: ages, durations: this.durations.get(job) ?? [] });
    }
    return formatEta(estimateEta(work, this.start?.concurrency ?? 1));
  }

  /** `1.12 USD this run, 7.68 USD in all, budget 15 USD`. */
  spendText(): string {
    const before = this.start?.spentBefore ?? {};
    const currencies = [...new Set([...Object.keys(before), ...this.spend.keys(), ...(this.start?.budget ? [this.start.budget.currency] : [])])];
    const parts = currencies.map((c) => {
      const now = this.spend.get(c) ?? ZERO;
      const all = plus(now, parseAmount(before[c] ?? "0") ?? ZERO);
      return `${formatAmount(now)} ${c} this run, ${formatAmount(all)} ${c} in all`.replace(/  +/g, " ");
    });
    const budget = this.start?.budget ? `, budget ${this.start.budget.max} ${this.start.budget.currency}` : "";
    return `${parts.length ? parts.join("; ") : "nothing charged yet"}${budget}`;
  }

  /** The CI line: `[1m30s] stills 12/12 done · reels 10/24 done, 4 in flight, 10 queued · 3.76 USD this run · ETA 2m`. */
  statusLine(): string {
    const counts = this.counts();
    const jobs = [...counts].map(([job, c]) => {
      const more = COUNTS.filter(([k]) => c[k] > 0).map(([k, label]) => `${c[k]} ${label}`);
      return `${job} ${c.done}/${c.total} done${more.length ? `, ${more.join(", ")}` : ""}`;
    });
    const spent = [...this.spend].map(([cur, a]) => `${formatAmount(a)} ${cur}`.trim());
    const left = [...counts.values()].some((c) => c.inFlight + c.queued > 0);
    return `[${seconds(this.now() - this.started)}] ${jobs.join(" · ")} · ${spent.length ? `${spent.join(", ")} this run` : "nothing charged yet"}${left ? ` · ETA ${this.eta(counts)}` : ""}`;
  }

  private lastLine = "";
  private repeats = 0;

  /** Plain mode, each interval: the status line, unless it would repeat the last one (then at most every 5th interval). */
  private intervalLine() {
    const line = this.statusLine();
    const body = line.replace(/^\[[^\]]*\] /, "");
    if (body === this.lastLine && ++this.repeats < 5) return;
    this.lastLine = body;
    this.repeats = 0;
    this.line(line);
  }

  /** The terminal block: a row per job, then spend and time. */
  block(): string[] {
    const counts = this.counts();
    const width = Math.max(4, ...this.jobs.map((j) => j.length));
    const rows = [...counts].map(([job, c]) => {
      const cells = COUNTS.map(([k, label]) => `${padLeft(c[k], 4)} ${label}`).join("  ");
      return `  ${pad(job, width)}  ${padLeft(`${c.done}/${c.total}`, 9)} done  ${cells}`;
    });
    const left = [...counts.values()].some((c) => c.inFlight + c.queued > 0);
    return [...rows, `  spend ${this.spendText()}`, `  elapsed ${seconds(this.now() - this.started)}${left ? `, ETA ${this.eta(counts)}` : ""}`];
  }

  private clearBlock() {
    if (this.options.mode !== "tty" || this.drawnLines === 0) return;
    this.options.stdout.write(`\x1b[${this.drawnLines}A\x1b[J`);
    this.drawnLines = 0;
  }

  private redraw() {
    this.clearBlock();
    const lines = this.block().map(neutralise);
    this.options.stdout.write(`${lines.join("\n")}\n`);
    this.drawnLines = lines.length;
  }

  /** A line above the live block (or a plain line). */
  private line(text: string) {
    if (this.options.mode === "quiet") return;
    this.clearBlock();
    // Lines carry text from the service and from data files (messages, ids, names): shown, never obeyed.
    this.options.stdout.write(`${neutralise(text)}\n`);
  }
}

const reviewLines = (s: RunSummary): string[] => {
  // `stills: 12 awaiting review; reels: 12 waiting on review` (engine/Summary.ts).
  const text = reviewText(s.jobs);
  return text ? [`  review:    ${text}`] : [];
};

/** The final table: per job counts, spend, what was done, and where everything is. */
export const formatSummary = (s: RunSummary): string => {
  const jobs = Object.entries(s.jobs);
  const width = Math.max(3, ...jobs.map(([j]) => j.length));
  const header = `  ${pad("job", width)}  ${padLeft("tasks", 5)}  ${padLeft("done", 5)}  ${padLeft("failed", 6)}  ${padLeft("rejected", 8)}  ${padLeft("in flight", 9)}  ${padLeft("queued", 6)}`;
  const rows = jobs.map(
    ([job, c]) =>
      `  ${pad(job, width)}  ${padLeft(c.total, 5)}  ${padLeft(c.done, 5)}  ${padLeft(c.failed, 6)}  ${padLeft(c.rejected, 8)}  ${padLeft(c.inFlight, 9)}  ${padLeft(c.queued, 6)}`,
  );
  const spend = Object.entries(s.spend);
  const verdict: Record<RunSummary["outcome"], string> = {
    done: "all done",
    failed: "finished; some tasks failed or were rejected",
    pending: "stopped with work pending: run the same command again to continue",
    review: "done all it can; outputs await review: a person is needed (omnibatch review <manifest>), then run again",
    budget: "the budget stopped submission",
    refused: "refused by the service; nothing more was submitted",
    charge: "the service answered a charge that cannot be true: refused (counted nowhere); nothing more was submitted",
    lost: "results are lost (see above): their records stay in the lockfile; 'run --recreate-lost' makes them again, at a cost",
  };
  const thisRun = s.spendThisRun;
  const spendLine = spend.length
    ? spend.map(([c, a]) => (thisRun ? `${withCurrency(thisRun[c] ?? "0", c)} this run, ${withCurrency(a, c)} in all` : withCurrency(a, c))).join("; ")
    : "nothing charged";
  const lines = [
    "",
    ...(s.emulated
      ? [
          "  EMULATED run (--emulate): nothing was sent to the service, nothing was charged. Its lockfile and",
          "  results below are separate from a real run's; delete them freely.",
          "",
        ]
      : []),
    header,
    ...rows,
    "",
    `  spend:     ${spendLine}${s.budget ? `, budget ${s.budget.max} ${s.budget.currency}` : ""}${s.emulated && spend.length ? " (emulated, not real)" : ""}`,
    `  this run:  ${s.created} created, ${s.adopted} found already at the service, ${s.downloaded} file(s) downloaded, ${seconds(s.elapsedMs)}`,
    `  results:   ${s.outputs}`,
    ...(s.reports.length ? [`  reports:   ${s.reports.join(", ")}`] : []),
    `  lockfile:  ${s.lockfile}`,
    ...reviewLines(s),
  ];
  const groups = s.failureGroups;
  if (groups && groups.groups.length > 0) {
    const n = groups.groups.reduce((k, g) => k + g.tasks.length, 0);
    lines.push("", `  failed / rejected (${n}), by reason:`, ...formatFailures(groups).map((l) => `  ${l}`));
  } else if (s.failures.length > 0) {
    lines.push("", "  failed / rejected:");
    for (const f of s.failures.slice(0, 20)) {
      const what = f.vars ? `${f.job} ${describeVars(f.vars)}` : f.job;
      lines.push(`    ${what}  ${f.id}: ${f.state}${f.code !== undefined ? ` (code ${f.code})` : ""}: ${f.message}`);
    }
    if (s.failures.length > 20) lines.push(`    ... and ${s.failures.length - 20} more (see results.jsonl)`);
  }
  const lost = s.lost ?? [];
  if (lost.length > 0) {
    lines.push("", `  lost (${lost.length}): not here, deleted at the service${(s.held ?? 0) > 0 ? `; ${s.held} downstream task(s) wait on them` : ""}:`);
    for (const l of lost.slice(0, 20)) lines.push(`    ${resultName({ ...l, index: 0 })}${l.at !== undefined ? `, ${l.why === "deleted" ? "deleted" : "expired"} ${new Date(l.at).toISOString().slice(0, 10)}` : ""}`);
    if (lost.length > 20) lines.push(`    ... and ${lost.length - 20} more (see results.jsonl)`);
  }
  lines.push("", `exit ${s.exitCode}: ${s.emulated ? "emulated run: " : ""}${verdict[s.outcome]}${s.reason ? ` (${s.reason})` : ""}`, "");
  // Messages, ids and names come from the service and from data files: shown, never obeyed.
  return lines.map(neutralise).join("\n");
};
