import { mkdtemp, readFile, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { csvField } from "../../src/report/billingCsv.js";
import { REPORT_SOURCE_FILE, reportLink, writeReports } from "../../src/report/writeReports.js";
import { stat } from "node:fs/promises";
import { formatBillingMarkdown } from "../../src/report/billingMarkdown.js";
import { summarizeBilling } from "../../src/report/summarizeBilling.js";
import { fixtureLock, NOW } from "./fixtureLock.js";

const dirs: string[] = [];
const tempDir = async () => {
  const dir = await mkdtemp(join(tmpdir(), "omnibatch-report-"));
  dirs.push(dir);
  return dir;
};
test.after(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

test("writes results.jsonl, billing.csv, billing.json, billing.md and report.html (and the digest they come from) into the outputs folder, nothing else", async () => {
  const out = join(await tempDir(), "outputs", "spring");
  const { files, summary } = await writeReports({ lock: fixtureLock, outputsDir: out, manifestName: "spring", now: NOW, env: {} });
  assert.equal(files, ["results.jsonl", "billing.csv", "billing.json", "billing.md", "report.html"].map((f) => join(out, f)));
  // No task folder exists (nothing was downloaded here): no sidecar, no metadata.jsonl.
  assert.equal((await readdir(out)).sort(), [".reports-source", "billing.csv", "billing.json", "billing.md", "report.html", "results.jsonl"]);
  const json = JSON.parse(await readFile(join(out, "billing.json"), "utf8"));
  assert.equal(json.cash, summary.cash);
  assert.equal(json.nearing_deletion, [{ id: "spring-clips-j", job: "clips", deletes_at: new Date(NOW + 3 * 86_400_000).toISOString() }]);
});

test("results.jsonl has one line per task with files, billing, error and deletion time", async () => {
  const out = await tempDir();
  await writeReports({ lock: fixtureLock, outputsDir: out, manifestName: "spring", now: NOW });
  const lines = (await readFile(join(out, "results.jsonl"), "utf8")).trimEnd().split("\n").map((l) => JSON.parse(l));
  assert.is(lines.length, 10);
  assert.equal(lines.map((l) => l.id), Object.keys(fixtureLock.tasks).sort());
  const a = lines.find((l) => l.id === "spring-clips-a");
  // Not downloaded into this folder, still at the service: restorable.
  assert.equal(a.outputs, [{ type: "video", index: 0, variant: "main", path: "clips/a/0.mp4", size: 1234, sha256: "a".repeat(64), state: "restorable" }]);
  assert.equal(a.billing, fixtureLock.tasks["spring-clips-a"]!.billing);
  assert.is(a.state, "downloaded");
  assert.is(a.task_id, "t-a");
  assert.is(a.nearing_deletion, false);
  const g = lines.find((l) => l.id === "spring-keyframes-g");
  assert.equal(g.error, { code: 1301, message: "content risk | prompt, rejected", at: new Date(NOW - 86_400_000).toISOString() });
  const j = lines.find((l) => l.id === "spring-clips-j");
  assert.is(j.nearing_deletion, true);
  assert.is(j.times.deleted_at_service, new Date(NOW + 3 * 86_400_000).toISOString());
});

test("billing.csv quotes commas, quotes and line breaks (RFC 4180)", async () => {
  assert.is(csvField('A-1, "deluxe"'), '"A-1, ""deluxe"""');
  assert.is(csvField("two\nlines"), '"two\nlines"');
  assert.is(csvField("plain"), "plain");
  assert.is(csvField(undefined), "");
  const out = await tempDir();
  await writeReports({ lock: fixtureLock, outputsDir: out, manifestName: "spring", now: NOW });
  const rows = (await readFile(join(out, "billing.csv"), "utf8")).split("\r\n");
  assert.is(rows[0], "external_task_id,job,state,task_id,charge_type,cash_type,currency,package_type,amount,list_price,vars");
  assert.is(rows[1], 'spring-clips-a,clips,downloaded,t-a,cash,balance,USD,,0.1,0.2,"{""product"":""A-1, \\""deluxe\\"""",""style"":""street""}"');
  // One row per entry; a task without entries still gets one row.
  assert.is(rows.filter((r) => r.startsWith("spring-clips-c,")).length, 2);
  assert.is(rows.filter((r) => r.startsWith("spring-keyframes-g,")).length, 1);
  assert.is(rows.at(-1), "");
});

test("billing.md shows totals per currency and cash type, units, jobs, failures and deletion warnings", async () => {
  const out = await tempDir();
  await writeReports({ lock: fixtureLock, outputsDir: out, manifestName: "spring", now: NOW });
  const md = await readFile(join(out, "billing.md"), "utf8");
  assert.ok(md.includes("| USD | balance | 1.00 | 1.45 | 0.45 | 3 |"), md);
  assert.ok(md.includes("| USD | test_balance | 5.50 | 5.50 | 0.00 | 1 |"), md);
  assert.ok(md.includes("| CNY | balance | 1.05 | 1.50 | 0.45 | 1 |"), md);
  assert.ok(md.includes("| image | 2.5 | 2 |"), md);
  assert.ok(md.includes("| spring-keyframes-g | keyframes | failed | 1301 | content risk \\| prompt, rejected | 0 |"), md);
  assert.ok(md.includes("| clips | 6 | 4 | 2 | 0 | 0 | CNY 1.05; USD 1.00; USD 5.50 (test_balance) |"), md);
  assert.ok(md.includes("## Results nearing deletion"), md);
  assert.ok(md.includes("| spring-clips-j | clips |"), md);
});

test("the Markdown summary is appended to $GITHUB_STEP_SUMMARY when set", async () => {
  const dir = await tempDir();
  const summaryFile = join(dir, "step-summary.md");
  await writeFile(summaryFile, "previous step\n");
  const result = await writeReports({
    lock: fixtureLock,
    outputsDir: join(dir, "out"),
    manifestName: "spring",
    now: NOW,
    env: { GITHUB_STEP_SUMMARY: summaryFile },
  });
  const md = await readFile(join(dir, "out", "billing.md"), "utf8");
  assert.is(await readFile(summaryFile, "utf8"), `previous step\n${md}\n${reportLink(join(dir, "out", "report.html"))}\n`);
  assert.is(result.stepSummary, summaryFile);
});

test("billing.md lists at most 100 failed tasks and points to results.jsonl for the rest", () => {
  const failed = fixtureLock.tasks["spring-keyframes-g"]!;
  const tasks = Object.fromEntries(Array.from({ length: 250 }, (_, i) => [`f-${String(i).padStart(3, "0")}`, failed]));
  const md = formatBillingMarkdown(summarizeBilling({ lockfile_version: 1, name: "x", tasks }));
  assert.is(md.split("\n").filter((l) => l.startsWith("| f-")).length, 100);
  assert.ok(md.includes("... and 150 more failed tasks: see results.jsonl."), md);
});

test("the same lockfile gives byte-identical reports", async () => {
  const a = await tempDir();
  const b = await tempDir();
  await writeReports({ lock: fixtureLock, outputsDir: a, manifestName: "spring", now: NOW });
  await writeReports({ lock: fixtureLock, outputsDir: b, manifestName: "spring", now: NOW });
  for (const f of ["results.jsonl", "billing.csv", "billing.json", "billing.md"]) {
    assert.is(await readFile(join(a, f), "utf8"), await readFile(join(b, f), "utf8"), f);
  }
});

test("reports already made from the same lockfile content are kept as they are; a changed task, a deletion warning coming due, a missing file or force rewrites them; a new day alone does not", async () => {
  const out = await tempDir();
  const first = await writeReports({ lock: fixtureLock, outputsDir: out, manifestName: "spring", now: NOW });
  assert.is(first.written, true);
  // Mark every file so a rewrite is visible whatever the clock's resolution.
  for (const f of first.files) await writeFile(f, "kept\n");
  const again = await writeReports({ lock: fixtureLock, outputsDir: out, manifestName: "spring", now: NOW + 1000 });
  assert.is(again.written, false);
  for (const f of first.files) assert.is(await readFile(f, "utf8"), "kept\n");
  assert.equal(again.summary, first.summary);

  const [id, task] = Object.entries(fixtureLock.tasks)[0]!;
  const changed = { ...fixtureLock, tasks: { ...fixtureLock.tasks, [id]: { ...task, updated_at: task.updated_at + 1 } } };
  const afterChange = await writeReports({ lock: changed, outputsDir: out, manifestName: "spring", now: NOW });
  assert.is(afterChange.written, true);
  assert.is.not(await readFile(first.files[0]!, "utf8"), "kept\n");

  await writeFile(first.files[1]!, "kept\n");
  // A new day with nothing new is not a change (a scheduled rerun of a finished batch writes nothing)...
  assert.is((await writeReports({ lock: changed, outputsDir: out, manifestName: "spring", now: NOW + 86_400_000 })).written, false, "a new day, nothing new");
  assert.is(await readFile(first.files[1]!, "utf8"), "kept\n");
  // ...but the day a result only the service holds comes within the deletion warning's days is.
  const DAY = 86_400_000;
  const waiting = { ...changed, tasks: { ...changed.tasks, [id]: { ...task, state: "succeeded" as const, created_at: NOW - 20 * DAY, updated_at: task.updated_at + 1 } } };
  assert.is((await writeReports({ lock: waiting, outputsDir: out, manifestName: "spring", now: NOW })).written, true, "the task changed");
  const early = await writeReports({ lock: waiting, outputsDir: out, manifestName: "spring", now: NOW + 1 * DAY });
  assert.is(early.written, false, "9 days before its deletion: no warning yet");
  assert.not.ok(early.deletions.some((d) => d.id === id));
  const warned = await writeReports({ lock: waiting, outputsDir: out, manifestName: "spring", now: NOW + 6 * DAY });
  assert.is(warned.written, true, "4 days before its deletion: warned, so written");
  assert.ok(warned.deletions.some((d) => d.id === id), "warned about it");
  await rm(first.files[3]!);
  assert.is((await writeReports({ lock: changed, outputsDir: out, manifestName: "spring", now: NOW + 86_400_000 })).written, true, "a missing file");
  assert.is((await writeReports({ lock: changed, outputsDir: out, manifestName: "spring", now: NOW + 86_400_000, force: true })).written, true, "force");
  assert.ok((await stat(join(out, REPORT_SOURCE_FILE))).size > 60);
});

test("the step summary is appended even when the reports were current", async () => {
  const out = await tempDir();
  const summaryFile = join(await tempDir(), "step-summary.md");
  await writeReports({ lock: fixtureLock, outputsDir: out, manifestName: "spring", now: NOW });
  const again = await writeReports({ lock: fixtureLock, outputsDir: out, manifestName: "spring", now: NOW, env: { GITHUB_STEP_SUMMARY: summaryFile } });
  assert.is(again.written, false);
  assert.is(await readFile(summaryFile, "utf8"), `${formatBillingMarkdown(again.summary, again.deletions)}\n${reportLink(join(out, "report.html"))}\n`);
});

test("terminal escapes and control characters from the service or data files are inert in billing.md, billing.csv and status", async () => {
  const { formatStatus, statusView } = await import("../../src/report/statusView.js");
  const hostile = "\u001b]0;owned\u0007\u001b[2Jgone\u202e";
  const lock = {
    ...fixtureLock,
    tasks: {
      ...fixtureLock.tasks,
      "spring-evil-1": { ...fixtureLock.tasks["spring-clips-b"]!, job: "evil", vars: { product: hostile }, state: "failed" as const, error: { message: `Task failed: ${hostile}`, at: NOW } },
    },
  };
  const md = formatBillingMarkdown(summarizeBilling(lock));
  assert.not.ok(/[\u0000-\u0009\u000b-\u001f\u202e]/.test(md), md);
  // Shown as escapes, and as Markdown text (its brackets escaped: src/report/markdownText.ts).
  assert.match(md, "\\x1b\\]0;owned\\x07\\x1b\\[2Jgone\\u202e");
  assert.is(csvField(hostile), "\\x1b]0;owned\\x07\\x1b[2Jgone\\u202e");
  const status = formatStatus(statusView(lock, { lockfile: "m.lock.json", outputs: "out" }, undefined, NOW), "m.yaml", NOW);
  assert.not.ok(/[\u0000-\u0009\u000b-\u001f\u202e]/.test(status), status);
});


test("task.json is written beside a task's files only where its folder exists, left as it is when unchanged (same file), replaced when the record changes, and no temp file stays", async () => {
  const out = await tempDir();
  const lock = {
    ...fixtureLock,
    tasks: Object.fromEntries(
      Array.from({ length: 600 }, (_, i) => [
        `spring-stills-${String(i).padStart(20, "0")}`,
        { ...Object.values(fixtureLock.tasks)[0]!, job: "stills", dir: `stills/${i}`, outputs: [{ type: "image" as const, index: 0, variant: "main" as const, path: `stills/${i}/image-1.png`, size: 1 }] },
      ]),
    ),
  };
  // Folders for all but the last hundred (moved away: nothing to describe).
  const { mkdir } = await import("node:fs/promises");
  for (let i = 0; i < 500; i++) await mkdir(join(out, "stills", String(i)), { recursive: true });
  await writeReports({ lock, outputsDir: out, manifestName: "spring", now: NOW });
  const sidecar = (i: number) => join(out, "stills", String(i), "task.json");
  for (let i = 0; i < 500; i++) {
    const record = JSON.parse(await readFile(sidecar(i), "utf8")) as { id: string; dir: string };
    assert.is(record.dir, `stills/${i}`);
  }
  assert.equal((await readdir(join(out, "stills"))).filter((n) => n !== "metadata.jsonl").length, 500, "no folder made for the tasks whose folder is gone");
  const before = await stat(sidecar(7));
  const changedId = `spring-stills-${String(8).padStart(20, "0")}`;
  const changed = { ...lock, tasks: { ...lock.tasks, [changedId]: { ...lock.tasks[changedId]!, updated_at: NOW + 5 } } };
  await writeReports({ lock: changed, outputsDir: out, manifestName: "spring", now: NOW, force: true });
  const after = await stat(sidecar(7));
  assert.is(after.ino, before.ino, "an unchanged task.json is not rewritten");
  assert.is(after.mtimeMs, before.mtimeMs);
  assert.match(await readFile(sidecar(8), "utf8"), new Date(NOW + 5).toISOString());
  for (let i = 0; i < 500; i++) assert.equal(await readdir(join(out, "stills", String(i))), ["task.json"], `folder ${i}`);
});

test.run();
