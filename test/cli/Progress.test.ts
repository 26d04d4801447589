// The terminal view of a run: --json prints one object per event and nothing else, the
// final summary names counts, spend, failures and where results are, plain mode gathers
// state changes into one line per batch.

import { Writable } from "node:stream";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { formatSummary, Progress } from "../../src/cli/Progress.js";
import type { RunEvent, RunSummary } from "../../src/engine/RunEvent.js";
import type { TaskState } from "../../src/state/LockFile.js";

const sink = () => {
  let text = "";
  const stream = new Writable({ write: (chunk, _e, cb) => ((text += String(chunk)), cb()) });
  return { stream, text: () => text };
};

const summary: RunSummary = {
  exitCode: 1,
  outcome: "failed",
  manifest: "/m.yaml",
  lockfile: "/m.lock.json",
  outputs: "/out",
  reports: ["/out/results.jsonl"],
  jobs: { keys: { total: 2, done: 1, inFlight: 0, queued: 0, failed: 1, rejected: 0 } },
  spend: { USD: "0.3" },
  created: 2,
  adopted: 0,
  downloaded: 1,
  failures: [{ id: "m-keys-1", job: "keys", state: "failed", message: "content-risk" }],
  elapsedMs: 1200,
  noSlotAnswers: 0,
};

test("--json prints one JSON object per event on stdout and nothing else", () => {
  const out = sink();
  const err = sink();
  const p = new Progress({ mode: "json", stdout: out.stream, stderr: err.stream });
  p.onEvent({ type: "task", id: "a", job: "keys", state: "submitting" });
  p.onEvent({ type: "notice", level: "warn", message: "x" });
  p.onEvent({ type: "summary", ...summary });
  p.close();
  const lines = out.text().trim().split("\n");
  assert.is(lines.length, 3);
  assert.is(JSON.parse(lines[2]!).type, "summary");
  assert.is(err.text(), "");
});

test("the final summary names per-job counts, spend, failures with reasons and where results are", () => {
  const text = formatSummary(summary);
  assert.match(text, /keys\s+2\s+1\s+1/);
  assert.match(text, "0.3 USD");
  assert.match(text, "keys  m-keys-1: failed: content-risk");
  assert.match(text, "results:   /out");
  assert.match(text, "exit 1");
});

