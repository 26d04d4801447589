// `omnibatch validate M.yaml`: the manifest checked as far as it can be without sending
// anything (with --check-urls, remote inputs are asked for too). Exit 0 valid (warnings
// allowed), 2 invalid.

import { defineCommand } from "../Command.js";
import { ExitCode } from "../../exit/ExitCode.js";
import { loadManifest, displayPath } from "../../manifest/loadManifest.js";
import { ManifestInvalid } from "../../manifest/Diagnostic.js";
import { formatDiagnostics } from "../../manifest/formatDiagnostics.js";
import { annotateDiagnostics, annotateFailure } from "../ciAnnotations.js";
import { commonOptions, serviceNameOf } from "../commonOptions.js";

export const validateCommand = defineCommand({
  name: "validate",
  summary: "Check a manifest: schema, templates, matrix, every spec rule, local files.",
  usage: "omnibatch validate <manifest.yaml> [--check-urls] [--service NAME] [--json]",
  description:
    "Parses the manifest, checks it against the schema, expands every job and runs every\n" +
    "rule of the service on every task, probing local images. Problems are printed as\n" +
    "file:line:col with the line shown. Model names are the service's (kling-image-o1; --service\n" +
    "or OMNIBATCH_SERVICE for a gateway with another name). Nothing is sent unless --check-urls is given.\n" +
    "Exit 0 when valid (warnings allowed), 2 when not.",
  options: {
    "check-urls": { type: "boolean", description: "Also ask the hosts of remote images and videos (HEAD / ranged GET, bounded time)." },
    json: { type: "boolean", description: "Print the result as one JSON object on stdout, nothing else." },
    service: commonOptions.service,
  },
  positionals: { min: 1, max: 1, name: "manifest" },
  run: async (args, io) => {
    const file = args.positionals[0]!;
    const json = args.values.json === true;
    try {
      const service = serviceNameOf(args.values, io.env);
      const m = await loadManifest(file, { checkUrls: args.values["check-urls"] === true, cwd: io.cwd, service });
      const jobs: { id: string; kind: string; upstream?: object; expected_tasks?: number; tasks?: number }[] = m.jobs.map((j) => ({
        id: j.id,
        kind: j.kind,
        ...(j.upstream
          ? { upstream: j.upstream, expected_tasks: m.expectedDownstreamCount(j.id) }
          : { tasks: m.tasks.filter((t) => t.job === j.id).length }),
      }));
      annotateDiagnostics(m.warnings, io);
      if (json) {
        io.stdout.write(`${JSON.stringify({ valid: true, manifest: m.file, tasks: m.tasks.length, jobs, diagnostics: m.warnings })}\n`);
        return ExitCode.Ok;
      }
      if (m.warnings.length) io.stderr.write(`${formatDiagnostics(m.warnings)}\n\n`);
      const waiting = jobs.filter((j) => j.upstream).map((j) => `${j.expected_tasks} expected in ${j.id}`);
      io.stdout.write(
        `${displayPath(m.file, io.cwd)}: valid: ${m.tasks.length} task(s) in ${jobs.length - waiting.length} job(s)` +
          `${waiting.length ? `, plus downstream ${waiting.join(", ")} once their upstream results exist` : ""}\n`,
      );
      return ExitCode.Ok;
    } catch (error) {
      if (json && error instanceof ManifestInvalid) {
        annotateFailure(error, io);
        io.stdout.write(`${JSON.stringify({ valid: false, manifest: file, diagnostics: error.diagnostics })}\n`);
        return ExitCode.Invalid;
      }
      throw error;
    }
  },
});
