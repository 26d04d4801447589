// `omnibatch pull M.yaml [DIR] [--only JOB] [--where key=value]`: copies the results the
// lockfile records from the outputs store to a local folder, each verified by its
// sha256, so a person can look at them. Thin: the copying is run/pullResults.ts.

import { resolve } from "node:path";
import { isStoreUrl } from "../../fs/StoreUrl.js";
import { parseWhere } from "../../run/pullSelection.js";
import { defineCommand } from "../Command.js";
import { commonOptions } from "../commonOptions.js";
import { ExitCode } from "../../exit/ExitCode.js";
import { outputsOption } from "../outputsOption.js";
import { UsageError } from "../UsageError.js";
import { locationsFor, requireLockFile, shownPath } from "./status.js";

const list = (v: string | boolean | string[] | undefined): string[] => (Array.isArray(v) ? v : typeof v === "string" ? [v] : []);

export const pullCommand = defineCommand({
  name: "pull",
  summary: "Copy results from the outputs store (s3://...) to a local folder, verified by sha256.",
  usage: "omnibatch pull <manifest.yaml> [DIR] [--only JOB] [--where key=value] [--outputs URL] [--json]",
  description:
    "Copies every result the lockfile records from the manifest's outputs store (or --outputs URL)\n" +
    "into DIR (default: outputs/<name> beside the manifest), with the reports and each task's\n" +
    "task.json, so report.html opens locally. Each file is kept only if its sha256 is the one the\n" +
    "lockfile records; files already there with that sha256 are not copied again. Nothing is sent\n" +
    "to the service. Exit 0 when every selected result was copied or present, 1 when some are not\n" +
    "in the store or differ there (each named), 2 for a bad command line or an unusable store.",
  options: {
    only: { type: "string", value: "JOB", multiple: true, description: "Only this job's results (repeatable)." },
    where: { type: "string", value: "KEY=VALUE", multiple: true, description: "Only tasks whose matrix value matches, e.g. style=studio or product.sku=A-1 (repeatable: all must match)." },
    outputs: outputsOption,
    json: { ...commonOptions.json, description: "Print the counts and problems as one JSON object." },
  },
  positionals: { min: 1, max: 2, name: "manifest" },
  run: async (args, io) => {
    const manifest = args.positionals[0]!;
    const where = await locationsFor(manifest, io.cwd, false, args.values, "pull");
    if (!isStoreUrl(where.outputsDir)) {
      throw new UsageError({ command: "pull", message: `the outputs of ${manifest} are a folder (${shownPath(where.outputsDir, io.cwd)}), not a store: nothing to pull; give --outputs s3://bucket/prefix` });
    }
    const clauses = parseWhere(list(args.values.where));
    if ("problem" in clauses) throw new UsageError({ command: "pull", message: clauses.problem });
    const lock = await requireLockFile(where.lockfilePath, manifest, io.cwd, false, io.stderr);
    const dir = args.positionals[1] !== undefined ? resolve(io.cwd, args.positionals[1]) : resolve(where.file, "..", "outputs", where.name);
    const { openStoreSink } = await import("../../outputs/openStore.js");
    const { pullResults } = await import("../../run/pullResults.js");
    const sink = await openStoreSink(where.outputsDir, { env: io.env });
    try {
      const result = await pullResults(lock, sink, dir, { only: list(args.values.only), where: clauses }, where.lockfilePath);
      if (args.values.json) {
        io.stdout.write(`${JSON.stringify({ from: where.outputsDir, to: dir, ...result })}\n`);
      } else {
        io.stdout.write(
          `Pulled ${result.pulled} result(s) from ${where.outputsDir} into ${shownPath(dir, io.cwd)} (${result.present} already there, ${result.reports} report file(s)).\n`,
        );
        for (const p of result.problems) io.stdout.write(`  NOT PULLED ${p}\n`);
      }
      return result.problems.length > 0 ? ExitCode.TasksFailed : ExitCode.Ok;
    } finally {
      await sink.close();
    }
  },
});
