// Manifest problems, lockfile problems and failed tasks as GitHub annotations, so they
// show on the file (and line) in a pull request and on the run's page. Pure: data in,
// workflow-command lines out; the CLI prints them when GITHUB_ACTIONS=true.

import { isAbsolute, relative, resolve, sep } from "node:path";
import type { Diagnostic } from "../manifest/Diagnostic.js";
import { sortDiagnostics } from "../manifest/formatDiagnostics.js";
import type { SourcePos } from "../manifest/PlannedTask.js";
import { annotation } from "./workflowCommand.js";

/** Where files are shown from: the process's directory and the repository root GitHub checked out. */
export interface AnnotationBase {
  readonly cwd: string;
  /** $GITHUB_WORKSPACE; annotations name files relative to it (GitHub matches them to the diff). */
  readonly workspace?: string;
}

/** A path as GitHub wants it: relative to the repository root, with forward slashes; left absolute when outside it. */
export const annotationPath = (file: string, base: AnnotationBase): string => {
  const absolute = resolve(base.cwd, file);
  const root = base.workspace ?? base.cwd;
  const rel = relative(root, absolute);
  if (rel === "" || rel.startsWith("..") || isAbsolute(rel)) return absolute.split(sep).join("/");
  return rel.split(sep).join("/");
};

/** One line per diagnostic: `::error file=…,line=…,col=…::message` (or `::warning`). */
export const diagnosticAnnotations = (diagnostics: readonly Diagnostic[], base: AnnotationBase): string[] =>
  sortDiagnostics(diagnostics).map((d) =>
    annotation(d.severity, d.message, { file: annotationPath(d.file, base), line: d.line, col: d.col, title: "omnibatch: manifest" }),
  );

/** A lockfile that cannot be used (damaged, busy, missing): an error on the file itself, with the message's first line. */
export const lockfileAnnotation = (error: { readonly path: string; readonly message: string }, base: AnnotationBase): string =>
  annotation("error", error.message, { file: annotationPath(error.path, base), title: "omnibatch: lockfile" });

export interface FailedTask {
  readonly id: string;
  readonly job: string;
  readonly state: string;
  readonly code?: number;
  readonly message: string;
}

/**
 * A warning per failed or rejected task at the manifest line that made it: the task's
 * own place (its matrix entry or job) when the manifest still plans it, else its job's.
 * At most `limit` lines (GitHub shows only a few per step anyway); the rest are counted in one more.
 */
export const failureAnnotations = (
  failures: readonly FailedTask[],
  sources: { readonly task: (id: string) => SourcePos | undefined; readonly job: (job: string) => SourcePos | undefined },
  base: AnnotationBase,
  limit = 20,
): string[] => {
  const lines = failures.slice(0, limit).map((f) => {
    const at = sources.task(f.id) ?? sources.job(f.job);
    const what = `task ${f.id} (job ${f.job}) ${f.state}${f.code !== undefined ? ` (${f.code})` : ""}: ${f.message}`;
    return annotation("warning", what, {
      ...(at ? { file: annotationPath(at.file, base), line: at.line, col: at.col } : {}),
      title: "omnibatch: task failed",
    });
  });
  if (failures.length > limit) {
    lines.push(annotation("warning", `${failures.length - limit} more failed task(s): see results.jsonl`, { title: "omnibatch: task failed" }));
  }
  return lines;
};
