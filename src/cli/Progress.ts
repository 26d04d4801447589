// What a person sees while a run works, from the engine's events: on a terminal one
// status block redrawn in place; without one (CI) a plain line per batch of changes and
// a summary every 30 s; with --json one NDJSON line per event and nothing else; with
// --quiet nothing until the end. The final summary table is printed in every mode
// (as the `summary` event with --json).

import { reviewText } from "../engine/Summary.js";
import { BigDecimal } from "effect";
import { formatAmount, parseAmount, plus, ZERO } from "../money/Money.js";
import { neutralise } from "../api/neutralise.js";
import type { BillingEntry } from "../api/wire.js";
import type { TaskState } from "../state/LockFile.js";
import type { RunEvent, RunSummary } from "../engine/RunEvent.js";
import { resultName } from "../outputs/scanResults.js";

export type ProgressMode = "tty" | "plain" | "json" | "quiet";

export interface ProgressOptions {
  readonly mode: ProgressMode;
  readonly stdout: NodeJS.WritableStream;
  readonly stderr: NodeJS.WritableStream;
  /** Plain mode: a summary line at least this often. Default 30 s. */
  readonly summaryEveryMs?: number;
  /** Plain mode: state changes are gathered for this long into one line. Default 1 s. */
  readonly batchMs?: number;
  /** TTY redraw interval. Default 150 ms. */
  readonly redrawMs?: number;
}

type Bucket = "done" | "inFlight" | "queued" | "failed";

const bucketOf = (state: TaskState): Bucket =>
  state === "downloaded"
    ? "done"
    : state === "failed" || state === "rejected"
      ? "failed"
      : state === "planned"
        ? "queued"
        : "inFlight";

