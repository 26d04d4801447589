// The terminal view of a run: --json prints one object per event and nothing else, the
// final summary names counts, spend, failures and where results are, plain mode gathers
// state changes into one line per batch.

import { Writable } from "node:stream";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { formatSummary, Progress } from "../../src/cli/Progress.js";
import type { RunSummary } from "../../src/engine/RunEvent.js";

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
  assert.match(text, "m-keys-1 (keys): failed: content-risk");
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

test("plain mode gathers state changes into one line per batch", async () => {
  const out = sink();
  const p = new Progress({ mode: "plain", stdout: out.stream, stderr: out.stream, batchMs: 20 });
  p.onEvent({ type: "start", manifest: "m", name: "m", lockfile: "l", outputs: "o", tasks: 2, jobs: ["keys"], concurrency: 2 });
  p.onEvent({ type: "task", id: "a", job: "keys", state: "submitted" });
  p.onEvent({ type: "task", id: "b", job: "keys", state: "submitted" });
  await new Promise((r) => setTimeout(r, 60));
  p.close();
  assert.match(out.text(), "keys: 2 submitted");
});

test.run();
