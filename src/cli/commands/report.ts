// `omnibatch report M.yaml [--json]`: writes the reports again from the lockfile alone
// (no network, no API key) and says where they are.

import { chargesLabel } from "../../report/billingMarkdown.js";
import { writeReports } from "../../report/writeReports.js";
import { manifestDecisions } from "../../review/manifestDecisions.js";
import { isStoreUrl } from "../../fs/StoreUrl.js";
import { defineCommand } from "../Command.js";
import { outputsOption } from "../outputsOption.js";
import { commonOptions } from "../commonOptions.js";
import { ExitCode } from "../../exit/ExitCode.js";
import { emulateOption, locationsFor, requireLockFile, shownPath } from "./status.js";

export const reportCommand = defineCommand({
  name: "report",
  summary: "Write the reports again from the lockfile (report.html, results.jsonl, billing.*).",
  usage: "omnibatch report <manifest.yaml> [--emulate] [--outputs DIR|URL] [--json]",
  description:
    "Writes report.html, results.jsonl, billing.csv, billing.json and billing.md into the manifest's\n" +
    "outputs folder, a task.json beside each task's files and a metadata.jsonl in each job's folder,\n" +
    "from the lockfile and the manifest (no network, no API key), and appends the billing summary to\n" +
    "$GITHUB_STEP_SUMMARY when that is set. Totals are exact sums of the service's amounts.\n" +
    "With --emulate, from the emulated lockfile into the emulated outputs folder.",
  options: {
    emulate: emulateOption,
    json: { ...commonOptions.json, description: "Print the files written and the billing summary as one JSON object." },
    outputs: outputsOption,
  },
  positionals: { min: 1, max: 1, name: "manifest" },
  run: async (args, io) => {
    const manifest = args.positionals[0]!;
    const emulated = args.values.emulate === true;
    const where = await locationsFor(manifest, io.cwd, emulated, args.values, "report");
    if (where.manifestInvalid) {
      io.stderr.write(`omnibatch: note: ${manifest} has errors (see 'omnibatch validate ${manifest}'); reporting from its lockfile anyway.\n`);
    }
    const lock = await requireLockFile(where.lockfilePath, manifest, io.cwd, emulated, io.stderr);
    // As plan reads them: a task made of an approved output is current in the reports, not orphaned.
    const reviews = where.manifest ? manifestDecisions(where.manifest, emulated) : undefined;
    const input = { lock, manifestName: where.name, env: io.env, force: true, emulated, ...(where.manifest ? { manifest: where.manifest } : {}), ...(reviews ? { reviews } : {}) };
    let result: Awaited<ReturnType<typeof writeReports>>;
    if (isStoreUrl(where.outputsDir)) {
      // Outputs in a store: the reports are written beside the media there.
      const { openStoreSink } = await import("../../outputs/openStore.js");
      const { writeReportsToStore } = await import("../../report/storeReports.js");
      const sink = await openStoreSink(where.outputsDir, { env: io.env });
      try {
        result = await writeReportsToStore(input, sink);
      } finally {
        await sink.close();
      }
    } else {
      result = await writeReports({ ...input, outputsDir: where.outputsDir });
    }
    if (args.values.json) {
      const out = { files: result.files, summary: result.summary, nearing_deletion: result.deletions.length, ...(emulated ? { emulated: true } : {}) };
      io.stdout.write(`${JSON.stringify(out)}\n`);
      return ExitCode.Ok;
    }
    const lines = [
      `${emulated ? "EMULATED reports" : "Reports"} of ${where.name} (${result.summary.tasks} tasks, spent ${chargesLabel(result.summary)}${emulated ? ", not real" : ""}):`,
    ];
    for (const file of result.files) lines.push(`  ${shownPath(file, io.cwd)}`);
    if (result.stepSummary) lines.push(`Summary appended to ${result.stepSummary}.`);
    if (result.deletions.length > 0) {
      lines.push(`WARNING: ${result.deletions.length} result(s) not downloaded yet are deleted at the service within days: run 'omnibatch run ${manifest}'.`);
    }
    io.stdout.write(`${lines.join("\n")}\n`);
    return ExitCode.Ok;
  },
});
