// Text that is not ours in billing.md and the CI step summary is shown, never obeyed: the
// Markdown each writer makes is rendered by a real Markdown renderer (markdown-it with
// raw HTML on and GFM tables and strike-through, as GitHub renders a summary) and the
// hostile values must come out as text: no link, image, tag, emphasis or code span from
// them, no table cell split by their `|`, and the value readable as written.

import MarkdownIt from "markdown-it";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { formatRunStepSummary } from "../../src/report/runStepSummary.js";
import { planSummaryMarkdown } from "../../src/ci/planSummary.js";
import { formatBillingMarkdown } from "../../src/report/billingMarkdown.js";
import { lostMarkdown } from "../../src/report/lostMarkdown.js";
import { markdownCode, markdownText } from "../../src/report/markdownText.js";
import { summarizeBilling } from "../../src/report/summarizeBilling.js";
import type { LockFile } from "../../src/state/LockFile.js";
import { fixtureLock, NOW } from "./fixtureLock.js";

const md = new MarkdownIt({ html: true, linkify: false });

/** Every hostile thing at once; a newline too (a cell is one line). */
const HOSTILE = "a | b <script>alert(1)</script> [x](http://evil) ![i](http://evil/i.png) *em* __strong__ `code` ~~gone~~ &amp; <b>bold</b>\nsecond line";
/** What a reader must see: the value, its line break as a space. */
const SHOWN = HOSTILE.replace("\n", " ");

/** Markup the values must never produce (the writers' own is allowed where they put it). */
const FORBIDDEN = [/<script/i, /<a /i, /<img/i, /<b>/i, /<em>/i, /<s>/i, /<del>/i];

const decode = (html: string): string =>
  html
    .replace(/<[^>]+>/g, "")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&quot;/g, '"')
    .replace(/&amp;/g, "&");

const cellsOf = (html: string): string[][] =>
  [...html.matchAll(/<tr>([\s\S]*?)<\/tr>/g)].map((row) => [...row[1]!.matchAll(/<t[dh][^>]*>([\s\S]*?)<\/t[dh]>/g)].map((c) => decode(c[1]!)));

const assertInert = (markdown: string, name: string): string => {
  const html = md.render(markdown);
  for (const bad of FORBIDDEN) assert.not.match(html, bad, `${name}: ${bad} in ${html}`);
  assert.not.match(html, /(?<!<pre>)<code>[^<]*(alert|code)[^<]*<\/code>/, `${name}: a code span from the value`);
  assert.not.match(html, /<strong>[^<]*strong/, `${name}: bold from the value`);
  return html;
};

const t = suite("Markdown text from the service and data files");

t("markdownText: a hostile value renders as exactly its text, in a sentence and in a table cell", () => {
  const sentence = md.render(`Why: ${markdownText(HOSTILE)}.`);
  for (const bad of FORBIDDEN) assert.not.match(sentence, bad);
  assert.is(decode(sentence).trim(), `Why: ${SHOWN}.`);
  const table = assertInert(["| a | b |", "|---|---|", `| ${markdownText(HOSTILE)} | ${markdownText("*x*")} |`].join("\n"), "table");
  assert.equal(cellsOf(table), [["a", "b"], [SHOWN, "*x*"]]);
  // A backslash of the value escapes nothing of it, and words keep their underscores as written.
  for (const value of ["C:\\dir\\*x*\\", "\\x1b[2J and \\u202e", "test_balance _em_ snake_case_"]) {
    assert.is(decode(md.render(`| ${markdownText(value)} |\n|---|`)).trim(), value);
  }
  assert.is(markdownText("test_balance"), "test_balance");
});

t("markdownCode: a backtick in a path cannot close the span; the path shows as written", () => {
  for (const path of ["plain.yaml", "we`ird.yaml", "`start``.yaml", "a <b>[x](y)</b>.yaml"]) {
    const html = md.render(`See ${markdownCode(path)} now.`);
    const code = /<code>([\s\S]*?)<\/code>/.exec(html);
    assert.ok(code, html);
    assert.is(decode(code![1]!).trim(), path);
    assert.is(html.match(/<code>/g)!.length, 1);
  }
});