test("text from the service or data files cannot drive the terminal: escape sequences in notices, failures and job names are shown inert (issue 9, item 8)", () => {
  const evil = "\x1b]0;pwned\x07\x1b[2J\u202e";
  for (const mode of ["plain", "quiet", "tty"] as const) {
    const out = sink();
    const err = sink();
    const p = new Progress({ mode, stdout: out.stream, stderr: err.stream, redrawMs: 60_000 });
    p.onEvent({ type: "start", manifest: "m", name: `m${evil}`, lockfile: "l", outputs: "o", tasks: 1, jobs: [`job${evil}`], concurrency: 1 });
    p.onEvent({ type: "notice", level: "warn", message: `service says ${evil}` });
    p.onEvent({ type: "task", id: `a${evil}`, job: `job${evil}`, state: "failed", error: { message: `reason ${evil}` } });
    p.onEvent({ type: "summary", ...summary, failures: [{ id: `a${evil}`, job: `job${evil}`, state: "failed", message: `reason ${evil}` }] });
    p.close();
    // The view's own cursor moves (tty) are the only escape sequences allowed.
    const written = (out.text() + err.text()).replace(/\x1b\[\d+A\x1b\[J/g, "");
    assert.not.ok(/[\x00-\x08\x0b-\x1f\x7f-\x9f\u202e]/.test(written), `${mode}: ${JSON.stringify(written)}`);
    assert.match(written, "\\x1b]0;pwned", `${mode}: shown as text`);
  }
});

type Start = Extract<RunEvent, { type: "start" }>;
const outlook = (total: number, done = 0, inFlight = 0, toCreate = total - done - inFlight) => ({ total, done, inFlight, failed: 0, toCreate });
const start36: Start = {
  type: "start",
  manifest: "m",
  name: "catalogue",
  lockfile: "l",
  outputs: "o",
  tasks: 12,
  jobs: ["stills", "reels"],
  concurrency: 4,
  total: 36,
  totals: { stills: outlook(12), reels: outlook(24) },
  downstream: [{ job: "reels", upstream: "stills", perUpstreamTask: 2 }],
  spentBefore: {},
  budget: { max: "15", currency: "USD" },
};

/** A Progress on a fake clock, and the text it wrote. */
const viewOf = (mode: "plain" | "tty", first: Start = start36) => {
  const out = sink();
  let now = 1_000_000;
  const p = new Progress({ mode, stdout: out.stream, stderr: out.stream, summaryEveryMs: 60_000, redrawMs: 60_000, now: () => now });
  p.onEvent(first);
  const task = (job: string, n: number, state: TaskState, extra: Partial<Extract<RunEvent, { type: "task" }>> = {}) =>
    p.onEvent({ type: "task", id: `${job}-${n}`, job, state, dir: `${job}-${n}`, vars: { product: `P${n}`, style: "studio" }, ...extra });
  return { p, out, task, tick: (ms: number) => (now += ms) };
};

test("the header says the real total, downstream tasks included: 36 tasks: 12 stills, 24 reels", () => {
  const { p, out } = viewOf("plain");
  p.close();
  assert.match(out.text(), "omnibatch: running catalogue (36 tasks: 12 stills, 24 reels; concurrency 4)");
  assert.not.match(out.text(), "planned");
});

test("CI line: totals per job in a fixed order over the whole plan, the downstream tasks not made yet counted as queued", () => {
  const { p, task, tick } = viewOf("plain");
  for (let i = 0; i < 12; i++) task("stills", i, "submitting");
  tick(3000);
  for (let i = 0; i < 12; i++) task("stills", i, "downloaded", { billing: [{ charge_type: "cash", amount: "0.03", currency: "USD" }] });
  for (let i = 0; i < 14; i++) task("reels", i, "submitting");
  tick(20_000);
  for (let i = 0; i < 10; i++) task("reels", i, "downloaded", { billing: [{ charge_type: "cash", amount: "0.35", currency: "USD" }] });
  tick(67_000);
  // 10 reels done in 20 s each; 4 in flight for 87 s (past typical), 10 not started: 10 x 20 s / 4 slots = 50 s.
  assert.is(p.statusLine(), "[1m30s] stills 12/12 done · reels 10/24 done, 4 in flight, 10 queued · 3.86 USD this run · ETA 50s");
  p.close();
});

test("ETA is unknown until a task of each job with work left has finished", () => {
  const { p, task, tick } = viewOf("plain");
  task("stills", 0, "submitting");
  tick(5000);
  assert.match(p.statusLine(), /ETA unknown$/);
  for (let i = 0; i < 12; i++) task("stills", i, "downloaded");
  // Stills known, reels not started and none finished: still unknown.
  assert.match(p.statusLine(), /ETA unknown$/);
  p.close();
});

test("an upstream task failing takes the downstream work it would make out of the totals, and its own line says what and why", () => {
  const { p, out, task } = viewOf("plain");
  task("stills", 3, "submitting");
  task("stills", 3, "failed", { error: { code: 1301, message: "content risk" }, vars: { product: "BTL-STL", style: "studio" } });
  assert.match(p.statusLine(), "reels 0/22 done, 22 queued");
  assert.match(p.statusLine(), "stills 0/12 done, 11 queued, 1 failed");
  assert.match(out.text(), "! failed: stills product=BTL-STL style=studio: content risk (code 1301)");
  p.close();
});

test("a retried attempt is the same matrix position: counted once", () => {
  const { p, task } = viewOf("plain");
  task("stills", 1, "submitting");
  task("stills", 1, "failed", { error: { message: "x" } });
  task("stills", 1, "submitting", { id: "stills-1-a2" });
  assert.match(p.statusLine(), "stills 0/12 done, 1 in flight, 11 queued ·");
  p.close();
});

test("a rerun says it resumes and what it found; the live view shows spend this run, in all, and the budget", () => {
  const resumed: Start = {
    ...start36,
    totals: { stills: outlook(12, 12, 0), reels: outlook(24, 10, 4) },
    resume: { done: 22, inFlight: 4, failed: 0, toCreate: 10 },
    spentBefore: { USD: "6.56" },
  };
  const { p, out, task } = viewOf("tty", resumed);
  assert.match(out.text(), "omnibatch: resuming: 22 done, 4 in flight at the service, 10 to create");
  // A task in flight at the start reports in: it is one of the 4, not a 5th.
  task("reels", 20, "succeeded", { billing: [{ charge_type: "cash", amount: "1.12", currency: "USD" }] });
  const block = p.block();
  assert.match(block.join("\n"), /reels\s+10\/24 done\s+4 in flight\s+10 queued\s+0 failed/);
  assert.ok(block.includes("  spend 1.12 USD this run, 7.68 USD in all, budget 15 USD"), block.join("\n"));
  p.close();
});

test("without the plan's figures (a library caller's manifest) the counts come from the events alone", () => {
  const out = sink();
  const p = new Progress({ mode: "plain", stdout: out.stream, stderr: out.stream, summaryEveryMs: 20 });
  p.onEvent({ type: "start", manifest: "m", name: "m", lockfile: "l", outputs: "o", tasks: 2, jobs: ["keys"], concurrency: 2 });
  p.onEvent({ type: "task", id: "a", job: "keys", state: "submitted" });
  p.onEvent({ type: "task", id: "b", job: "keys", state: "downloaded" });
  assert.match(p.statusLine(), "keys 1/2 done, 1 in flight · nothing charged yet");
  p.close();
});

test("plain mode prints one status line per interval, not one per change", async () => {
  const out = sink();
  const p = new Progress({ mode: "plain", stdout: out.stream, stderr: out.stream, summaryEveryMs: 40 });
  p.onEvent({ type: "start", manifest: "m", name: "m", lockfile: "l", outputs: "o", tasks: 2, jobs: ["keys"], concurrency: 2 });
  for (let i = 0; i < 50; i++) p.onEvent({ type: "task", id: `t${i % 2}`, job: "keys", state: i % 3 === 0 ? "submitted" : "processing" });
  await new Promise((r) => setTimeout(r, 100));
  p.close();
  const lines = out.text().trim().split("\n").filter((l) => l.startsWith("["));
  assert.ok(lines.length >= 1 && lines.length <= 3, out.text());
  assert.match(lines[0]!, "keys 0/2 done, 2 in flight");
});

test.run();
