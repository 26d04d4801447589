// The tasks made of approved outputs are current, not orphaned, in everything that tells a
// task's standing: status, plan, the run's own reports, `report` (results.jsonl and
// report.html) and prune, through the built CLI on `--emulate` alone. Each reads the review
// decisions as plan does (src/review/manifestDecisions.ts); without them every reviewed
// output awaits review and the clips a run made of approved stills read as orphaned.

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { execa } from "execa";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { bin } from "./runFixture.js";
import { reviewedDemoCopy } from "../checkoutFiles.js";

const t = suite("standings after a review: approved outputs' downstream tasks are current");

const demoCopy = () => reviewedDemoCopy("review-standings-");

const cli = (dir: string, args: readonly string[]) =>
  execa("node", [bin, ...args], { cwd: dir, reject: false, all: true, extendEnv: false, env: { PATH: process.env["PATH"] ?? "" }, timeout: 120_000 });

const lastJson = (stdout: string) => JSON.parse(stdout.trim().split("\n").at(-1)!);

/** results.jsonl's standing per task id. */
const resultStandings = (dir: string): Map<string, string> =>
  new Map(
    readFileSync(join(dir, "outputs/demo-emulated/results.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { id: string; standing: string })
      .map((r) => [r.id, r.standing]),
  );

t("run -> review --approve (some stills) -> run: status, plan, the reports and prune count the approved stills' clips as current", async () => {
  const ws = demoCopy();
  try {
    const first = await cli(ws.dir, ["run", "manifests/demo.yaml", "--emulate", "--json"]);
    assert.is(first.exitCode, 3, first.all);
    const approve = await cli(ws.dir, ["review", "manifests/demo.yaml", "--emulate", "--approve", "keyframes product.sku=A-1"]);
    assert.is(approve.exitCode, 0, approve.all);
    // The other three stills still await review: the run makes the two approved stills' clips and waits.
    const second = await cli(ws.dir, ["run", "manifests/demo.yaml", "--emulate", "--json"]);
    assert.is(second.exitCode, 3, second.all);
    assert.is(lastJson(second.stdout).created, 2, second.all);

    const clips = [...resultStandings(ws.dir).keys()].filter((id) => id.startsWith("demo-clips-")).sort();
    assert.is(clips.length, 2);
    /** Where each surface tells a task is not current (all checked, then compared at once: a failure names every surface wrong). */
    const notCurrent: Record<string, string[]> = {};
    const notCurrentIn = (standings: Map<string, string>) => [...standings].filter(([, s]) => s !== "current").map(([id, s]) => `${id} ${s}`);

    // The run's own reports.
    const afterRun = resultStandings(ws.dir);
    assert.is(afterRun.size, 7);
    notCurrent["results.jsonl of the run"] = notCurrentIn(afterRun);

    // plan: nothing is `-` (no longer in the manifest); the two clips are `=`, three wait on review.
    const plan = await cli(ws.dir, ["plan", "manifests/demo.yaml", "--emulate", "--json"]);
    assert.is(plan.exitCode, 0, plan.all);
    const entries = (lastJson(plan.stdout) as { entries: { mark: string; id: string; job: string }[] }).entries;
    notCurrent["plan"] = entries.filter((e) => e.mark === "-").map((e) => `${e.id} -`);
    assert.equal(entries.filter((e) => e.job === "clips" && e.mark === "=").map((e) => e.id).sort(), clips);

    // status agrees with plan: no orphans, the seven tasks counted, the review line as plan's.
    const status = await cli(ws.dir, ["status", "manifests/demo.yaml", "--emulate", "--json"]);
    assert.is(status.exitCode, 0, status.all);
    const view = lastJson(status.stdout);
    notCurrent["status --json"] = [...view.orphaned, ...view.superseded].map((x: { id: string }) => x.id);
    assert.is(view.tasks, 7);
    assert.equal(view.review, { keyframes: { awaiting: 3, approved: 2, rejected: 0 }, clips: { waitingOnReview: 3 } });
    const text = await cli(ws.dir, ["status", "manifests/demo.yaml", "--emulate"]);
    assert.is(text.exitCode, 0, text.all);
    notCurrent["status"] = text.stdout.split("\n").filter((l) => /Orphaned|Superseded/.test(l));

    // `report` writes the reports again: the clips stay current there too.
    const report = await cli(ws.dir, ["report", "manifests/demo.yaml", "--emulate", "--json"]);
    assert.is(report.exitCode, 0, report.all);
    notCurrent["results.jsonl of report"] = notCurrentIn(resultStandings(ws.dir));
    const html = readFileSync(join(ws.dir, "outputs/demo-emulated/report.html"), "utf8");
    assert.match(html, /"standing":"current"/, "report.html's data names the tasks' standings");
    notCurrent["report.html"] = html.match(/"standing":"(?!current")[a-z]+"/g) ?? [];

    // prune would remove nothing: the approved stills' clips are not orphans.
    const prune = await cli(ws.dir, ["prune", "manifests/demo.yaml", "--emulate", "--json"]);
    assert.is(prune.exitCode, 0, prune.all);
    notCurrent["prune"] = (lastJson(prune.stdout).tasks as { id: string; standing: string }[]).map((x) => `${x.id} ${x.standing}`);

    assert.equal(notCurrent, Object.fromEntries(Object.keys(notCurrent).map((k) => [k, []])));
  } finally {
    ws.remove();
  }
});

t.run();
