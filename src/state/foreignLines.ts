// Lines of another manifest in a lockfile: a task line whose id does not begin with the
// file's `name` and the line's job (`<name>-<job>-…`, as every id a manifest makes), i.e.
// a line pasted or merged from another manifest's lockfile, or left from before the
// manifest was renamed.
// Such a line is kept as it is, never deleted. Records are matched to planned tasks by id
// only, and the id is the task's identity at the service (its external_task_id): a
// foreign line is taken as a planned task's paid work only when it has that very id (the
// same task at the service, which must not be paid again), never for its job or values.
// Its charges are history of this lockfile and count in spend to date (a budget never
// sees less than the file records as paid: a manifest renamed keeps its earlier spend).
// It is said, with its line, wherever a lockfile is read for a person (run, plan, status,
// report, prune, pull). Pure.


import { idNamesJob } from "./TaskLine.js";

export interface ForeignLine {
  /** 1-based line of the lockfile (0 when not known: a version-1 document's task past the first FOREIGN_NAMED). */
  readonly line: number;
  readonly id: string;
  readonly job: string;
}

/**
 * True when the task's id does not begin `<name>-<job>-` for this file's name and the
 * task's job (compared in place: it runs once per line of a large file). An id of the
 * manifest `demo-x` in the lockfile of `demo` begins `demo-x-<job>-`: foreign too.
 */
export const isForeign = (name: string, id: string, job: string): boolean =>
  !(
    id.startsWith(name) &&
    id.charCodeAt(name.length) === 45 /* - */ &&
    id.startsWith(job, name.length + 1) &&
    id.charCodeAt(name.length + 1 + job.length) === 45
  );

/**
 * What is wrong with a line that names no job when its id does not name one under the
 * file's `name` either (a line copied from another manifest's lockfile, where its job
 * was left out as its id told it): undefined when the job is known.
 */
export const unknownJobProblem = (name: string, line: { readonly id: string; readonly job?: string }): string | undefined =>
  line.job === undefined && !idNamesJob(name, line.id)
    ? `task ${line.id}: the line names no "job" and its id is not '${name}-<job>-…' (a line of another manifest's lockfile?): move it to that manifest's lockfile, or add its "job"`
    : undefined;

/** Up to this many lines are named in the warning (all are counted). */
export const FOREIGN_NAMED = 5;

/**
 * The warning for the foreign lines of `lockfile` (as shown to the user), or undefined
 * when there are none: each line named `file:line`, what it means, that it is kept.
 */
export const foreignLinesWarning = (lockfile: string, name: string, foreign: readonly ForeignLine[] | undefined): string | undefined => {
  if (foreign === undefined || foreign.length === 0) return undefined;
  const named = foreign
    .slice(0, FOREIGN_NAMED)
    .map((f) => `${lockfile}${f.line > 0 ? `:${f.line}` : ""}: task ${f.id} (job ${f.job})`)
    .join("; ");
  const more = foreign.length > FOREIGN_NAMED ? `; and ${foreign.length - FOREIGN_NAMED} more` : "";
  const one = foreign.length === 1;
  return (
    `${one ? "a line" : `${foreign.length} lines`} of another manifest (${one ? "its id is" : "their ids are"} not '${name}-<job>-…'): ${named}${more}. ` +
    `Kept as ${one ? "it is" : "they are"}, never deleted; ${one ? "its" : "their"} charges count in this manifest's spend to date. ` +
    `If ${one ? "it belongs" : "they belong"} to another manifest, move ${one ? "it" : "them"} to that manifest's lockfile.`
  );
};