t("billing.md: a failure message, a job name and a manifest name from outside stay text, one cell each", () => {
  const lock: LockFile = {
    ...fixtureLock,
    name: "spring <b>x</b>",
    tasks: {
      ...fixtureLock.tasks,
      "spring-keyframes-g": { ...fixtureLock.tasks["spring-keyframes-g"]!, job: "key*frames*", error: { code: 1301, message: HOSTILE, at: NOW } },
    },
  };
  const html = assertInert(formatBillingMarkdown(summarizeBilling(lock), [{ id: "t-[x](http://evil)", job: "key*frames*", deletesAt: NOW }]), "billing.md");
  assert.match(decode(html), /omnibatch billing: spring <b>x<\/b>/);
  const rows = cellsOf(html);
  const failed = rows.find((r) => r[0] === "spring-keyframes-g")!;
  assert.equal(failed.slice(0, 5), ["spring-keyframes-g", "key*frames*", "failed", "1301", SHOWN]);
  assert.ok(rows.some((r) => r[0] === "t-[x](http://evil)" && r[1] === "key*frames*"));
  for (const r of rows) assert.ok(r.length >= 3, `a row lost cells: ${JSON.stringify(r)}`);
});

t("lost results: matrix values from a data file stay text, one cell", () => {
  const html = assertInert(lostMarkdown([{ task: "x", job: "stills", vars: { product: HOSTILE }, why: "deleted", at: NOW }]), "lost");
  const rows = cellsOf(html);
  assert.is(rows.length, 2);
  assert.is(rows[1]!.length, 2);
  assert.ok(rows[1]![0]!.includes(`product=${SHOWN}`), rows[1]![0]);
});

t("run step summary: reason, job names, failure reasons and currency from outside stay text", () => {
  const html = assertInert(
    formatRunStepSummary({
      name: "demo [x](http://evil)",
      outcome: "pending",
      reason: HOSTILE,
      jobs: { "clips|evil": { total: 2, done: 1, inFlight: 1, queued: 0, failed: 0, rejected: 0 } },
      spend: { "<b>USD</b>": "1.5" },
      spendThisRun: { "<b>USD</b>": "0.5" },
      budget: { max: "5", currency: "<b>USD</b>" },
      failureGroups: { groups: [{ reason: HOSTILE, code: 1301, tasks: [{ id: "x", job: "clips", what: "clips style=*street*", state: "failed", again: false }] }], notMade: { "anim`x": 2 } },
      failures: [],
      elapsedMs: 61_000,
      created: 1,
      downloaded: 1,
    }),
    "step summary",
  );
  const text = decode(html);
  assert.match(text, /omnibatch run: demo \[x\]\(http:\/\/evil\)/);
  assert.ok(text.includes(`Why: ${SHOWN}.`), text);
  assert.ok(text.includes("<b>USD</b>"), text);
  const rows = cellsOf(html);
  assert.equal(rows[1], ["clips|evil", "2", "1", "1", "0", "0", "0"]);
  const group = rows.find((r) => r[0] === SHOWN);
  assert.ok(group, JSON.stringify(rows));
  assert.equal(group!.slice(1), ["1301", "1", "clips style=*street*"]);
});

t("plan summary: a manifest path with a backtick, a currency and a plan text from outside stay text", () => {
  const html = assertInert(
    planSummaryMarkdown({
      manifest: "m`<b>x</b>.yaml",
      planText: "+ stills ```\n</details><script>alert(1)</script>\n",
      toCreate: 1,
      estimate: { "<b>USD</b>": "1" },
      waitingEstimate: {},
      budget: { max: "2", currency: "<b>USD</b>" },
    }),
    "plan summary",
  );
  assert.ok(decode(html).includes("omnibatch plan: m`<b>x</b>.yaml"), html);
  // The plan stays inside its fenced block, whole.
  const block = /<pre><code>([\s\S]*?)<\/code><\/pre>/.exec(html);
  assert.ok(block, html);
  assert.is(decode(block![1]!), "+ stills ```\n</details><script>alert(1)</script>\n");
});

t.run();