const seconds = (ms: number): string => {
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m${String(s % 60).padStart(2, "0")}s`;
  return `${Math.floor(m / 60)}h${String(m % 60).padStart(2, "0")}m`;
};

const pad = (text: string, width: number) => text.padEnd(width);
const padLeft = (text: string | number, width: number) => String(text).padStart(width);

export class Progress {
  private readonly states = new Map<string, { job: string; state: TaskState }>();
  private readonly jobs: string[] = [];
  private readonly spend = new Map<string, BigDecimal.BigDecimal>();
  private readonly started = Date.now();
  private pending: Array<{ job: string; state: TaskState }> = [];
  private drawnLines = 0;
  private timers: NodeJS.Timeout[] = [];
  private doneAtStart = 0;
  private sawStart = false;

  constructor(private readonly options: ProgressOptions) {
    if (options.mode === "tty") {
      this.timers.push(setInterval(() => this.redraw(), options.redrawMs ?? 150));
    } else if (options.mode === "plain") {
      this.timers.push(setInterval(() => this.flushBatch(), options.batchMs ?? 1000));
      this.timers.push(setInterval(() => this.line(this.statusLine()), options.summaryEveryMs ?? 30_000));
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
      case "start":
        for (const j of event.jobs) if (!this.jobs.includes(j)) this.jobs.push(j);
        if (mode !== "quiet") {
          this.line(`omnibatch: running ${event.name} (${event.tasks} task(s) planned, concurrency ${event.concurrency})${event.emulated ? " on the in-process emulator" : ""}`);
          if (event.emulated) {
            this.line(`omnibatch: emulated run: nothing is sent to the service or charged; lockfile ${event.lockfile}, results ${event.outputs}`);
          }
        }
        return;
      case "task": {
        if (!this.jobs.includes(event.job)) this.jobs.push(event.job);
        const before = this.states.get(event.id);
        if (!before && event.state === "downloaded" && !this.sawStart) this.doneAtStart++;
        this.states.set(event.id, { job: event.job, state: event.state });
        if (event.billing) this.addSpend(event.billing);
        if (mode === "plain" && event.state !== "planned") {
          this.pending.push({ job: event.job, state: event.state });
          if (event.error) this.line(`${event.job}: ${event.id} ${event.state}: ${event.error.message}`);
        }
        return;
      }
      case "notice":
        if (mode === "quiet") {
          if (event.level === "warn") this.options.stderr.write(`omnibatch: ${neutralise(event.message)}\n`);
        } else this.line(`${event.level === "warn" ? "! " : ""}${event.message}`);
        return;
      case "summary":
        this.close();
        this.options.stdout.write(formatSummary(event));
        return;
    }
  };

  /** Stops the timers and clears the live block. */
  close(): void {
    for (const t of this.timers) clearInterval(t);
    this.timers = [];
    if (this.options.mode === "plain") this.flushBatch();
    this.clearBlock();
  }

  private addSpend(billing: readonly BillingEntry[]) {
    for (const b of billing) {
      if (b.charge_type !== "cash") continue;
      const cur = b.currency ?? "";
      const amount = parseAmount(b.amount);
      if (amount === undefined || BigDecimal.isNegative(amount)) continue;
      this.spend.set(cur, plus(this.spend.get(cur) ?? ZERO, amount));
    }
  }

  private counts() {
    const perJob = new Map<string, Record<Bucket, number>>();
    for (const j of this.jobs) perJob.set(j, { done: 0, inFlight: 0, queued: 0, failed: 0 });
    for (const { job, state } of this.states.values()) {
      const c = perJob.get(job) ?? { done: 0, inFlight: 0, queued: 0, failed: 0 };
      c[bucketOf(state)]++;
      perJob.set(job, c);
    }
    return perJob;
  }

  private spendText(): string {
    if (this.spend.size === 0) return "nothing charged yet";
    return [...this.spend].map(([cur, amount]) => `${formatAmount(amount)} ${cur}`.trim()).join(", ");
  }

  private eta(done: number, total: number): string {
    const elapsed = Date.now() - this.started;
    const doneHere = done - this.doneAtStart;
    if (doneHere <= 0 || total <= done) return "";
    const rate = doneHere / elapsed;
    return `, ETA ~${seconds((total - done) / rate)}`;
  }

  private statusLine(): string {
    let done = 0;
    let total = 0;
    const parts: string[] = [];
    for (const [job, c] of this.counts()) {
      const all = c.done + c.inFlight + c.queued + c.failed;
      done += c.done;
      total += all;
      parts.push(`${job} ${c.done}/${all}${c.inFlight ? ` (${c.inFlight} in flight)` : ""}${c.failed ? ` ${c.failed} failed` : ""}`);
    }
    return `[${seconds(Date.now() - this.started)}] ${parts.join("; ")}; spend ${this.spendText()}${this.eta(done, total)}`;
  }

  /** One line for the changes since the last: per job, how many tasks reached which state. */
  private flushBatch() {
    if (this.pending.length === 0) return;
    const perJob = new Map<string, Map<TaskState, number>>();
    for (const { job, state } of this.pending) {
      const m = perJob.get(job) ?? new Map<TaskState, number>();
      m.set(state, (m.get(state) ?? 0) + 1);
      perJob.set(job, m);
    }
    this.pending = [];
    const parts = [...perJob].map(([job, m]) => `${job}: ${[...m].map(([state, n]) => `${n} ${state}`).join(", ")}`);
    this.line(`[${seconds(Date.now() - this.started)}] ${parts.join("; ")}`);
  }

  private block(): string[] {
    const counts = this.counts();
    const width = Math.max(4, ...this.jobs.map((j) => j.length));
    let done = 0;
    let total = 0;
    const rows = [...counts].map(([job, c]) => {
      const all = c.done + c.inFlight + c.queued + c.failed;
      done += c.done;
      total += all;
      return `  ${pad(job, width)}  ${padLeft(`${c.done}/${all}`, 9)} done  ${padLeft(c.inFlight, 4)} in flight  ${padLeft(c.queued, 4)} queued  ${padLeft(c.failed, 4)} failed`;
    });
    return [...rows, `  elapsed ${seconds(Date.now() - this.started)}, spend ${this.spendText()}${this.eta(done, total)}`];
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
    refused: "the account refused; nothing more was submitted",
    lost: "results are lost (see above): their records stay in the lockfile; 'run --recreate-lost' makes them again, at a cost",
  };
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
    `  spend:     ${spend.length ? spend.map(([c, a]) => `${a} ${c}`).join(", ") : "nothing charged"}${s.emulated && spend.length ? " (emulated, not real)" : ""}`,
    `  this run:  ${s.created} created, ${s.adopted} found already at the service, ${s.downloaded} file(s) downloaded, ${seconds(s.elapsedMs)}`,
    `  results:   ${s.outputs}`,
    ...(s.reports.length ? [`  reports:   ${s.reports.join(", ")}`] : []),
    `  lockfile:  ${s.lockfile}`,
    ...reviewLines(s),
  ];
  if (s.failures.length > 0) {
    lines.push("", "  failed / rejected:");
    for (const f of s.failures.slice(0, 20)) lines.push(`    ${f.id} (${f.job}): ${f.state}${f.code !== undefined ? ` ${f.code}` : ""}: ${f.message}`);
    if (s.failures.length > 20) lines.push(`    ... and ${s.failures.length - 20} more (see results.jsonl)`);
  }
  const lost = s.lost ?? [];
  if (lost.length > 0) {
    lines.push("", `  lost (${lost.length}): not here, deleted at the service${(s.held ?? 0) > 0 ? `; ${s.held} downstream task(s) wait on them` : ""}:`);
    for (const l of lost.slice(0, 20)) lines.push(`    ${resultName({ ...l, index: 0 })}${l.at !== undefined ? `, ${l.why === "deleted" ? "deleted" : "expired"} ${new Date(l.at).toISOString().slice(0, 10)}` : ""}`);
    if (lost.length > 20) lines.push(`    ... and ${lost.length - 20} more (see results.jsonl)`);
  }
  lines.push("", `exit ${s.exitCode}: ${s.emulated ? "emulated run: " : ""}${verdict[s.outcome]}${s.reason && s.outcome !== "failed" ? ` (${s.reason})` : ""}`, "");
  // Messages, ids and names come from the service and from data files: shown, never obeyed.
  return lines.map(neutralise).join("\n");
};
