// When the CLI runs as a GitHub Actions step (GITHUB_ACTIONS=true), manifest and lockfile
// problems and failed tasks are also printed as workflow annotations, on stderr (the
// runner reads commands from both streams, and stdout stays clean for --json). The
// lines themselves are made by the pure functions in src/ci/annotations.ts.

import type { CommandIO } from "./Command.js";
import type { Diagnostic } from "../manifest/Diagnostic.js";
import type { RunSummary } from "../engine/RunEvent.js";
import { diagnosticAnnotations, failureAnnotations, lockfileAnnotation, type AnnotationBase } from "../ci/annotations.js";
import { inGitHubActions } from "../ci/workflowCommand.js";
import { serviceInEnv } from "../rules/serviceNames.js";

const baseOf = (io: CommandIO): AnnotationBase => ({
  cwd: io.cwd,
  ...(io.env["GITHUB_WORKSPACE"] ? { workspace: io.env["GITHUB_WORKSPACE"] } : {}),
});

const print = (io: CommandIO, lines: readonly string[]): void => {
  if (lines.length > 0) io.stderr.write(`${lines.join("\n")}\n`);
};

/** Diagnostics (errors or warnings) of a manifest, as annotations. */
export const annotateDiagnostics = (diagnostics: readonly Diagnostic[], io: CommandIO): void => {
  if (inGitHubActions(io.env)) print(io, diagnosticAnnotations(diagnostics, baseOf(io)));
};

const lockfileTags = new Set(["LockfileInvalid", "LockfileMissing", "LockfileBusy", "LockfileWriteError"]);

/** How a command failed, as annotations: every manifest problem at its place, a lockfile problem on the lockfile. */
export const annotateFailure = (error: unknown, io: CommandIO): void => {
  if (!inGitHubActions(io.env) || typeof error !== "object" || error === null) return;
  const e = error as { _tag?: unknown; diagnostics?: unknown; path?: unknown; message?: unknown };
  if (e._tag === "ManifestInvalid" && Array.isArray(e.diagnostics)) {
    annotateDiagnostics(e.diagnostics as Diagnostic[], io);
  } else if (typeof e._tag === "string" && lockfileTags.has(e._tag) && typeof e.path === "string" && typeof e.message === "string") {
    print(io, [lockfileAnnotation({ path: e.path, message: e.message }, baseOf(io))]);
  }
};

/**
 * After a run with failed or rejected tasks: a warning per task at the manifest line that
 * made it. The manifest is read again (no network) for the places; if it cannot be, the
 * warnings still name the task and reason, without a place.
 */
export const annotateRunFailures = async (manifest: string, summary: RunSummary, io: CommandIO): Promise<void> => {
  if (!inGitHubActions(io.env) || summary.failures.length === 0) return;
  const { loadManifest } = await import("../manifest/loadManifest.js");
  const m = await loadManifest(manifest, { cwd: io.cwd, service: serviceInEnv(io.env) }).catch(() => undefined);
  const tasks = new Map(m?.tasks.map((t) => [t.id, t.source]));
  const jobs = new Map(m?.jobs.map((j) => [j.id, j.source]));
  print(io, failureAnnotations(summary.failures, { task: (id) => tasks.get(id), job: (job) => jobs.get(job) }, baseOf(io)));
};
