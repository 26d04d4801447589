// The large reports are written from parts made as they are written (writeFileAtomicChunks):
// results.jsonl, billing.csv and report.html from their parts are byte for byte the whole-text
// formatters' output (report.html's against JSON.stringify of the whole ReportData), and
// writeReports writes exactly those bytes.

import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { billingCsvRows, formatBillingCsv } from "../../src/report/billingCsv.js";
import { reportData, reportFrame } from "../../src/report/reportData.js";
import { formatReportHtml, reportHtmlParts } from "../../src/report/reportHtml.js";
import { type EarlierRecord, formatResultsJsonl, provenanceOf, resultsJsonlLines } from "../../src/report/resultsJsonl.js";
import { standingsFor } from "../../src/report/standing.js";
import { summarizeBilling } from "../../src/report/summarizeBilling.js";
import { writeReports } from "../../src/report/writeReports.js";
import type { LockFile, LockTask } from "../../src/state/LockFile.js";
import { randomTask, rng } from "../state/randomTask.js";
import { fixtureLock, NOW } from "./fixtureLock.js";

/** Random tasks of every shape, some from an upstream job's outputs (the `output` axis), values that need escaping. */
const randomLock = (count: number): LockFile => {
  const r = rng(17);
  const tasks: Record<string, LockTask> = {};
  for (let n = 0; n < count; n++) {
    const { id, task } = randomTask(r, "spring", n);
    tasks[id] =
      n % 4 === 0
        ? { ...task, vars: { ...task.vars, item: { vars: { shot: n % 5, look: { sku: "a</script><!--&\u2028" } }, index: n % 3 } } }
        : n % 7 === 1
          ? { ...task, job: "single", vars: { item: { vars: { x: 1 }, index: 0 } } }
          : task;
  }
  return { lockfile_version: 3, name: "spring", tasks };
};

const inputs = () =>
  [fixtureLock, randomLock(3_000)].map((lock, i) => {
    const ids = Object.keys(lock.tasks);
    const earlier = new Map<string, EarlierRecord>(
      ids.filter((_, k) => k % 3 === 0).map((id, k) => [id, { estimate: { currency: k % 2 ? "USD" : "CNY", amount: `0.0${k % 10}` }, source: "m.yaml:1:1" }]),
    );
    return {
      lock,
      prov: provenanceOf(lock, undefined, { earlier }),
      summary: summarizeBilling(lock),
      now: NOW,
      emulated: i === 1,
      budget: { max: "10", currency: "USD" },
      lost: i === 1 ? [{ task: ids[0]!, job: "x", vars: { a: "<b>" }, path: "x/1.png", why: "deleted" as const, at: NOW }] : [],
    };
  });

test("report.html from its parts is formatReportHtml(reportData(...)) byte for byte: data, escaping, estimate, axes, lost", () => {
  for (const input of inputs()) {
    const whole = formatReportHtml(reportData(input));
    const parts = [...reportHtmlParts(reportFrame(input))];
    assert.ok(parts.length > 1);
    assert.is(parts.join(""), whole);
    // The data is there, escaped: JSON that parses to the whole data.
    const json = /<script type="application\/json" id="report-data">(.*?)<\/script>/s.exec(whole)![1]!;
    assert.not.match(json, /<\/script|<!--/);
    assert.is(JSON.parse(json).tasks.length, Object.values(input.lock.tasks).filter((t) => t.pruned_at === undefined).length);
  }
});

test("results.jsonl and billing.csv from their parts are the whole-text formatters' bytes", () => {
  for (const input of inputs()) {
    assert.is([...resultsJsonlLines(input.lock, NOW, input.prov)].join(""), formatResultsJsonl(input.lock, NOW, input.prov));
    assert.is([...billingCsvRows(input.lock)].join(""), formatBillingCsv(input.lock));
  }
});

test("writeReports writes the whole-text formatters' bytes for a lockfile of 8,000 tasks", async () => {
  const dir = await mkdtemp(join(tmpdir(), "omnibatch-streamed-reports-"));
  try {
    const lock = randomLock(8_000);
    await writeReports({ lock, outputsDir: dir, manifestName: "spring", now: NOW, scanResults: false });
    // Over 1 MB: written in several buffers.
    const csv = await readFile(join(dir, "billing.csv"), "utf8");
    assert.is(csv, formatBillingCsv(lock));
    const jsonl = await readFile(join(dir, "results.jsonl"), "utf8");
    assert.ok(jsonl.length > 1 << 20, `results.jsonl of ${jsonl.length} characters`);
    assert.is(jsonl, formatResultsJsonl(lock, NOW, provenanceOf(lock, undefined, { standing: standingsFor(lock), earlier: new Map() }), new Map()));
    const html = await readFile(join(dir, "report.html"), "utf8");
    assert.ok(html.startsWith("<!doctype html>") && html.endsWith("</html>\n"));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test.run();
