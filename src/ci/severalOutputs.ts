// The Action's step outputs and job summary line when its `manifest` input names several
// manifests, run in one process (`omnibatch run a.yaml b.yaml`). The rule, as action.yml
// and docs/ci.md state it: `exit-code` and `outcome` are the worst manifest's (the CLI's
// exit code is already the worst, runManifests.worstExitCode); `pending` is true when any
// manifest stopped with work pending; `created`, `downloaded` and `failed` are sums;
// `spend` is the sum per currency (sumSpend: currencies never mix); `report`, `reports`, `lockfile` and `outputs`
// list each manifest's, one per line; `name` joins the names with `+` (the artifact's
// name); `manifests` is JSON with each manifest's own figures (also for one). Pure.

import type { RunSummary } from "../engine/RunEvent.js";
import { type Amount, amountOf, formatAmount, plus } from "../money/Money.js";
import { markdownCode, markdownText } from "../report/markdownText.js";
import { spendLine, type StepResult } from "./stepResult.js";

/** One manifest of the step: as the input named it, what its run printed, and its result for a scheduler. */
export interface ManifestRun {
  readonly manifest: string;
  readonly name?: string;
  readonly summary?: RunSummary;
  /** The manifest's own exit code (its summary's; the step's when its run printed none). */
  readonly exitCode: number;
  readonly result: StepResult;
}

/** The report a person opens: the HTML report, else the billing summary. */
export const mainReport = (reports: readonly string[]): string | undefined =>
  reports.find((r) => r.split(/[\\/]/).at(-1) === "report.html") ?? reports.find((r) => r.split(/[\\/]/).at(-1) === "billing.md") ?? reports[0];

/**
 * Cash per currency over several manifests (decimal strings), never adding across
 * currencies. "" (charges naming no currency, in a manifest that knows none) is the
 * account's currency, unnamed; the manifests of one step share one key, one account, so
 * when the others name exactly one currency, "" is counted in it (as money/charges.ts
 * counts unnamed charges within one manifest), else it stays apart.
 */
export const sumSpend = (spends: readonly (Readonly<Record<string, string>> | undefined)[]): Record<string, string> => {
  const named = new Set(spends.flatMap((s) => Object.keys(s ?? {})).filter((c) => c !== ""));
  const into = named.size === 1 ? [...named][0]! : "";
  const sums = new Map<string, Amount>();
  for (const spend of spends) {
    for (const [currency, amount] of Object.entries(spend ?? {})) {
      const key = currency === "" ? into : currency;
      const before = sums.get(key);
      sums.set(key, before === undefined ? amountOf(amount) : plus(before, amountOf(amount)));
    }
  }
  return Object.fromEntries([...sums].sort(([a], [b]) => (a < b ? -1 : 1)).map(([c, a]) => [c, formatAmount(a)]));
};

const icon = (r: StepResult): string => (r.ok ? (r.pending ? "⏳" : "✅") : "❌");

/** Each manifest's figures, the `manifests` output (JSON). */
export const manifestsJson = (runs: readonly ManifestRun[], shown: (path: string) => string): string =>
  JSON.stringify(
    runs.map((r) => {
      const s = r.summary;
      const report = s ? mainReport(s.reports) : undefined;
      return {
        manifest: r.manifest,
        name: r.name ?? "",
        outcome: r.result.outcome,
        "exit-code": r.exitCode,
        pending: r.result.pending,
        created: s?.created ?? 0,
        downloaded: s?.downloaded ?? 0,
        failed: s?.failures.length ?? 0,
        spend: spendLine(s?.spend),
        lockfile: s ? shown(s.lockfile) : "",
        report: report ? shown(report) : "",
      };
    }),
  );

/** The worst manifest: the first whose exit code is the step's, else the first not green, else the first. */
export const worstRun = (runs: readonly ManifestRun[], stepExitCode: number): ManifestRun =>
  runs.find((r) => r.exitCode === stepExitCode) ?? runs.find((r) => !r.result.ok) ?? runs[0]!;

/** The step's outputs for several manifests, but `committed` (see the header for the rule). */
export const combinedOutputs = (runs: readonly ManifestRun[], stepExitCode: number, shown: (path: string) => string): Record<string, string> => {
  const summaries = runs.flatMap((r) => (r.summary ? [r.summary] : []));
  const total = (f: (s: RunSummary) => number) => String(summaries.reduce((n, s) => n + f(s), 0));
  return {
    outcome: worstRun(runs, stepExitCode).result.outcome,
    pending: String(runs.some((r) => r.result.pending)),
    "exit-code": String(stepExitCode),
    created: total((s) => s.created),
    downloaded: total((s) => s.downloaded),
    failed: total((s) => s.failures.length),
    spend: spendLine(sumSpend(summaries.map((s) => s.spend))),
    report: summaries.flatMap((s) => mainReport(s.reports) ?? []).map(shown).join("\n"),
    reports: summaries.flatMap((s) => s.reports).map(shown).join("\n"),
    outputs: summaries.map((s) => shown(s.outputs)).join("\n"),
    lockfile: summaries.map((s) => shown(s.lockfile)).join("\n"),
    name: runs.map((r) => r.name ?? r.manifest.split("/").at(-1)!.replace(/\.ya?ml$/i, "")).join("+"),
    manifests: manifestsJson(runs, shown),
  };
};

/** The step's one line for several manifests: the worst's reason when red, else each one's outcome. */
export const combinedReason = (runs: readonly ManifestRun[], stepExitCode: number): string => {
  const worst = worstRun(runs, stepExitCode);
  if (!worst.result.ok) return `${worst.name ?? worst.manifest}: ${worst.result.reason}`;
  return `${runs.length} manifests: ${runs.map((r) => `${r.name ?? r.manifest} ${r.result.outcome}`).join(", ")}`;
};

/** The job summary's section for several manifests: the worst outcome, a row per manifest, each one's reason, the commit note. */
export const severalSummaryMarkdown = (runs: readonly ManifestRun[], stepExitCode: number, commitNote: string): string => {
  const worst = worstRun(runs, stepExitCode);
  const rows = runs.map((r) => {
    const s = r.summary;
    return `| ${markdownCode(r.manifest)}${r.name ? ` (${markdownText(r.name)})` : ""} | ${icon(r.result)} ${r.result.outcome} | ${s?.created ?? 0} | ${s?.downloaded ?? 0} | ${s?.failures.length ?? 0} | ${markdownText(spendLine(s?.spend))} |`;
  });
  return [
    `### omnibatch: ${icon(worst.result)} ${worst.result.outcome} (${runs.length} manifests)`,
    "",
    "| manifest | outcome | created | downloaded | failed | spend |",
    "|---|---|---|---|---|---|",
    ...rows,
    "",
    ...runs.map((r) => `- ${markdownText(r.name ?? r.manifest)}: ${markdownText(r.result.reason)}.`),
    "",
    ...(commitNote ? [`${markdownText(`${commitNote[0]!.toUpperCase()}${commitNote.slice(1)}`)}.`, ""] : []),
    "",
  ].join("\n");
};
