// `omnibatch report M.yaml [--json]`: writes the reports again from the lockfile alone
// (no network, no API key) and says where they are.

import { chargesLabel } from "../../report/billingMarkdown.js";
import { manifestLocations } from "../../report/manifestLocations.js";
import { writeReports } from "../../report/writeReports.js";
import { defineCommand } from "../Command.js";
import { commonOptions } from "../commonOptions.js";
import { ExitCode } from "../ExitCode.js";
import { requireLockFile, shownPath } from "./status.js";

export const reportCommand = defineCommand({
  name: "report",
  summary: "Write the reports again from the lockfile (results.jsonl, billing.*).",
  usage: "omnibatch report <manifest.yaml> [--json]",
  description:
    "Writes results.jsonl, billing.csv, billing.json and billing.md into the manifest's outputs\n" +
    "folder from the lockfile alone (no network, no API key), and appends the billing summary to\n" +
    "$GITHUB_STEP_SUMMARY when that is set. Totals are exact sums of the service's amounts.",
  options: { json: { ...commonOptions.json, description: "Print the files written and the billing summary as one JSON object." } },
  positionals: { min: 1, max: 1, name: "manifest" },
  run: async (args, io) => {
    const manifest = args.positionals[0]!;
    const where = await manifestLocations(manifest, io.cwd);
    if (where.manifestInvalid) {
      io.stderr.write(`omnibatch: note: ${manifest} has errors (see 'omnibatch validate ${manifest}'); reporting from its lockfile anyway.\n`);
    }
    const lock = await requireLockFile(where.lockfilePath, manifest, io.cwd);
    const result = await writeReports({ lock, outputsDir: where.outputsDir, manifestName: where.name, env: io.env });
    if (args.values.json) {
      io.stdout.write(`${JSON.stringify({ files: result.files, summary: result.summary, nearing_deletion: result.deletions.length })}\n`);
      return ExitCode.Ok;
    }
    const lines = [`Reports of ${where.name} (${result.summary.tasks} tasks, spent ${chargesLabel(result.summary)}):`];
    for (const file of result.files) lines.push(`  ${shownPath(file, io.cwd)}`);
    if (result.stepSummary) lines.push(`Summary appended to ${result.stepSummary}.`);
    if (result.deletions.length > 0) {
      lines.push(`WARNING: ${result.deletions.length} result(s) not downloaded yet are deleted at the service within days: run 'omnibatch run ${manifest}'.`);
    }
    io.stdout.write(`${lines.join("\n")}\n`);
    return ExitCode.Ok;
  },
});
