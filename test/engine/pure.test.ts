// The engine's pure parts: the AIMD slot limiter, the budget check with exact decimals,
// how service answers read as task views, and the progress display's modes.

import { Writable } from "node:stream";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { spending, wouldExceed, isExhausted } from "../../src/engine/Budget.js";
import { formatSummary, Progress } from "../../src/cli/Progress.js";
import type { RunSummary } from "../../src/engine/RunEvent.js";
import { SlotLimiter } from "../../src/engine/SlotLimiter.js";
import { fromImage, fromVideo, isContentRisk } from "../../src/protocol/TaskView.js";
import { parseDuration } from "../../src/cli/commands/run.js";
import { resolveInside } from "../../src/outputs/OutputPaths.js";

test("a 1303 drops the slot limit to what was in flight; it grows back one slot per window, more slowly after each drop", () => {
  const s = new SlotLimiter(8, 1, 1);
  s.take(5);
  s.onNoSlot(5);
  assert.is(s.limit, 5);
  assert.ok(!s.fits(1));
  s.release(1);
  assert.ok(s.fits(1));
  for (let i = 0; i < 9; i++) s.onFinished();
  assert.is(s.limit, 5, "window after one drop: 5 * 2 finishes");
  s.onFinished();
  assert.is(s.limit, 6);
  assert.is(new SlotLimiter(3, 1, 1).limit, 3);
});

test("a task bigger than the limit may still start alone", () => {
  const s = new SlotLimiter(2, 1, 1);
  assert.ok(s.fits(9));
  s.take(9);
  assert.ok(!s.fits(1));
});

test("the budget counts charged cash, in-flight estimates and the next task, exactly", () => {
  const spent = spending([[{ charge_type: "cash", amount: "0.1", currency: "USD" }], [{ charge_type: "cash", amount: "0.2", currency: "USD" }, { charge_type: "unit", amount: "5", package_type: "video" }]], [{ currency: "USD", amount: "0.4" }], "USD");
  const limit = { max: "1.0", currency: "USD" };
  assert.ok(!wouldExceed(limit, spent, { currency: "USD", amount: "0.3" }), "0.1 + 0.2 + 0.4 + 0.3 = 1.0 is not over");
  assert.ok(wouldExceed(limit, spent, { currency: "USD", amount: "0.30000001" }));
  assert.ok(!wouldExceed(limit, spent, { currency: "CNY", amount: "100" }), "other currencies do not count");
  assert.ok(!isExhausted(limit, spent));
});

test("service answers read as views: image `succeed` is succeeded, outputs per variant, watermark only when asked", () => {
  const v = fromVideo(
    {
      id: "1",
      status: "succeeded",
      message: "",
      create_time: 1,
      update_time: 2,
      outputs: [
        { type: "video", id: "o", url: "http://x/a.mp4", watermark_url: "http://x/w.mp4", duration: "5" },
        { type: "audio", id: "a", mp3_url: "http://x/a.mp3", wav_url: "http://x/a.wav", mp3_duration: "5", wav_duration: "5" },
        { type: "voice", id: "v", name: "n", url: "http://x/v", owned_by: "svc", status: "succeeded" },
      ],
      billing: [],
    },
    false,
  );
  assert.equal(v.outputs.map((o) => `${o.type}:${o.variant}`), ["video:main", "audio:mp3", "audio:wav", "voice:meta"]);
  const i = fromImage(
    {
      task_id: "9",
      task_status: "succeed",
      task_status_msg: "",
      task_info: { external_task_id: "x" },
      task_result: { result_type: "series", series_images: [{ index: 1, url: "http://x/1.png", watermark_url: "http://x/1w.png" }] },
      watermark_info: { enabled: true },
      final_unit_deduction: "0",
      final_balance_deduction: { quota: "0.04", list_price: "0.05" },
      created_at: 1,
      updated_at: 2,
    },
    true,
    "USD",
  );
  assert.is(i.status, "succeeded");
  assert.equal(i.outputs.map((o) => `${o.variant}:${o.group_id}`), ["main:9", "watermark:9"]);
  assert.equal(i.billing, [{ charge_type: "cash", amount: "0.04", list_price: "0.05", currency: "USD" }]);
  assert.ok(isContentRisk(undefined, "Task failed: flagged by content-risk review"));
  assert.ok(isContentRisk(1301, ""));
  assert.not.ok(isContentRisk(undefined, "internal error"));
});

test("--max-wait durations: 90s, 25m, 2h, 500ms; nonsense is rejected", () => {
  assert.is(parseDuration("90s"), 90_000);
  assert.is(parseDuration("25m"), 1_500_000);
  assert.is(parseDuration("2h"), 7_200_000);
  assert.is(parseDuration("500ms"), 500);
  assert.is(parseDuration("soon"), undefined);
});

test("no output path may leave the outputs folder", () => {
  assert.ok(resolveInside("/tmp/out", "job/task/video-1.mp4").startsWith("/tmp/out/"));
  for (const bad of ["../x", "job/../../x", "/etc/passwd", "C:/x", ""]) {
    assert.throws(() => resolveInside("/tmp/out", bad), /outside/, bad);
  }
});

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
